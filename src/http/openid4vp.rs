//! Verification at the gateway with a wallet (docs/wallets.md#verifying-with-a-wallet, for every kind of docs/wallets.md#credential-kinds): the
//! offer on the pending page (a same-device link and a QR code of one authorization
//! request URI asking for every kind the site accepts and the server has on) and the
//! response endpoint the wallet posts to. The checks of a
//! presentation are pure code in [`crate::mdoc`]; this module only wires them to HTTP
//! and the store. What every transport shares (the invite an answer is for, and the
//! acceptance) is here too; the Digital Credentials API's endpoint (docs/dc-api.md) uses it.

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
use crate::domain::{InviteId, Kind, KindSet, Status, VerifyMethod};
use crate::mdoc::{self, KindAnchors};
use crate::receipt::{Presented, Transport};
use crate::store::{AnswerOutcome, GatewayInvite};

/// What the pending page shows of a live request.
pub struct WalletOffer {
    /// The authorization request URI: the link's `href`, and the QR code's content.
    pub uri: String,
    /// The QR code as an inline SVG element (no script, no external resource).
    pub qr_svg: String,
    /// The live request itself, for the Digital Credentials API's requests.
    pub request: PresentationRequest,
    /// The kinds asked for (the site accepts them and the server has them on).
    pub kinds: KindSet,
}

impl WalletOffer {
    /// Only the EU's app can answer: the page names it.
    pub fn eu_av_only(&self) -> bool {
        self.kinds == KindSet::one(Kind::EU_AV)
    }

    /// What a visitor may hold, for the page.
    pub fn titles(&self) -> Vec<&'static str> {
        self.kinds.iter().map(|k| k.info().title).collect()
    }
}

/// The kinds an invite's wallet requests ask for now: those its site accepts under the
/// anchors the server holds (empty: no wallet method for this site, the page of a site without one).
pub fn requested(state: &AppState, gateway: &GatewayInvite) -> KindAnchors {
    state
        .trust
        .current()
        .anchors
        .restricted_to(gateway.accept.kinds())
}

/// The invite's live request (opening one if it has none) as a link and a QR code;
/// `None` when the site accepts no kind the server has on.
pub async fn offer(
    state: &AppState,
    gateway: &GatewayInvite,
) -> Result<Option<WalletOffer>, crate::store::StoreError> {
    let kinds = requested(state, gateway).on();
    if kinds.is_empty() {
        return Ok(None);
    }
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
        &state.wallet_scheme,
        &response_uri,
        &request,
        kinds,
        request.required_age(gateway.min_age),
    );
    Ok(Some(WalletOffer {
        qr_svg: qr_svg(&uri),
        uri,
        request,
        kinds,
    }))
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

/// The wallet's answer (OpenID4VP 1.0 section 8.2, `direct_post`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct WalletAnswer {
    /// The `state` of the request being answered.
    #[schema(min_length = 1)]
    pub state: String,
    /// JSON: `{"<credential id>": ["<base64url DeviceResponse>"]}`, the id one of the
    /// request's (`proof_of_age`, `pid`, `mdl`).
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
/// The `response_uri` of the invite's presentation requests. An accepted presentation
/// verifies the invite (method: the credential's kind, `eu-av`, `eudi-pid` or `mdl`); a
/// refused one leaves it, and the request, as they were. Every rule is in docs/wallets.md#what-is-checked
/// and docs/wallets.md#credential-kinds.
#[utoipa::path(
    post,
    path = "/gateway/{inviteId}/openid4vp",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    request_body(content = WalletAnswer, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Accepted: the invite is verified", body = AnswerAccepted),
        (status = 400, description = "Refused; the message names the reason", body = ErrorBody),
        (status = 404, description = "No such invite, or its site accepts no credential kind the server has on", body = ErrorBody),
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
        answering.count(None, "malformed");
        return Err(ErrorCode::PresentationFormInvalid.into());
    };
    let request = answering.live_request(&state, &answer.state).await?;
    let response_uri = presentation::response_uri(&state.gateway_url(&answering.id));
    let client_id = presentation::client_id(&response_uri);
    let transcript = mdoc::session_transcript(&client_id, &request.nonce, &response_uri);
    let proof = answering.check(
        mdoc::device_response_bytes(&answer.vp_token, &answering.anchors)
            .map_err(Refusal::from)
            .and_then(|(kind, bytes)| answering.verify(&bytes, &request, &transcript, Some(kind))),
    )?;
    answering.accept(&state, &request, proof).await
}

/// An answer to one of an invite's presentation requests, by any transport, on its way
/// through the rules every transport shares (docs/wallets.md#what-is-checked).
pub struct Answering {
    /// The kinds the answer may be, under their anchors: those the site accepts and the
    /// server has on now.
    pub anchors: KindAnchors,
    pub id: InviteId,
    pub gateway: GatewayInvite,
    pub now: crate::clock::UnixTime,
    /// How the answer came: the receipt and the metrics say so.
    pub transport: Transport,
    metrics: Arc<crate::metrics::Metrics>,
}

impl Answering {
    /// The invite the path names: 404 when there is no such invite or its site accepts
    /// no kind the server has on, 409 when it has expired.
    pub async fn load(
        state: &AppState,
        path: Result<Path<String>, PathRejection>,
        transport: Transport,
    ) -> Result<Self, ApiError> {
        let id = path
            .ok()
            .and_then(|Path(id)| InviteId::parse(&id))
            .ok_or(ErrorCode::InviteNotFound)?;
        let gateway = state
            .store
            .gateway_invite(&id)
            .await?
            .ok_or(ErrorCode::InviteNotFound)?;
        let anchors = requested(state, &gateway);
        if anchors.on().is_empty() {
            return Err(ErrorCode::WalletOff.into());
        }
        let now = state.clock.now();
        if gateway.invite.status_at(now) == Status::Expired {
            return Err(ErrorCode::InviteExpired.into());
        }
        Ok(Self {
            anchors,
            id,
            gateway,
            now,
            transport,
            metrics: state.metrics.clone(),
        })
    }

    /// Counts this answer in `agegate_presentations_total` (`accepted`, or a refusal's
    /// word) under `kind`; when the answer never said which, the one kind asked for,
    /// or `unknown` when several were.
    pub fn count(&self, kind: Option<Kind>, outcome: &str) {
        let asked = self.anchors.on();
        let single = (asked.len() == 1).then(|| asked.iter().next()).flatten();
        let kind = kind.or(single).map_or("unknown", Kind::name);
        self.metrics
            .presentation(kind, self.transport.as_str(), outcome);
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
            self.count(None, "not_live");
            ErrorCode::PresentationStateNotLive.into()
        })
    }

    /// Every check of docs/wallets.md#what-is-checked on the DeviceResponse, bound by `session_transcript`; when the
    /// answer named its credential (`kind`), only a document of that kind counts.
    pub fn verify(
        &self,
        device_response: &[u8],
        request: &PresentationRequest,
        session_transcript: &[u8],
        kind: Option<Kind>,
    ) -> Result<mdoc::AgeProof, Refusal> {
        let expected = mdoc::Expected {
            session_transcript,
            min_age: request.required_age(self.gateway.min_age).get(),
            now: self.now,
        };
        let anchors = match kind {
            Some(kind) => self.anchors.only(kind),
            None => self.anchors.clone(),
        };
        mdoc::verify_device_response(device_response, &expected, &anchors)
            .map_err(|reason| Refusal { kind, reason })
    }

    /// A refusal, logged and counted, as the API's error.
    pub fn check<T>(&self, result: Result<T, impl Into<Refusal>>) -> Result<T, ApiError> {
        result.map_err(|refusal| {
            let Refusal { kind, reason } = refusal.into();
            tracing::info!(invite_id = %self.id, %reason, "presentation refused");
            self.count(kind, reason.outcome());
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
                kind: proof.kind,
                issuer_anchor: proof.issuer_anchor,
                transport: self.transport,
                nonce: request.nonce.clone(),
            }),
        );
        let outcome = state
            .store
            .answer_request(id, &request.state, evidence, self.now)
            .await?;
        self.count(
            Some(proof.kind),
            match outcome {
                AnswerOutcome::Verified(_) | AnswerOutcome::AlreadyVerified(_) => "accepted",
                AnswerOutcome::NotLive => "not_live",
                AnswerOutcome::NotFound | AnswerOutcome::Expired => "invite_gone",
            },
        );
        match outcome {
            AnswerOutcome::Verified(_) => {
                state.metrics.verified(VerifyMethod::Wallet(proof.kind));
                tracing::info!(invite_id = %id, kind = %proof.kind, age_over = proof.age_over, "invite verified with a wallet");
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

/// A presentation refused, with its kind when the answer named it (for the metrics).
pub struct Refusal {
    pub kind: Option<Kind>,
    pub reason: mdoc::PresentationError,
}

impl From<mdoc::PresentationError> for Refusal {
    fn from(reason: mdoc::PresentationError) -> Self {
        Self { kind: None, reason }
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
        let svg = qr_svg("av://authorize?response_type=vp_token&state=abc");
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
