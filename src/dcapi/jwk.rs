//! A request's response-encryption key pair (P-256) and the public forms the two
//! protocols publish it in: an EC JWK (OpenID4VP `client_metadata.jwks`) and a COSE_Key
//! (Annex C `recipientPublicKey`), plus the RFC 7638 thumbprint the OpenID4VP DC API
//! SessionTranscript binds to. The JWK and thumbprint are `crate::jose`'s.

use p256::elliptic_curve::rand_core::CryptoRngCore;
use p256::elliptic_curve::zeroize::Zeroizing;
use p256::{PublicKey, SecretKey};
use serde_json::Value;

use crate::jose::{b64url, Jwk};

/// Why stored key bytes cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("a P-256 private key is 32 bytes")]
    WrongLength,
    #[error("not a valid P-256 private key (zero or not below the group order)")]
    OutOfRange,
}

/// The private half of a live request's response-encryption key. Stored with the
/// request as its 32-byte big-endian scalar ([`ResponseKey::to_bytes`]), which is all
/// that P-256 needs and leaves no format to parse; never sent anywhere.
#[derive(Clone)]
pub struct ResponseKey {
    secret: SecretKey,
    /// Derived once: the JWK, the kid, the thumbprint and the COSE_Key all need it, and
    /// each derivation is a scalar multiplication (the page shows them on every reload).
    public: PublicKey,
}

impl std::fmt::Debug for ResponseKey {
    // Never prints the private scalar; the kid identifies the key in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseKey")
            .field("kid", &self.kid())
            .finish_non_exhaustive()
    }
}

impl ResponseKey {
    /// A fresh key pair from `rng` (the server passes `rand::rngs::OsRng`).
    pub fn generate(rng: &mut impl CryptoRngCore) -> Self {
        Self::from_secret(SecretKey::random(rng))
    }

    fn from_secret(secret: SecretKey) -> Self {
        let public = secret.public_key();
        ResponseKey { secret, public }
    }

    /// The key stored by [`ResponseKey::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyError> {
        if bytes.len() != 32 {
            return Err(KeyError::WrongLength);
        }
        SecretKey::from_slice(bytes)
            .map(Self::from_secret)
            .map_err(|_| KeyError::OutOfRange)
    }

    /// The private scalar, 32 bytes big-endian; wiped from memory when dropped.
    pub fn to_bytes(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.secret.to_bytes().into())
    }

    pub fn public_key(&self) -> PublicKey {
        self.public
    }

    /// RFC 7638 SHA-256 thumbprint of the public key.
    pub fn thumbprint(&self) -> [u8; 32] {
        Jwk(self.public).thumbprint()
    }

    /// The JWK's `kid`: base64url of the thumbprint, so it names the key without state.
    pub fn kid(&self) -> String {
        b64url(&self.thumbprint())
    }

    /// `{"kty":"EC","crv":"P-256","x","y","use":"enc","alg":"ECDH-ES","kid"}`.
    pub fn public_jwk(&self) -> Value {
        let mut jwk = Jwk(self.public).to_members();
        jwk.insert("use".into(), "enc".into());
        jwk.insert("alg".into(), "ECDH-ES".into());
        jwk.insert("kid".into(), self.kid().into());
        Value::Object(jwk)
    }

    /// The public key as a COSE_Key, CBOR `{1: 2, -1: 1, -2: x, -3: y}`.
    pub fn cose_key(&self) -> Vec<u8> {
        crate::mdoc::cose::p256_cose_key(&self.public)
    }

    pub(crate) fn secret(&self) -> &SecretKey {
        &self.secret
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::b64;
    use super::*;
    use crate::jose::jwk::coordinates;
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    use rand::rngs::OsRng;
    use serde_json::json;
    use sha2::{Digest, Sha256};

    /// RFC 7638's own example is an RSA key, so besides the OpenID4VP vector above the
    /// thumbprint of RFC 7518 Appendix C's Bob key is checked against serde_json's
    /// rendering of the required members, and the published JWK members against the RFC.
    #[test]
    fn jwk_members_and_thumbprint_agree() {
        let key = ResponseKey::from_bytes(&b64("VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"))
            .expect("key");
        let jwk = key.public_jwk();
        assert_eq!(jwk["x"], "weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ");
        assert_eq!(jwk["y"], "e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck");
        assert_eq!(
            (&jwk["kty"], &jwk["crv"], &jwk["use"], &jwk["alg"]),
            (
                &json!("EC"),
                &json!("P-256"),
                &json!("enc"),
                &json!("ECDH-ES")
            )
        );
        let canonical = json!({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"], "y": jwk["y"]});
        // serde_json writes object keys sorted and without spaces: RFC 7638's form.
        let digest: [u8; 32] = Sha256::digest(canonical.to_string().as_bytes()).into();
        assert_eq!(key.thumbprint(), digest);
        assert_eq!(jwk["kid"], b64url(&digest));
    }

    #[test]
    fn stored_bytes_round_trip_and_bad_bytes_are_refused() {
        let key = ResponseKey::generate(&mut OsRng);
        let back = ResponseKey::from_bytes(&key.to_bytes()[..]).expect("round trip");
        assert_eq!(back.public_key(), key.public_key());
        assert_eq!(
            ResponseKey::from_bytes(&[1; 31]).err(),
            Some(KeyError::WrongLength)
        );
        assert_eq!(
            ResponseKey::from_bytes(&[0; 32]).err(),
            Some(KeyError::OutOfRange)
        );
        assert_eq!(
            ResponseKey::from_bytes(&[0xff; 32]).err(),
            Some(KeyError::OutOfRange)
        );
        assert!(!format!("{key:?}").contains(&hex_string(&key.to_bytes()[..])));
    }

    #[test]
    fn cose_key_is_the_ec2_map() {
        let key = ResponseKey::generate(&mut OsRng);
        let (x, y) = coordinates(&key.public_key());
        let mut expected = vec![0xa4, 0x01, 0x02, 0x20, 0x01, 0x21, 0x58, 0x20];
        expected.extend_from_slice(&x);
        expected.extend_from_slice(&[0x22, 0x58, 0x20]);
        expected.extend_from_slice(&y);
        assert_eq!(key.cose_key(), expected);
        let value = crate::mdoc::cbor::decode(&expected).expect("cbor");
        assert_eq!(
            crate::mdoc::cose::p256_key(&value).map(|k| k.to_encoded_point(false)),
            Some(key.public_key().to_encoded_point(false))
        );
    }

    fn hex_string(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
