//! Parsers of the wallet's answers (`credential.data` as the page posts it) down to the
//! DeviceResponse CBOR, which the mdoc verifier then checks against the matching
//! SessionTranscript. Total: any input gives a value or an error, never a panic, and
//! the `response` text is bounded before any decoding.

use ciborium::Value as Cbor;
use serde_json::{Map, Value};

use super::hpke::{self, HpkeError};
use super::jwe::{self, JweError};
use super::{b64url_decode, ResponseKey, MAX_RESPONSE_LEN};
use crate::mdoc::cbor;

/// Why an answer is refused. The messages are short and name the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    #[error("data is not a JSON object")]
    NotAnObject,
    #[error("the wallet answered with an error: {0}")]
    WalletError(String),
    #[error("data has no response")]
    MissingResponse,
    #[error("response is not a string")]
    ResponseNotString,
    #[error("response is larger than 2 MiB")]
    TooLarge,
    #[error("the response is not encrypted (dc_api.jwt requires a JWE)")]
    Unencrypted,
    #[error(
        "the response is not encrypted (a request by reference is answered with direct_post.jwt: a JWE)"
    )]
    UnencryptedByReference,
    #[error("{0}")]
    Jwe(#[from] JweError),
    #[error("the decrypted response is not a JSON object")]
    PayloadNotJson,
    #[error("the decrypted response has no vp_token object")]
    MissingVpToken,
    #[error("vp_token names no credential")]
    NoCredential,
    #[error("vp_token names more than one credential")]
    SeveralCredentials,
    #[error("vp_token must hold exactly one presentation, a string")]
    NotOnePresentation,
    #[error("the presentation is not base64url")]
    PresentationNotBase64Url,
    #[error("response is not base64url")]
    NotBase64Url,
    #[error("response is not CBOR")]
    NotCbor,
    #[error("response is not [\"dcapi\", {{enc, cipherText}}]")]
    NotDcapiResponse,
    #[error("response has no single enc byte string")]
    MissingEnc,
    #[error("response has no single cipherText byte string")]
    MissingCipherText,
    #[error("{0}")]
    Hpke(#[from] HpkeError),
}

/// What an OpenID4VP answer presents: the DCQL credential id the wallet answered for
/// and the DeviceResponse CBOR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenId4VpAnswer {
    pub credential_id: String,
    pub device_response: Vec<u8>,
}

/// R1's answer: `{"response": "<JWE>"}` → decrypt with the request's key → `{"vp_token":
/// {<id>: ["<base64url DeviceResponse>"]}}`. Exactly one credential with one
/// presentation is accepted (the request asks for one of its options).
pub fn openid4vp(data: &Value, key: &ResponseKey) -> Result<OpenId4VpAnswer, ResponseError> {
    let data = data.as_object().ok_or(ResponseError::NotAnObject)?;
    let response = match data.get("response") {
        Some(response) => response,
        None if data.contains_key("vp_token") => return Err(ResponseError::Unencrypted),
        None => return Err(wallet_error(data).unwrap_or(ResponseError::MissingResponse)),
    };
    let jwe = bounded_text(response)?;
    let plaintext = jwe::decrypt(jwe, key)?;
    presented(&plaintext).map(|(_, answer)| answer)
}

/// A `direct_post.jwt` answer's `response` (a request by reference,
/// docs/wallets.md#signed-requests-by-reference): decrypted with the request's key under
/// an `enc` it offered → the `state` the plaintext names (if any) and what it presents.
pub fn direct_post_jwt(
    jwe: &str,
    key: &ResponseKey,
    offered: &[jwe::Enc],
) -> Result<(Option<String>, OpenId4VpAnswer), ResponseError> {
    if jwe.len() > MAX_RESPONSE_LEN {
        return Err(ResponseError::TooLarge);
    }
    let plaintext = jwe::decrypt_offered(jwe, key, offered)?;
    let (payload, answer) = presented(&plaintext)?;
    let state = payload
        .get("state")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((state, answer))
}

/// The decrypted claims: a JSON object whose `vp_token` presents exactly one credential
/// with one presentation (the request asks for one of its options).
fn presented(plaintext: &[u8]) -> Result<(Map<String, Value>, OpenId4VpAnswer), ResponseError> {
    let payload: Map<String, Value> = match serde_json::from_slice(plaintext) {
        Ok(Value::Object(map)) => map,
        _ => return Err(ResponseError::PayloadNotJson),
    };
    let Some(vp_token) = payload.get("vp_token").and_then(Value::as_object) else {
        return Err(wallet_error(&payload).unwrap_or(ResponseError::MissingVpToken));
    };
    let mut entries = vp_token.iter();
    let (id, presentations) = match (entries.next(), entries.next()) {
        (Some(entry), None) => entry,
        (None, _) => return Err(ResponseError::NoCredential),
        (Some(_), Some(_)) => return Err(ResponseError::SeveralCredentials),
    };
    let Some([Value::String(presentation)]) = presentations.as_array().map(Vec::as_slice) else {
        return Err(ResponseError::NotOnePresentation);
    };
    let device_response =
        b64url_decode(presentation).ok_or(ResponseError::PresentationNotBase64Url)?;
    let answer = OpenId4VpAnswer {
        credential_id: id.clone(),
        device_response,
    };
    Ok((payload, answer))
}

/// R2's answer: `{"response": base64url(CBOR ["dcapi", {"enc": bstr, "cipherText":
/// bstr}])}` → HPKE open with `info` = `session_transcript` (the CBOR of
/// [`super::transcript::annex_c`] for this request's `encryptionInfo` and origin) and an
/// empty aad → the DeviceResponse CBOR.
pub fn annex_c(
    data: &Value,
    key: &ResponseKey,
    session_transcript: &[u8],
) -> Result<Vec<u8>, ResponseError> {
    let data = data.as_object().ok_or(ResponseError::NotAnObject)?;
    let Some(response) = data.get("response") else {
        return Err(wallet_error(data).unwrap_or(ResponseError::MissingResponse));
    };
    let bytes = b64url_decode(bounded_text(response)?).ok_or(ResponseError::NotBase64Url)?;
    let value = cbor::decode(&bytes).ok_or(ResponseError::NotCbor)?;
    let params = match value.as_array().map(Vec::as_slice) {
        Some([Cbor::Text(name), Cbor::Map(params)]) if name == "dcapi" => params,
        _ => return Err(ResponseError::NotDcapiResponse),
    };
    let field = |name| match cbor::get(params, name) {
        Ok(Cbor::Bytes(b)) => Some(b.as_slice()),
        _ => None,
    };
    let enc = field("enc").ok_or(ResponseError::MissingEnc)?;
    let ciphertext = field("cipherText").ok_or(ResponseError::MissingCipherText)?;
    Ok(hpke::open(key, enc, ciphertext, session_transcript)?)
}

/// The `response` string, refused before any work when not text or too long.
fn bounded_text(value: &Value) -> Result<&str, ResponseError> {
    let text = value.as_str().ok_or(ResponseError::ResponseNotString)?;
    if text.len() > MAX_RESPONSE_LEN {
        return Err(ResponseError::TooLarge);
    }
    Ok(text)
}

/// An OAuth-style `{"error": code}` (a wallet that declines still resolves the browser's
/// promise with data), the code cut to 64 printable ASCII characters for the message.
fn wallet_error(map: &Map<String, Value>) -> Option<ResponseError> {
    let code = map.get("error")?.as_str()?;
    let code: String = code
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(64)
        .collect();
    Some(ResponseError::WalletError(code))
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
