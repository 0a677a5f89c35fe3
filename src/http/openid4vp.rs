//! Verification at the gateway with a wallet (docs/wallets.md#verifying-with-a-wallet, for every kind of docs/kinds.md#credential-kinds): the
//! offer on the pending page (a same-device link and a QR code of one authorization
//! request URI asking for every kind the site accepts and the server has on) and the
//! response endpoint the wallet posts to. The answer goes through the transport-neutral
//! service [`crate::app::verification`], which the Digital Credentials API's endpoint
//! (docs/dc-api.md) calls too; this module only takes it off HTTP.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use qrcode::{Color, EcLevel, QrCode};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

use super::admission::ZkAdmission;
use super::body::{wallet_body, FormBody};
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::app::verification::{self, Answer};
use crate::app::wallet_requests::Opened;
use crate::domain::presentation::{self, PresentationRequest};
use crate::domain::{InviteId, Kind, KindSet};
use crate::mdoc::KindAnchors;
use crate::store::GatewayInvite;

/// One wallet link as the pending page shows it.
pub struct LinkOffer {
    /// The authorization request URI: the link's `href`, and the QR code's content.
    pub uri: String,
    /// The QR code as an inline SVG element (no script, no external resource); empty
    /// when the link is longer than a QR code holds.
    pub qr_svg: String,
}

impl LinkOffer {
    fn of(uri: String) -> Self {
        let qr_svg = qr_svg(&uri).unwrap_or_default();
        if qr_svg.is_empty() {
            // Every reload would say it again: at debug level.
            tracing::debug!(bytes = uri.len(), "a wallet link is too long for a QR code");
        }
        Self { uri, qr_svg }
    }
}

/// What the pending page shows of a live request.
pub struct WalletOffer {
    /// Section 7's unsigned link by value (the EU Age Verification app); `None` under
    /// `--wallet-links reference` and for a site that requires a zero-knowledge proof,
    /// which that link never offers.
    pub value: Option<LinkOffer>,
    /// The signed link by reference (EUDI wallets, Multipaz); `None` without a signing
    /// identity or under `--wallet-links value`.
    pub reference: Option<LinkOffer>,
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

/// The invite's live request (opening one if it has none) as its links and QR codes;
/// `None` when the site accepts no kind the server has on.
pub async fn offer(
    state: &AppState,
    gateway: &GatewayInvite,
) -> Result<Option<WalletOffer>, crate::store::StoreError> {
    let requests = state.wallet_requests();
    let Some(Opened { request, kinds }) = requests.live(gateway).await? else {
        return Ok(None);
    };
    let id = &gateway.invite.id;
    let links = state.wallet_links;
    let signing = state.dc_api.signer.is_some();
    // Without a signing identity the by-value link is the only one there can be.
    // A site that requires a proof (with circuits loaded) has nothing to ask by value.
    let proof_required = request.zk.as_ref().is_some_and(|zk| zk.required);
    let show_value = (links.by_value() || !signing) && !proof_required;
    let value = show_value.then(|| {
        let response_uri = presentation::response_uri(&state.gateway_url(id));
        LinkOffer::of(presentation::authorization_request_uri(
            &state.wallet_scheme,
            &response_uri,
            &request,
            kinds,
            request.required_age(gateway.min_age),
        ))
    });
    let reference = links
        .by_reference()
        .then(|| requests.reference_link(&state.signed_wallet_scheme, id, &request))
        .flatten()
        .map(LinkOffer::of);
    Ok(Some(WalletOffer {
        value,
        reference,
        request,
        kinds,
    }))
}

/// An SVG QR code of `text` (no XML prolog, so it can sit inside HTML); `None` when
/// `text` is longer than a QR code holds. The dark modules are one stroked path, a row
/// at a time: `M{x} {y}.5h{run}m{gap} 0h{run}…` in module units, with a quiet zone of 4.
/// A link for five kinds makes a QR code of about 160 modules a side: a rectangle per
/// module made 86 KB (17 KB compressed), these runs make a third of that.
fn qr_svg(text: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L)
        .or_else(|_| QrCode::new(text.as_bytes()))
        // Only a text longer than a QR code holds (~2.9 KB) fails.
        .ok()?;
    let width = code.width();
    let colors = code.to_colors();
    const QUIET: usize = 4;
    let mut path = String::with_capacity(width * width / 2);
    for (y, row) in colors.chunks(width).enumerate() {
        // Where the pen is on this row; `None` before its first run.
        let mut pen: Option<usize> = None;
        let mut x = 0;
        while x < width {
            if row[x] != Color::Dark {
                x += 1;
                continue;
            }
            let start = x;
            while x < width && row[x] == Color::Dark {
                x += 1;
            }
            let _ = match pen {
                None => write!(path, "M{} {}.5h{}", start + QUIET, y + QUIET, x - start),
                Some(at) => write!(path, "m{} 0h{}", start - at, x - start),
            };
            pen = Some(x);
        }
    }
    let size = width + 2 * QUIET;
    Some(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {size}\" \
         width=\"256\" height=\"256\" shape-rendering=\"crispEdges\">\
         <rect width=\"{size}\" height=\"{size}\" fill=\"#fff\"/>\
         <path stroke=\"#000\" d=\"{path}\"/></svg>"
    ))
}

/// The wallet's answer (OpenID4VP 1.0 section 8.2, `direct_post`); an answer to a
/// signed request by reference (`direct_post.jwt`) instead has one field, `response`,
/// a JWE whose plaintext holds `state` and `vp_token` (docs/wallets.md#signed-requests-by-reference).
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
    admission: ZkAdmission,
    form: Result<FormBody, ApiError>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let body = wallet_body(form)?;
    let id = answered_invite(path)?;
    let form = admission.decode(move || body.fields()).await?;
    let answer = WalletAnswer::from_form(&form);
    let encrypted = form.iter().find(|(k, _)| k == "response").map(|(_, v)| v);
    let answer = match (encrypted, &answer) {
        (Some(response), _) => Answer::ByReference { response },
        (None, Some(a)) => Answer::Link {
            state: &a.state,
            vp_token: &a.vp_token,
        },
        (None, None) => Answer::MalformedLink,
    };
    state
        .verification()
        .on_lane(admission.lane())
        .answer(&id, answer)
        .await?;
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
        assert!(svg.len() < 6000, "{}", svg.len());
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
