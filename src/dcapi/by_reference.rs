//! Signed requests by reference (docs/wallets.md#signed-requests-by-reference): the
//! secrets of a live request's by-reference form, the wallet's metadata and what is
//! offered under it, and the signed request object (OpenID4VP 1.0 section 5, HAIP 1.0).
//! Pure: the same stored key and inputs give the same bytes on every node.

use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;

use super::jwe::Enc;
use super::signer::RequestSigner;
use super::{b64url, ResponseKey};

/// The JWS `typ` and the media type of a request object (RFC 9101).
pub const REQUEST_OBJECT_TYP: &str = "oauth-authz-req+jwt";
/// `aud` of a request object when the wallet names no issuer (OpenID4VP 1.0 section 5.8).
pub const SELF_ISSUED_AUD: &str = "https://self-issued.me/v2";

/// What the by-reference form of a live request needs beyond its stored secrets:
/// derived from the request's stored response key with HMAC-SHA256 under labels of their
/// own, so each is as random as that key (≥ 128 bits), none is the `state` or `nonce`,
/// and every node derives the same without storing more.
pub struct ByReference {
    /// Names the request in its `request_uri` (128 bits, base64url).
    pub request_id: String,
    /// The request object's `state` (128 bits): an answer naming it came by reference,
    /// so one posted unencrypted is refused.
    pub state: String,
    /// The request's own response-encryption key (`direct_post.jwt`).
    pub key: ResponseKey,
}

impl ByReference {
    pub fn of(stored: &ResponseKey) -> Self {
        let secret = stored.to_bytes();
        let mac = |label: &[u8]| {
            // HMAC takes a key of any length.
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_slice())
                .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
            mac.update(b"agegate by-reference ");
            mac.update(label);
            mac.finalize().into_bytes()
        };
        let key = (0u8..=u8::MAX)
            .find_map(|counter| ResponseKey::from_bytes(&mac(&[b'k', counter])).ok())
            // A 256-bit HMAC output is out of P-256's range with probability ~2^-32.
            .unwrap_or_else(|| stored.clone());
        ByReference {
            request_id: b64url(&mac(b"request id")[..16]),
            state: b64url(&mac(b"state")[..16]),
            key,
        }
    }
}

/// Why a wallet's posted metadata is refused (400 `invalid_request`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("wallet_metadata is not a JSON object")]
    NotAnObject,
    #[error(
        "the wallet supports none of the response encryption methods offered (A128GCM, A256GCM)"
    )]
    NoCommonEnc,
}

/// What a fetch of the request object is answered with, from the wallet's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// Offer zero-knowledge proofs (when the request has any): no metadata, or
    /// metadata whose `vp_formats_supported` names `mso_mdoc_zk`.
    pub zk: bool,
    /// The `enc` values offered: ours, or those in common with the wallet's.
    pub enc: Vec<Enc>,
    /// `aud`: the wallet's `issuer`, else [`SELF_ISSUED_AUD`].
    pub aud: String,
    pub wallet_nonce: Option<String>,
}

impl Negotiated {
    /// A `GET`, or a `POST` without metadata.
    pub fn unknown_wallet() -> Self {
        Negotiated {
            zk: true,
            enc: Enc::ALL.to_vec(),
            aud: SELF_ISSUED_AUD.to_owned(),
            wallet_nonce: None,
        }
    }

    /// From a `POST`'s decoded form: `wallet_metadata` as one JSON object, or (as wallets
    /// on `@openid4vc/openid4vp` 0.4.x post it) its members as separate fields, each
    /// read as JSON when it parses and as text otherwise; and `wallet_nonce`.
    pub fn from_form(fields: &[(String, String)]) -> Result<Self, MetadataError> {
        let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let wallet_nonce = field("wallet_nonce").cloned();
        let metadata = match field("wallet_metadata") {
            Some(text) => match serde_json::from_str(text) {
                Ok(Value::Object(map)) => Some(map),
                _ => return Err(MetadataError::NotAnObject),
            },
            None => {
                let members: Map<String, Value> = fields
                    .iter()
                    .filter(|(k, _)| k != "wallet_nonce")
                    .map(|(k, v)| {
                        let value =
                            serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.clone()));
                        (k.clone(), value)
                    })
                    .collect();
                (!members.is_empty()).then_some(members)
            }
        };
        let mut negotiated = match metadata {
            Some(metadata) => Self::from_metadata(&metadata)?,
            None => Self::unknown_wallet(),
        };
        negotiated.wallet_nonce = wallet_nonce;
        Ok(negotiated)
    }

    fn from_metadata(metadata: &Map<String, Value>) -> Result<Self, MetadataError> {
        let zk = match metadata.get("vp_formats_supported") {
            Some(Value::Object(formats)) => formats.contains_key("mso_mdoc_zk"),
            Some(Value::Array(formats)) => formats.iter().any(|f| f == "mso_mdoc_zk"),
            _ => false,
        };
        let enc = match metadata.get("authorization_encryption_enc_values_supported") {
            Some(Value::Array(values)) => {
                let common: Vec<Enc> = Enc::ALL
                    .into_iter()
                    .filter(|e| values.iter().any(|v| v == e.name()))
                    .collect();
                if common.is_empty() {
                    return Err(MetadataError::NoCommonEnc);
                }
                common
            }
            _ => Enc::ALL.to_vec(),
        };
        let aud = metadata
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or(SELF_ISSUED_AUD)
            .to_owned();
        Ok(Negotiated {
            zk,
            enc,
            aud,
            wallet_nonce: None,
        })
    }
}

/// What a request object is made of.
pub struct RequestObject<'a> {
    /// Section 7's `response_uri`, where the wallet posts its answer.
    pub response_uri: &'a str,
    pub nonce: &'a str,
    /// [`ByReference::state`].
    pub state: &'a str,
    pub dcql_query: &'a Value,
    /// The by-value link's `client_metadata`: `jwks` and the `enc` values are added.
    pub client_metadata: &'a Value,
    /// [`ByReference::key`].
    pub key: &'a ResponseKey,
    pub negotiated: &'a Negotiated,
    pub iat: i64,
    /// When the request stops being live.
    pub exp: i64,
}

/// The request object, signed: a JWS with header `{"alg": "ES256", "typ":
/// "oauth-authz-req+jwt", "x5c"}`.
pub fn sign(object: &RequestObject<'_>, signer: &RequestSigner) -> String {
    let payload = payload(object, &signer.client_id(), signer.verifier_info());
    signer.jws(REQUEST_OBJECT_TYP, payload.to_string().as_bytes())
}

/// The request object's claims.
pub fn payload(
    object: &RequestObject<'_>,
    client_id: &str,
    verifier_info: Option<&Value>,
) -> Value {
    let mut metadata = object
        .client_metadata
        .as_object()
        .cloned()
        .unwrap_or_default();
    metadata.insert("jwks".into(), json!({"keys": [object.key.public_jwk()]}));
    let enc: Vec<&str> = object.negotiated.enc.iter().map(|e| e.name()).collect();
    metadata.insert("encrypted_response_enc_values_supported".into(), json!(enc));
    let mut claims = Map::new();
    claims.insert("client_id".into(), json!(client_id));
    claims.insert("response_type".into(), json!("vp_token"));
    claims.insert("response_mode".into(), json!("direct_post.jwt"));
    claims.insert("response_uri".into(), json!(object.response_uri));
    claims.insert("nonce".into(), json!(object.nonce));
    claims.insert("state".into(), json!(object.state));
    claims.insert("dcql_query".into(), object.dcql_query.clone());
    claims.insert("client_metadata".into(), Value::Object(metadata));
    claims.insert("aud".into(), json!(object.negotiated.aud));
    claims.insert("iat".into(), json!(object.iat));
    claims.insert("exp".into(), json!(object.exp));
    if let Some(nonce) = &object.negotiated.wallet_nonce {
        claims.insert("wallet_nonce".into(), json!(nonce));
    }
    if let Some(info) = verifier_info {
        claims.insert("verifier_info".into(), info.clone());
    }
    Value::Object(claims)
}

#[cfg(test)]
#[path = "by_reference_tests.rs"]
mod tests;
