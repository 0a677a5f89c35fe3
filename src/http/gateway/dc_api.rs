//! The W3C Digital Credentials API at the gateway (docs/dc-api.md): the requests the
//! pending page hands its script (R1, OpenID4VP over the DC API; R2, ISO/IEC 18013-7
//! Annex C), the endpoint the script posts the wallet's answer to, and the tiny status
//! the script polls so the page moves on by itself. The cryptography is the pure
//! [`crate::dcapi`]; opening the answer and the checks of its DeviceResponse are the
//! link's service ([`crate::app::verification`], docs/presentations.md#what-is-checked).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::app::verification::Answer;
use crate::dcapi::request;
use crate::dcapi::{DcApiRequests, ItemRequest, RequestInputs, RequestSigner, ZkAsk};
use crate::domain::presentation;
use crate::domain::{DcApiSecrets, InviteId, KindSet, MinAge, PresentationRequest, Status};
use crate::http::admission::ZkAdmission;
use crate::http::body::{wallet_body, JsonBody, RequestBody};
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::openid4vp::{answered_invite, AnswerAccepted};
use crate::http::AppState;

/// The channel's configuration: the origin wallets bind answers to, and in signed mode
/// (`--dc-api-signing-key`/`-cert`) the verifier's signing identity.
#[derive(Debug, Clone)]
pub struct DcApi {
    /// The origin of `--public-url` as a browser serializes it: `scheme://host[:port]`,
    /// the default port left out. Never taken from a request.
    pub origin: String,
    pub signer: Option<RequestSigner>,
}

impl DcApi {
    pub fn new(public_url: &str, signer: Option<RequestSigner>) -> Self {
        let origin = url::Url::parse(public_url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| public_url.to_owned());
        Self { origin, signer }
    }

    /// R1 and R2 of a live request for `kinds`: the same bytes on every node and every
    /// reload (while the site accepts, and the server trusts, the same kinds).
    fn requests(
        &self,
        request: &PresentationRequest,
        secrets: &DcApiSecrets,
        kinds: KindSet,
        age: MinAge,
    ) -> DcApiRequests {
        let claim = age.claim();
        // One docRequest per docType, as the DCQL query has one credential query each.
        let items: Vec<ItemRequest<'_>> = kinds
            .iter()
            .flat_map(|k| {
                let info = k.info();
                info.doc_types.iter().map(|d| ItemRequest {
                    doc_type: d.doc_type,
                    namespace: info.namespace,
                    claim: &claim,
                })
            })
            .collect();
        let circuits = request
            .zk
            .as_ref()
            .map(presentation::offered_circuits)
            .unwrap_or_default();
        let zk = request
            .zk
            .as_ref()
            .filter(|_| !circuits.is_empty())
            .map(|offer| ZkAsk {
                circuits: &circuits,
                required: offer.required,
            });
        let inputs = RequestInputs {
            origin: &self.origin,
            nonce: &request.nonce,
            dcql_query: &presentation::dcql_query_value(kinds, age, request.zk.as_ref()),
            client_metadata: &presentation::client_metadata_value(),
            items: &items,
            key: &secrets.response_key,
            encryption_nonce: secrets.encryption_nonce.as_bytes(),
            zk,
        };
        request::build(&inputs, self.signer.as_ref())
    }
}

/// What the pending page carries for its script.
pub struct PageOffer {
    /// `{"state", "digital": {"requests": [R1, R2]}}`, fit to sit in a `<script>` block.
    pub request_json: String,
    /// `{public-url}/gateway/{inviteId}/dc-api`.
    pub endpoint: String,
    /// `{public-url}/gateway/{inviteId}/status`.
    pub status_url: String,
    /// Milliseconds until the request stops being live, when the script reloads the
    /// page for a new one.
    pub renew_in_ms: i64,
}

/// The page's offer of `request` (which must have its secrets) for `kinds` at `now`.
pub fn page_offer(
    state: &AppState,
    id: &InviteId,
    request: &PresentationRequest,
    kinds: KindSet,
    site_min_age: MinAge,
    now: crate::clock::UnixTime,
) -> Option<PageOffer> {
    let secrets = request.dc_api.as_ref()?;
    let requests =
        state
            .dc_api
            .requests(request, secrets, kinds, request.required_age(site_min_age));
    let page_request = json!({"state": request.state, "digital": requests.digital()});
    let gateway = state.gateway_url(id);
    Some(PageOffer {
        request_json: script_json(&page_request),
        endpoint: format!("{gateway}/dc-api"),
        status_url: format!("{gateway}/status"),
        renew_in_ms: (request.expires_at - now).max(0).saturating_mul(1000),
    })
}

/// JSON to embed in a `<script type="application/json">` element, whose text the HTML
/// parser does not unescape: `<`, `>` and `&` (which JSON allows only inside strings)
/// become `\u` escapes, so no `</script>` or comment can end the element early.
pub fn script_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page script's POST: `credential.protocol` and `credential.data` as the browser
/// gave them, with the `state` of the page's request.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct DcApiAnswer {
    /// The `state` of the request on the page.
    pub state: String,
    /// `openid4vp-v1-unsigned`, `openid4vp-v1-signed` or `org-iso-mdoc`.
    pub protocol: String,
    /// The wallet's answer: `{"response": "<JWE>"}` (OpenID4VP) or `{"response":
    /// "<base64url HPKE envelope>"}` (Annex C).
    #[schema(value_type = Object)]
    pub data: Value,
}

impl RequestBody for DcApiAnswer {
    const TYPE_ERROR: ErrorCode = ErrorCode::DcApiBodyInvalid;
}

/// Wallet response endpoint (Digital Credentials API)
///
/// Where the pending page's script posts what `navigator.credentials.get` returned. The
/// answer is decrypted with the request's key, bound to the public URL's origin, and
/// then checked exactly as the OpenID4VP endpoint's (docs/presentations.md#what-is-checked, docs/dc-api.md#the-answers): accepted,
/// it verifies the invite (method: the credential's kind) and uses the request up for
/// every transport.
#[utoipa::path(
    post,
    path = "/gateway/{inviteId}/dc-api",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    request_body(content = DcApiAnswer, content_type = "application/json"),
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
    answer: Result<JsonBody<DcApiAnswer>, ApiError>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let JsonBody(answer) = wallet_body(answer)?;
    let id = answered_invite(path)?;
    let answer = Answer::DcApi {
        state: &answer.state,
        protocol: &answer.protocol,
        data: &answer.data,
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

/// Where an invite stands, for the page's script.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InviteProgress {
    pub status: ProgressStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProgressStatus {
    Pending,
    Verified,
    Expired,
}

/// Invite progress
///
/// Whether the invite is still pending: the gateway page's script polls this (instead of
/// reloading itself) so it moves on within seconds of a verification made elsewhere,
/// without ever reloading while a wallet call is open.
#[utoipa::path(
    get,
    path = "/gateway/{inviteId}/status",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    responses(
        (status = 200, description = "The invite's status", body = InviteProgress),
        (status = 404, description = "No such invite", body = ErrorBody),
    )
)]
pub async fn progress(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = path
        .ok()
        .and_then(|Path(id)| InviteId::parse(&id))
        .ok_or(ErrorCode::InviteNotFound)?;
    let gateway = state
        .reads
        .gateway_invite(&id)
        .await?
        .ok_or(ErrorCode::InviteNotFound)?;
    let status = match gateway.invite.status_at(state.clock.now()) {
        Status::Pending => ProgressStatus::Pending,
        Status::Verified => ProgressStatus::Verified,
        Status::Expired => ProgressStatus::Expired,
    };
    let headers = [(header::CACHE_CONTROL, "no-store")];
    Ok((headers, Json(InviteProgress { status })).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_written_as_browsers_write_them() {
        let origin = |url| DcApi::new(url, None).origin;
        assert_eq!(origin("https://age.example"), "https://age.example");
        assert_eq!(
            origin("https://age.example:443/base"),
            "https://age.example"
        );
        assert_eq!(
            origin("https://age.example:8443/x"),
            "https://age.example:8443"
        );
        assert_eq!(origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(origin("http://Age.Example:80"), "http://age.example");
        assert_eq!(
            origin("https://bücher.example"),
            "https://xn--bcher-kva.example"
        );
    }

    #[test]
    fn script_json_cannot_end_its_element() {
        let v = json!({"a": "</script><!-- & \u{2028}"});
        let text = script_json(&v);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
