//! JWS compact serialization (RFC 7515 section 7.1): ES256 signing (RFC 7518 section 3.4), and
//! verification under the algorithms a caller accepts.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Map, Value};

use super::b64url;

/// A JWS `alg` agegate knows. A caller passes the ones it accepts to [`Jws::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alg {
    /// ECDSA P-256 with SHA-256, signature raw `r ‖ s` (RFC 7518 section 3.4).
    Es256,
    /// ECDSA P-384 with SHA-384 (trusted lists of entities may be signed so).
    Es384,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 section 3.3; the EU signs lists with RSA).
    Rs256,
}

impl Alg {
    pub fn name(self) -> &'static str {
        match self {
            Alg::Es256 => "ES256",
            Alg::Es384 => "ES384",
            Alg::Rs256 => "RS256",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(Alg::Es256),
            "ES384" => Some(Alg::Es384),
            "RS256" => Some(Alg::Rs256),
            _ => None,
        }
    }
}

/// A key that checks a JWS, of the type its [`Alg`] needs: the crate's one public-key
/// type.
pub use crate::pki::PublicKey;

/// Why a JWS is refused. Each says which part is at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwsError {
    #[error("not a JWS compact serialization (three base64url parts)")]
    NotCompact,
    #[error("the JWS {0} is not base64url")]
    NotBase64Url(&'static str),
    #[error("the JWS header is not a JSON object")]
    HeaderNotJson,
    #[error("the JWS alg {0:?} is not one accepted here")]
    AlgNotAccepted(Option<String>),
    #[error("the JWS header marks parameters critical (crit), which are not supported")]
    Critical,
    #[error("the JWS x5c is not a non-empty array of base64 certificates")]
    BadX5c,
    #[error("the key is not of the type the JWS alg needs")]
    WrongKeyType,
    #[error("the JWS signature does not hold")]
    BadSignature,
}

/// A compact JWS taken apart, its `alg` one the caller accepts; not yet verified.
#[derive(Debug)]
pub struct Jws<'a> {
    header: Map<String, Value>,
    alg: Alg,
    payload: Vec<u8>,
    signing_input: &'a str,
    signature: Vec<u8>,
}

/// What a verified JWS says: its protected header and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub header: Map<String, Value>,
    pub payload: Vec<u8>,
}

impl<'a> Jws<'a> {
    /// Splits and decodes `compact` (surrounding whitespace ignored). The parts must
    /// be unpadded base64url with canonical trailing bits, so each value has one
    /// spelling; the header's `alg` must be in `accepted`; `crit` is refused (RFC 7515
    /// section 4.1.11: we understand no extension).
    pub fn parse(compact: &'a str, accepted: &[Alg]) -> Result<Self, JwsError> {
        let compact = compact.trim();
        let mut parts = compact.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwsError::NotCompact);
        };
        let decode = |part: &str, what| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| JwsError::NotBase64Url(what))
        };
        let Ok(Value::Object(header_map)) = serde_json::from_slice(&decode(header, "header")?)
        else {
            return Err(JwsError::HeaderNotJson);
        };
        let signing_input = &compact[..header.len() + 1 + payload.len()];
        let payload = decode(payload, "payload")?;
        let signature = decode(signature, "signature")?;
        let named = header_map.get("alg").and_then(Value::as_str);
        let alg = named
            .and_then(Alg::from_name)
            .filter(|alg| accepted.contains(alg))
            .ok_or_else(|| JwsError::AlgNotAccepted(named.map(str::to_owned)))?;
        if header_map.contains_key("crit") {
            return Err(JwsError::Critical);
        }
        Ok(Jws {
            header: header_map,
            alg,
            payload,
            signing_input,
            signature,
        })
    }

    /// The protected header, to find the key by (`kid`, `x5c`) before verifying.
    pub fn header(&self) -> &Map<String, Value> {
        &self.header
    }

    pub fn alg(&self) -> Alg {
        self.alg
    }

    /// A text member of the header (`typ`, `kid`, …).
    pub fn text(&self, name: &str) -> Option<&str> {
        self.header.get(name).and_then(Value::as_str)
    }

    /// The `x5c` chain (RFC 7515 section 4.1.6: standard base64 DER, signer first); None when
    /// absent. Whether the chain is trusted is the caller's rule.
    pub fn x5c(&self) -> Option<Result<Vec<Vec<u8>>, JwsError>> {
        let x5c = self.header.get("x5c")?;
        let chain = x5c
            .as_array()
            .filter(|a| !a.is_empty())
            .and_then(|certs| {
                certs
                    .iter()
                    .map(|c| c.as_str().and_then(|c| STANDARD.decode(c).ok()))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or(JwsError::BadX5c);
        Some(chain)
    }

    /// The header and payload, if the signature holds under `key` for the JWS's alg.
    pub fn verify(self, key: &PublicKey) -> Result<Verified, JwsError> {
        let input = self.signing_input.as_bytes();
        let holds = match (self.alg, key) {
            (Alg::Es256, PublicKey::P256(key)) => {
                Signature::from_slice(&self.signature).is_ok_and(|s| key.verify(input, &s).is_ok())
            }
            (Alg::Es384, PublicKey::P384(key)) => {
                p384::ecdsa::Signature::from_slice(&self.signature)
                    .is_ok_and(|s| key.verify(input, &s).is_ok())
            }
            (Alg::Rs256, PublicKey::Rsa(key)) => {
                use sha2::{Digest, Sha256};
                let scheme = rsa::pkcs1v15::Pkcs1v15Sign::new::<Sha256>();
                key.verify(scheme, &Sha256::digest(input), &self.signature)
                    .is_ok()
            }
            _ => return Err(JwsError::WrongKeyType),
        };
        if !holds {
            return Err(JwsError::BadSignature);
        }
        Ok(Verified {
            header: self.header,
            payload: self.payload,
        })
    }
}

/// The compact JWS of `payload` under `key`, with `header`'s members and `alg` ES256.
/// Deterministic (RFC 6979), so signing needs no RNG.
pub fn sign_es256(key: &SigningKey, mut header: Map<String, Value>, payload: &[u8]) -> String {
    header.insert("alg".into(), Alg::Es256.name().into());
    let input = format!(
        "{}.{}",
        b64url(Value::Object(header).to_string().as_bytes()),
        b64url(payload)
    );
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", b64url(&signature.to_bytes()))
}

/// An `x5c` member: each DER certificate in standard base64 (not base64url).
pub fn x5c(chain: &[Vec<u8>]) -> Value {
    chain.iter().map(|der| STANDARD.encode(der)).collect()
}

#[cfg(test)]
#[path = "jws_tests.rs"]
mod tests;
