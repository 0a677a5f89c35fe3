//! Verification at the gateway with the EU Age Verification app (interface §7): the
//! offer on the pending page (a same-device link and a QR code of one authorization
//! request URI) and the response endpoint the wallet posts to. The checks of a
//! presentation are pure code in [`crate::mdoc`]; this module only wires them to HTTP
//! and the store. What every transport shares (the invite an answer is for, and the
//! acceptance) is here too; the Digital Credentials API's endpoint (§11) uses it.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use super::body::FormBody;
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::domain::presentation::{self, PresentationRequest};
use crate::domain::{InviteId, Status};
use crate::mdoc::{self, TrustAnchors};
use crate::receipt::{Presented, Transport};
use crate::store::{AnswerOutcome, GatewayInvite};

/// The server's EU AV configuration; `None` in [`super::App`] turns the method off.
#[derive(Debug, Clone)]
pub struct EuAv {
    pub trust_anchors: Arc<TrustAnchors>,
    /// Scheme of the same-device link, `av` for the EU's app.
    pub wallet_scheme: String,
}

/// What the pending page shows of a live request.
pub struct WalletOffer {
    /// The authorization request URI: the link's `href`, and the QR code's content.
    pub uri: String,
    /// The QR code as an inline SVG element (no script, no external resource).
    pub qr_svg: String,
    /// The live request itself, for the Digital Credentials API's requests.
    pub request: PresentationRequest,
}

/// The invite's live request (opening one if it has none) as a link and a QR code.
pub async fn offer(
    state: &AppState,
    eu_av: &EuAv,
    gateway: &GatewayInvite,
) -> Result<WalletOffer, crate::store::StoreError> {
    let id = &gateway.invite.id;
    let now = state.clock.now();
    // Reloads read; only the first visit (or one after 10 minutes) writes, and a visit
    // to a request an older release made without the DC API's secrets.
    let request = match state.store.live_request(id, now).await? {
        Some(live) if live.dc_api.is_some() => live,
        _ => {
            let fresh = PresentationRequest::new(gateway.min_age, now);
            state.store.open_request(id, fresh).await?
        }
    };
    let response_uri = presentation::response_uri(&state.gateway_url(id));
    let uri = presentation::authorization_request_uri(
        &eu_av.wallet_scheme,
        &response_uri,
        &request,
        request.required_age(gateway.min_age),
    );
    Ok(WalletOffer {
        qr_svg: qr_svg(&uri),
        uri,
        request,
    })
}

/// An SVG QR code of `text`, without the XML prolog so it can sit inside HTML.
fn qr_svg(text: &str) -> String {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L)
        .or_else(|_| QrCode::new(text.as_bytes()));
    match code {
        Ok(code) => {
            let svg = code
                .render::<svg::Color<'_>>()
                .min_dimensions(256, 256)
                .quiet_zone(true)
                .build();
            match svg.find("<svg") {
                Some(start) => svg[start..].to_owned(),
                None => svg,
            }
        }
        // Only a URI longer than a QR code holds (~2.9 KB) fails; ours are ~700 bytes.
        Err(e) => {
            tracing::error!(error = %e, "cannot render the QR code");
            String::new()
        }
    }
}

/// The wallet's answer (OpenID4VP 1.0 §8.2, `direct_post`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct WalletAnswer {
    /// The `state` of the request being answered.
    #[schema(min_length = 1)]
    pub state: String,
    /// JSON: `{"proof_of_age": ["<base64url DeviceResponse>"]}`.
    #[schema(min_length = 1)]
    pub vp_token: String,
}

/// Where the wallet sends the visitor next.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnswerAccepted {
    /// The invite's gateway page, which now sends the visitor back to the site.
    pub redirect_uri: String,
}

/// Wallet response endpoint (OpenID4VP)
///
/// The `response_uri` of the invite's presentation requests. An accepted Proof of Age
/// presentation verifies the invite (method `eu-av`); a refused one leaves it, and the
/// request, as they were. Every rule is in interface §7.
#[utoipa::path(
    post,
    path = "/gateway/{inviteId}/openid4vp",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    request_body(content = WalletAnswer, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Accepted: the invite is verified", body = AnswerAccepted),
        (status = 400, description = "Refused; the message names the reason", body = ErrorBody),
        (status = 404, description = "No such invite, or the method is not enabled", body = ErrorBody),
        (status = 409, description = "The invite has expired", body = ErrorBody),
        (status = 413, description = "Body larger than 64 KiB", body = ErrorBody),
    )
)]
pub async fn answer(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    FormBody(form): FormBody,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let answering = Answering::load(&state, path, Transport::OpenId4Vp).await?;
    let Some(answer) = WalletAnswer::from_form(&form) else {
        answering.count("malformed");
        return Err(ErrorCode::PresentationFormInvalid.into());
    };
    let request = answering.live_request(&state, &answer.state).await?;
    let response_uri = presentation::response_uri(&state.gateway_url(&answering.id));
    let client_id = presentation::client_id(&response_uri);
    let transcript = mdoc::session_transcript(&client_id, &request.nonce, &response_uri);
    let proof = answering.check(
        mdoc::device_response_bytes(&answer.vp_token)
            .and_then(|bytes| answering.verify(&bytes, &request, &transcript)),
    )?;
    answering.accept(&state, &request, proof).await
}

/// An answer to one of an invite's presentation requests, by any transport, on its way
/// through the rules every transport shares (interface §7).
pub struct Answering {
    pub eu_av: EuAv,
    pub id: InviteId,
    pub gateway: GatewayInvite,
    pub now: crate::clock::UnixTime,
    /// How the answer came: the receipt and the metrics say so.
    pub transport: Transport,
    metrics: Arc<crate::metrics::Metrics>,
}

impl Answering {
    /// The invite the path names: 404 when the method is off or there is no such
    /// invite, 409 when it has expired.
    pub async fn load(
        state: &AppState,
        path: Result<Path<String>, PathRejection>,
        transport: Transport,
    ) -> Result<Self, ApiError> {
        let eu_av = state.eu_av.clone().ok_or(ErrorCode::EuAvDisabled)?;
        let id = path
            .ok()
            .and_then(|Path(id)| InviteId::parse(&id))
            .ok_or(ErrorCode::InviteNotFound)?;
        let gateway = state
            .store
            .gateway_invite(&id)
            .await?
            .ok_or(ErrorCode::InviteNotFound)?;
        let now = state.clock.now();
        if gateway.invite.status_at(now) == Status::Expired {
            return Err(ErrorCode::InviteExpired.into());
        }
        Ok(Self {
            eu_av,
            id,
            gateway,
            now,
            transport,
            metrics: state.metrics.clone(),
        })
    }

    /// Counts this answer in `agegate_presentations_total` (`accepted`, or a refusal's
    /// word).
    pub fn count(&self, outcome: &str) {
        self.metrics
            .presentation("eu-av", self.transport.as_str(), outcome);
    }

    /// The live request of this invite that `request_state` names.
    pub async fn live_request(
        &self,
        state: &AppState,
        request_state: &str,
    ) -> Result<PresentationRequest, ApiError> {
        let live = state
            .store
            .request(&self.id, request_state)
            .await?
            .filter(|r| r.is_live(self.now));
        live.ok_or_else(|| {
            self.count("not_live");
            ErrorCode::PresentationStateNotLive.into()
        })
    }

    /// Every check of §7 on the DeviceResponse, bound by `session_transcript`.
    pub fn verify(
        &self,
        device_response: &[u8],
        request: &PresentationRequest,
        session_transcript: &[u8],
    ) -> Result<mdoc::AgeProof, mdoc::PresentationError> {
        let expected = mdoc::Expected {
            session_transcript,
            min_age: request.required_age(self.gateway.min_age).get(),
            now: self.now,
        };
        mdoc::verify_device_response(device_response, &expected, &self.eu_av.trust_anchors)
    }

    /// A refusal, logged, as the API's error.
    pub fn check<T>(&self, result: Result<T, mdoc::PresentationError>) -> Result<T, ApiError> {
        result.map_err(|reason| {
            tracing::info!(invite_id = %self.id, %reason, "presentation refused");
            self.count(reason.outcome());
            ApiError::Refused(reason)
        })
    }

    /// A verified presentation: the request is used up and the invite verified, in one
    /// transaction (single use across transports); 200 with where the visitor goes next.
    pub async fn accept(
        &self,
        state: &AppState,
        request: &PresentationRequest,
        proof: mdoc::AgeProof,
    ) -> Result<Json<AnswerAccepted>, ApiError> {
        let id = &self.id;
        let evidence = state.evidence(
            request.required_age(self.gateway.min_age),
            Some(Presented {
                doc_type: mdoc::DOC_TYPE.to_owned(),
                issuer_anchor: proof.issuer_anchor,
                transport: self.transport,
                nonce: request.nonce.clone(),
            }),
        );
        let outcome = state
            .store
            .answer_request(id, &request.state, evidence, self.now)
            .await?;
        self.count(match outcome {
            AnswerOutcome::Verified(_) | AnswerOutcome::AlreadyVerified(_) => "accepted",
            AnswerOutcome::NotLive => "not_live",
            AnswerOutcome::NotFound | AnswerOutcome::Expired => "invite_gone",
        });
        match outcome {
            AnswerOutcome::Verified(_) => {
                state.metrics.verified(crate::domain::VerifyMethod::EuAv);
                tracing::info!(invite_id = %id, age_over = proof.age_over, "invite verified with a wallet");
                state.deliveries.notify_one();
            }
            AnswerOutcome::AlreadyVerified(_) => {}
            AnswerOutcome::NotFound => return Err(ErrorCode::InviteNotFound.into()),
            AnswerOutcome::Expired => return Err(ErrorCode::InviteExpired.into()),
            // Another node (or transport) accepted this state a moment ago: single use.
            AnswerOutcome::NotLive => return Err(ErrorCode::PresentationStateNotLive.into()),
        }
        Ok(Json(AnswerAccepted {
            redirect_uri: state.gateway_url(id),
        }))
    }
}

impl WalletAnswer {
    /// `state` and `vp_token` from the decoded form fields (the first of each).
    fn from_form(fields: &[(String, String)]) -> Option<Self> {
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        Some(Self {
            state: field("state")?,
            vp_token: field("vp_token")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qr_codes_are_inline_svg_without_a_prolog() {
        let svg = qr_svg("av://?response_type=vp_token&state=abc");
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(!svg.contains("<?xml"));
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn answers_need_state_and_vp_token() {
        let f = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
        };
        assert!(WalletAnswer::from_form(&f(&[("state", "s"), ("vp_token", "{}")])).is_some());
        assert!(WalletAnswer::from_form(&f(&[("state", "s")])).is_none());
        assert!(WalletAnswer::from_form(&f(&[("state", ""), ("vp_token", "{}")])).is_none());
    }
}
