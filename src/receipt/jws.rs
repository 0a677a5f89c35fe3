//! Receipts as ES256 compact JWS, and the JWK Set that checks them: the receipt key as
//! stored (the 32-byte P-256 scalar), its public JWK with a `kid` that is its RFC 7638
//! thumbprint. The JOSE itself is `crate::jose`'s; this holds the receipt's rules
//! (`typ`, the `kid` lookup, the payload).

use p256::ecdsa::{SigningKey, VerifyingKey};
use serde_json::{json, Map, Value};

use crate::jose::{self, Alg, Jwk, JwkError, Jws, JwsError, PublicKey};

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
        let mut header = Map::new();
        header.insert("typ".into(), TYP.into());
        header.insert("kid".into(), self.kid().into());
        let body = serde_json::to_vec(payload).unwrap_or_default();
        jose::sign_es256(&self.key, header, &body)
    }
}

fn kid(key: &VerifyingKey) -> String {
    Jwk(key.into()).kid()
}

fn public_jwk(key: &VerifyingKey) -> Value {
    let mut jwk = Jwk(key.into()).to_members();
    jwk.insert("kid".into(), kid(key).into());
    jwk.insert("use".into(), "sig".into());
    jwk.insert("alg".into(), Alg::Es256.name().into());
    Value::Object(jwk)
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
            let key = match Jwk::parse(jwk) {
                Ok(Jwk(key)) => VerifyingKey::from(key),
                Err(JwkError::NotAnObject | JwkError::NotEc | JwkError::WrongCurve) => continue,
                Err(JwkError::Coordinates) => {
                    return Err(ReceiptError::KeySet(
                        "a P-256 key without its x and y".into(),
                    ))
                }
                Err(JwkError::NotOnCurve) => {
                    return Err(ReceiptError::KeySet("a point not on P-256".into()))
                }
            };
            let kid = jwk
                .get("kid")
                .and_then(Value::as_str)
                .map_or_else(|| kid(&key), str::to_owned);
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
        let jws = Jws::parse(receipt, &[Alg::Es256]).map_err(|e| match e {
            JwsError::NotCompact => ReceiptError::NotCompact,
            JwsError::NotBase64Url(part) => ReceiptError::NotBase64Url(part),
            _ => ReceiptError::Header,
        })?;
        if jws.text("typ") != Some(TYP) {
            return Err(ReceiptError::Header);
        }
        let kid = jws.text("kid").ok_or(ReceiptError::Header)?;
        let key = self
            .0
            .iter()
            .find(|(k, _)| k == kid)
            .map(|(_, key)| PublicKey::P256(*key))
            .ok_or_else(|| ReceiptError::UnknownKid(kid.to_owned()))?;
        let verified = jws.verify(&key).map_err(|_| ReceiptError::BadSignature)?;
        serde_json::from_slice(&verified.payload).map_err(|e| ReceiptError::Payload(e.to_string()))
    }
}
