//! ES256 compact JWS (RFC 7515, RFC 7518 section 3.4) for receipts, and the JWK Set that
//! checks them: the receipt key as stored (the 32-byte P-256 scalar), its public JWK
//! with a `kid` that is its RFC 7638 thumbprint, signing and verification.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{Payload, TYP};

/// Why a receipt does not hold, or a key set cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("not a JWS compact serialization (three base64url parts)")]
    NotCompact,
    #[error("the {0} is not base64url")]
    NotBase64Url(&'static str),
    #[error("the header is not the JSON of an agegate receipt (alg ES256, typ {TYP}, kid)")]
    Header,
    #[error("no key with kid {0:?} in the key set")]
    UnknownKid(String),
    #[error("the signature does not hold")]
    BadSignature,
    #[error("the payload is not a receipt's: {0}")]
    Payload(String),
    #[error("the key set is not a JWK Set of P-256 keys: {0}")]
    KeySet(String),
    #[error("a stored receipt key is not a P-256 private key")]
    BadStoredKey,
}

/// A receipt signing key.
#[derive(Clone)]
pub struct ReceiptKey {
    key: SigningKey,
}

impl std::fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiptKey")
            .field("kid", &self.kid())
            .finish_non_exhaustive()
    }
}

impl ReceiptKey {
    pub fn generate() -> Self {
        Self {
            key: SigningKey::random(&mut rand::rngs::OsRng),
        }
    }

    /// The key as stored: the 32-byte big-endian scalar.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ReceiptError> {
        if bytes.len() != 32 {
            return Err(ReceiptError::BadStoredKey);
        }
        let key = SigningKey::from_slice(bytes).map_err(|_| ReceiptError::BadStoredKey)?;
        Ok(Self { key })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.key.to_bytes().to_vec()
    }

    /// base64url of the RFC 7638 thumbprint: names the key without any state.
    pub fn kid(&self) -> String {
        kid(self.key.verifying_key())
    }

    /// `{"kty","crv","x","y","kid","use":"sig","alg":"ES256"}`.
    pub fn public_jwk(&self) -> Value {
        public_jwk(self.key.verifying_key())
    }

    /// The compact JWS of `payload`, header `{"alg":"ES256","typ":…,"kid":…}`.
    pub fn sign(&self, payload: &Payload) -> String {
        let header = json!({"alg": "ES256", "typ": TYP, "kid": self.kid()});
        let body = serde_json::to_vec(payload).unwrap_or_default();
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(body)
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

fn coordinates(key: &VerifyingKey) -> (String, String) {
    let point = key.to_encoded_point(false);
    let b64 = |c: Option<&p256::FieldBytes>| {
        URL_SAFE_NO_PAD.encode(c.map(|c| c.as_slice()).unwrap_or_default())
    };
    (b64(point.x()), b64(point.y()))
}

fn kid(key: &VerifyingKey) -> String {
    let (x, y) = coordinates(key);
    // RFC 7638 section 3.2: the required members only, in lexicographic order, no whitespace.
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

fn public_jwk(key: &VerifyingKey) -> Value {
    let (x, y) = coordinates(key);
    json!({"kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid(key), "use": "sig", "alg": "ES256"})
}

/// The keys that check receipts, by `kid`.
#[derive(Debug, Clone, Default)]
pub struct VerifyingKeys(Vec<(String, VerifyingKey)>);

impl VerifyingKeys {
    pub fn of(keys: &[ReceiptKey]) -> Self {
        Self(
            keys.iter()
                .map(|k| (k.kid(), *k.key.verifying_key()))
                .collect(),
        )
    }

    /// A JWK Set (`{"keys": [...]}`); keys that are not P-256 signing keys are skipped, as
    /// RFC 7517 section 5 lets a reader do; a set with none is refused.
    pub fn from_jwks(jwks: &Value) -> Result<Self, ReceiptError> {
        let keys = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| ReceiptError::KeySet("no \"keys\" array".into()))?;
        let mut found = Vec::new();
        for jwk in keys {
            let text = |name: &str| jwk.get(name).and_then(Value::as_str);
            if text("kty") != Some("EC") || text("crv") != Some("P-256") {
                continue;
            }
            let coordinate = |name: &str| {
                text(name)
                    .and_then(|c| URL_SAFE_NO_PAD.decode(c).ok())
                    .filter(|c| c.len() == 32)
            };
            let (Some(x), Some(y)) = (coordinate("x"), coordinate("y")) else {
                return Err(ReceiptError::KeySet(
                    "a P-256 key without its x and y".into(),
                ));
            };
            let point = p256::EncodedPoint::from_affine_coordinates(
                p256::FieldBytes::from_slice(&x),
                p256::FieldBytes::from_slice(&y),
                false,
            );
            let key = VerifyingKey::from_encoded_point(&point)
                .map_err(|_| ReceiptError::KeySet("a point not on P-256".into()))?;
            let kid = text("kid").map_or_else(|| kid(&key), str::to_owned);
            found.push((kid, key));
        }
        if found.is_empty() {
            return Err(ReceiptError::KeySet("no P-256 key".into()));
        }
        Ok(Self(found))
    }

    /// `{"keys": [...]}` of these keys.
    pub fn to_jwks(&self) -> Value {
        json!({"keys": self.0.iter().map(|(_, k)| public_jwk(k)).collect::<Vec<_>>()})
    }

    /// The receipt's payload, if its signature holds under the key its `kid` names.
    pub fn verify(&self, receipt: &str) -> Result<Payload, ReceiptError> {
        let parts = Compact::split(receipt)?;
        let text = |name: &str| parts.header.get(name).and_then(Value::as_str);
        if text("alg") != Some("ES256") || text("typ") != Some(TYP) {
            return Err(ReceiptError::Header);
        }
        let kid = text("kid").ok_or(ReceiptError::Header)?;
        let key = self
            .0
            .iter()
            .find(|(k, _)| k == kid)
            .map(|(_, key)| key)
            .ok_or_else(|| ReceiptError::UnknownKid(kid.to_owned()))?;
        parts.check(key)?;
        serde_json::from_slice(&parts.payload).map_err(|e| ReceiptError::Payload(e.to_string()))
    }
}

/// A JWS compact serialization taken apart.
pub(super) struct Compact<'a> {
    pub header: Value,
    pub payload: Vec<u8>,
    signing_input: &'a str,
    signature: Vec<u8>,
}

impl<'a> Compact<'a> {
    pub fn split(jws: &'a str) -> Result<Self, ReceiptError> {
        let jws = jws.trim();
        let mut parts = jws.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(ReceiptError::NotCompact);
        };
        // The engine refuses padding and non-zero trailing bits: one spelling per value.
        let decode = |part: &str, what| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| ReceiptError::NotBase64Url(what))
        };
        let header_bytes = decode(header, "header")?;
        Ok(Compact {
            header: serde_json::from_slice(&header_bytes).map_err(|_| ReceiptError::Header)?,
            payload: decode(payload, "payload")?,
            signing_input: &jws[..header.len() + 1 + payload.len()],
            signature: decode(signature, "signature")?,
        })
    }

    /// Whether the ES256 signature (raw `r ‖ s`) holds under `key`.
    pub fn check(&self, key: &VerifyingKey) -> Result<(), ReceiptError> {
        let signature =
            Signature::from_slice(&self.signature).map_err(|_| ReceiptError::BadSignature)?;
        key.verify(self.signing_input.as_bytes(), &signature)
            .map_err(|_| ReceiptError::BadSignature)
    }
}
