//! The W3C Digital Credentials API at the gateway (docs/dc-api.md): the requests the
//! pending page hands its script (R1, OpenID4VP over the DC API; R2, ISO/IEC 18013-7
//! Annex C), the endpoint the script posts the wallet's answer to, and the tiny status
//! the script polls so the page moves on by itself. The cryptography is the pure
//! [`crate::dcapi`]; the checks of the DeviceResponse are the link's (docs/wallets.md#what-is-checked, [`Answering`]).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::dcapi::request::{
    self, PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_OPENID4VP_UNSIGNED,
};
use crate::dcapi::{
    response, transcript, DcApiRequests, ItemRequest, RequestInputs, RequestSigner,
};
use crate::domain::presentation;
use crate::domain::{DcApiSecrets, InviteId, Kind, KindSet, MinAge, PresentationRequest, Status};
use crate::http::body::{JsonBody, RequestBody};
use crate::http::error::{ApiError, DcApiRefusal, ErrorBody, ErrorCode};
use crate::http::openid4vp::{AnswerAccepted, Answering};
use crate::http::AppState;
use crate::receipt::Transport;

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
        let items: Vec<ItemRequest<'_>> = kinds
            .iter()
            .map(|k| ItemRequest {
                doc_type: k.info().doc_type,
                namespace: k.info().namespace,
                claim: &claim,
            })
            .collect();
        let inputs = RequestInputs {
            origin: &self.origin,
            nonce: &request.nonce,
            dcql_query: &presentation::dcql_query_value(kinds, age),
            client_metadata: &presentation::client_metadata_value(),
            items: &items,
            key: &secrets.response_key,
            encryption_nonce: secrets.encryption_nonce.as_bytes(),
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

/// The protocols of the requests (docs/dc-api.md#the-requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// R1, signed or not: answered alike, with an encrypted vp_token.
    OpenId4Vp,
    /// R2, ISO/IEC 18013-7 Annex C.
    AnnexC,
}

impl Protocol {
    fn parse(name: &str) -> Result<Self, DcApiRefusal> {
        match name {
            PROTOCOL_OPENID4VP_UNSIGNED | PROTOCOL_OPENID4VP_SIGNED => Ok(Protocol::OpenId4Vp),
            PROTOCOL_ANNEX_C => Ok(Protocol::AnnexC),
            other => Err(DcApiRefusal::UnknownProtocol(shown(other))),
        }
    }
}

/// Client text in a message: at most 64 characters (Debug-escaped where shown).
fn shown(text: &str) -> String {
    text.chars().take(64).collect()
}

/// Wallet response endpoint (Digital Credentials API)
///
/// Where the pending page's script posts what `navigator.credentials.get` returned. The
/// answer is decrypted with the request's key, bound to the public URL's origin, and
/// then checked exactly as the OpenID4VP endpoint's (docs/wallets.md#what-is-checked, docs/dc-api.md#the-answers): accepted,
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
        (status = 413, description = "Body larger than 64 KiB", body = ErrorBody),
    )
)]
pub async fn answer(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    JsonBody(answer): JsonBody<DcApiAnswer>,
) -> Result<Json<AnswerAccepted>, ApiError> {
    let answering = Answering::load(&state, path, Transport::DcApi).await?;
    let protocol = answering.refused_if(Protocol::parse(&answer.protocol))?;
    let request = answering.live_request(&state, &answer.state).await?;
    // A request an older release made has no key: its page offered no DC API request.
    let secrets = request
        .dc_api
        .as_ref()
        .ok_or(ErrorCode::PresentationStateNotLive)?;
    let origin = &state.dc_api.origin;
    let key = &secrets.response_key;
    let (device_response, session_transcript, kind) = match protocol {
        Protocol::OpenId4Vp => {
            let opened = answering.refused_if(response::openid4vp(&answer.data, key))?;
            let Some(kind) = Kind::by_dcql_id(&opened.credential_id)
                .filter(|k| answering.anchors.get(*k).is_some())
            else {
                let refusal = DcApiRefusal::UnrequestedCredential(shown(&opened.credential_id));
                return Err(answering.refused(refusal));
            };
            let transcript = transcript::openid4vp(origin, &request.nonce, &key.thumbprint());
            (opened.device_response, transcript, Some(kind))
        }
        Protocol::AnnexC => {
            // The text exactly as R2 carried it: the transcript hashes it.
            let info = request::encryption_info(key, secrets.encryption_nonce.as_bytes());
            let transcript = transcript::annex_c(&info, origin);
            let opened = response::annex_c(&answer.data, key, &transcript);
            // R2 asked for each kind's docType: the DeviceResponse's document says which.
            (answering.refused_if(opened)?, transcript, None)
        }
    };
    let proof =
        answering.check(answering.verify(&device_response, &request, &session_transcript, kind))?;
    answering.accept(&state, &request, proof).await
}

impl Answering {
    /// A DC API refusal, logged, as the API's error.
    fn refused(&self, refusal: impl Into<DcApiRefusal>) -> ApiError {
        let refusal = refusal.into();
        tracing::info!(invite_id = %self.id, reason = %refusal, "dc api answer refused");
        self.count(None, refusal.outcome());
        ApiError::DcApi(refusal)
    }

    fn refused_if<T, E: Into<DcApiRefusal>>(&self, result: Result<T, E>) -> Result<T, ApiError> {
        result.map_err(|e| self.refused(e))
    }
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
        .store
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

    #[test]
    fn protocols_parse_and_unknown_ones_are_named() {
        assert_eq!(
            Protocol::parse("openid4vp-v1-unsigned"),
            Ok(Protocol::OpenId4Vp)
        );
        assert_eq!(
            Protocol::parse("openid4vp-v1-signed"),
            Ok(Protocol::OpenId4Vp)
        );
        assert_eq!(Protocol::parse("org-iso-mdoc"), Ok(Protocol::AnnexC));
        let refusal = Protocol::parse("openid4vp").unwrap_err();
        assert_eq!(refusal.code(), ErrorCode::DcApiUnknownProtocol);
        assert!(refusal
            .to_string()
            .starts_with("unknown protocol \"openid4vp\""));
        let long = "x".repeat(500);
        assert!(Protocol::parse(&long).unwrap_err().to_string().len() < 200);
    }
}
