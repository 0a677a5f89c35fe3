//! Verification at the gateway with a wallet (docs/wallets.md#verifying-with-a-wallet, for every kind of docs/kinds.md#credential-kinds): the
//! offer on the pending page (a same-device link and a QR code of one authorization
//! request URI asking for every kind the site accepts and the server has on) and the
//! response endpoint the wallet posts to. The answer goes through the transport-neutral
//! service [`crate::app::verification`], which the Digital Credentials API's endpoint
//! (docs/dc-api.md) calls too; this module only takes it off HTTP.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};
use serde::{Deserialize, Serialize};

use super::body::{wallet_body, FormBody};
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::app::verification::{self, Answer};
use crate::domain::presentation::{self, PresentationRequest};
use crate::domain::{InviteId, Kind, KindSet};
use crate::mdoc::KindAnchors;
use crate::store::GatewayInvite;

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
    verification::requested(&state.trust, gateway)
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
            let zk = state.zk.as_ref().and_then(|zk| zk.offer(gateway.zk));
            let fresh = PresentationRequest::new(gateway.min_age, now).with_zk(zk);
            state.store.open_request(id, fresh).await?
        }
    };
    let response_uri = presentation::response_uri(&state.gateway_url(id));
    let min_age = request.required_age(gateway.min_age);
    let uri_of = |request: &PresentationRequest| {
        presentation::authorization_request_uri(
            &state.wallet_scheme,
            &response_uri,
            request,
            kinds,
            min_age,
        )
    };
    let uri = uri_of(&request);
    Ok(Some(WalletOffer {
        qr_svg: qr_of_what_fits(&uri, &request, uri_of),
        uri,
        request,
        kinds,
    }))
}

/// The QR code: of the link itself when it fits one (~2.9 KB); else of the same request
/// (same state and nonce) asking less — its newest circuit only, then, unless proofs
/// are required, no proof — so that a wallet on another device can still answer. A
/// request offering proofs for three kinds is longer than a QR code holds
/// (docs/zk.md#zero-knowledge-proofs). Empty when nothing fits: the page then shows
/// its link only.
fn qr_of_what_fits(
    uri: &str,
    request: &PresentationRequest,
    uri_of: impl Fn(&PresentationRequest) -> String,
) -> String {
    if let Some(svg) = qr_svg(uri) {
        return svg;
    }
    let mut smaller = Vec::new();
    if let Some(zk) = &request.zk {
        if zk.circuits.len() > 1 {
            let newest = presentation::ZkOffer {
                circuits: zk.circuits[..1].to_vec(),
                required: zk.required,
            };
            smaller.push(request.clone().with_zk(Some(newest)));
        }
        if !zk.required {
            smaller.push(request.clone().with_zk(None));
        }
    }
    let fitting = smaller.iter().find_map(|r| qr_svg(&uri_of(r)));
    if fitting.is_none() {
        // Every reload would say it again: at debug level (the docs say when it happens).
        tracing::debug!(
            bytes = uri.len(),
            "the wallet request is too long for a QR code; the page shows its link only"
        );
    }
    fitting.unwrap_or_default()
}

/// An SVG QR code of `text`, without the XML prolog so it can sit inside HTML; `None`
/// when `text` is longer than a QR code holds.
fn qr_svg(text: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L)
        .or_else(|_| QrCode::new(text.as_bytes()));
    match code {
        Ok(code) => {
            let svg = code
                .render::<svg::Color<'_>>()
                .min_dimensions(256, 256)
                .quiet_zone(true)
                .build();
            Some(match svg.find("<svg") {
                Some(start) => svg[start..].to_owned(),
                None => svg,
            })
        }
        // Only a text longer than a QR code holds (~2.9 KB) fails.
        Err(_) => None,
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
/// verifies the invite (method: the credential's kind's name, e.g. `eu-av` or `photo-id`); a
/// refused one leaves it, and the request, as they were. Every rule is in docs/presentations.md#what-is-checked
/// and docs/kinds.md#credential-kinds.
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
        (status = 413, description = "Body larger than 2 MiB", body = ErrorBody),
        (status = 503, description = "A zero-knowledge proof while every proof checker is busy (Retry-After); the invite and its request are unchanged", body = ErrorBody),
    )
)]
pub async fn answer(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    form: Result<FormBody, ApiError>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let FormBody(form) = wallet_body(form)?;
    let id = answered_invite(path)?;
    let answer = WalletAnswer::from_form(&form);
    let answer = match &answer {
        Some(a) => Answer::Link {
            state: &a.state,
            vp_token: &a.vp_token,
        },
        None => Answer::MalformedLink,
    };
    state.verification().answer(&id, answer).await?;
    Ok(Json(AnswerAccepted {
        redirect_uri: state.gateway_url(&id),
    }))
}

/// The invite a wallet answer's path names; one that cannot exist is not found.
pub fn answered_invite(path: Result<Path<String>, PathRejection>) -> Result<InviteId, ApiError> {
    path.ok()
        .and_then(|Path(id)| InviteId::parse(&id))
        .ok_or_else(|| ErrorCode::InviteNotFound.into())
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
        let svg = qr_svg("av://authorize?response_type=vp_token&state=abc").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(!svg.contains("<?xml"));
        assert!(!svg.contains("<script"));
        assert_eq!(
            qr_svg(&"a".repeat(2954)),
            None,
            "longer than a QR code holds"
        );
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
