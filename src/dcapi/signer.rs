//! The verifier's request-signing identity for signed requests (docs/dc-api.md#signed-and-unsigned-requests): a P-256
//! key and its X.509 chain, and the two ES256 signature forms it makes — a JWS compact
//! request object (OpenID4VP) and ISO/IEC 18013-5 `readerAuth` (a COSE_Sign1 with
//! detached payload). Signatures are deterministic (RFC 6979), so signing needs no RNG.

use p256::ecdsa::SigningKey;
use sha2::{Digest, Sha256};

use crate::jose::{self, b64url};
use crate::mdoc::cose;
use crate::pki::{Cert, CertError, PublicKey};

/// Why a key and chain cannot sign requests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignerError {
    #[error("the certificate chain is empty")]
    EmptyChain,
    #[error("the leaf certificate cannot be read: {0}")]
    BadLeaf(String),
    #[error("the private key does not match the leaf certificate's public key")]
    KeyMismatch,
}

/// A signing key with its chain (DER, leaf first, without a self-signed root: HAIP 1.0
/// keeps the trust anchor out of `x5c`). Whether the leaf is valid now is for the
/// caller, which has the clock.
#[derive(Clone)]
pub struct RequestSigner {
    key: SigningKey,
    chain: Vec<Vec<u8>>,
    /// The leaf's `notBefore` and `notAfter`, Unix seconds.
    validity: (i64, i64),
    /// The leaf is its own issuer: allowed, but HAIP wallets refuse it.
    self_signed_leaf: bool,
    /// OpenID4VP 1.0 `verifier_info` objects, put verbatim into every signed request.
    verifier_info: Option<serde_json::Value>,
}

impl std::fmt::Debug for RequestSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSigner")
            .field("client_id", &self.client_id())
            .finish_non_exhaustive()
    }
}

impl RequestSigner {
    /// Checks that the leaf is a P-256 certificate whose key is `key`'s; a self-issued
    /// root after the leaf is left out of the chain sent.
    pub fn new(key: SigningKey, mut chain: Vec<Vec<u8>>) -> Result<Self, SignerError> {
        let leaf = chain.first().ok_or(SignerError::EmptyChain)?;
        let parsed = Cert::from_der_ec(leaf).map_err(|e| match e {
            CertError::Malformed(why) | CertError::UnsupportedKey(why) => SignerError::BadLeaf(why),
        })?;
        if chain.len() > 1
            && chain
                .last()
                .and_then(|root| Cert::from_der_ec(root).ok())
                .is_some_and(|root| root.is_self_issued())
        {
            chain.pop();
        }
        match parsed.key {
            PublicKey::P256(ref public) if public == key.verifying_key() => Ok(RequestSigner {
                key,
                chain,
                validity: parsed.validity(),
                self_signed_leaf: parsed.is_self_issued(),
                verifier_info: None,
            }),
            _ => Err(SignerError::KeyMismatch),
        }
    }

    /// The signer putting `verifier_info` (a JSON array) into every request it signs.
    pub fn with_verifier_info(self, verifier_info: serde_json::Value) -> Self {
        Self {
            verifier_info: Some(verifier_info),
            ..self
        }
    }

    /// `--verifier-info`'s array, when configured.
    pub fn verifier_info(&self) -> Option<&serde_json::Value> {
        self.verifier_info.as_ref()
    }

    /// The leaf is self-signed: wallets that follow HAIP 1.0 refuse its requests.
    pub fn self_signed_leaf(&self) -> bool {
        self.self_signed_leaf
    }

    /// The leaf certificate's `notBefore` and `notAfter`, Unix seconds.
    pub fn leaf_validity(&self) -> (i64, i64) {
        self.validity
    }

    /// The chain sent, DER, leaf first (no self-signed root).
    pub fn chain(&self) -> &[Vec<u8>] {
        &self.chain
    }

    /// `x509_hash:` + base64url(SHA-256(leaf DER)) (OpenID4VP 1.0 section 5.9.3).
    pub fn client_id(&self) -> String {
        let leaf = self.chain.first().map(Vec::as_slice).unwrap_or_default();
        format!("x509_hash:{}", b64url(&Sha256::digest(leaf)))
    }

    /// A JWS compact serialization of `payload` with header `{"alg": "ES256", "typ": typ,
    /// "x5c": [standard base64 DER, …]}` (RFC 7515 section 4.1.6: x5c is not base64url).
    pub(crate) fn jws(&self, typ: &str, payload: &[u8]) -> String {
        let mut header = serde_json::Map::new();
        header.insert("typ".into(), typ.into());
        header.insert("x5c".into(), jose::jws::x5c(&self.chain));
        jose::sign_es256(&self.key, header, payload)
    }

    /// `ReaderAuth` over `detached_payload`: an untagged COSE_Sign1, ES256, x5chain
    /// in the unprotected header, nil payload (`crate::mdoc::cose` builds it).
    pub(crate) fn cose_sign1_detached(&self, detached_payload: &[u8]) -> Vec<u8> {
        cose::sign1_detached_es256(&self.key, &self.chain, detached_payload)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use p256::pkcs8::DecodePrivateKey;

    /// A self-signed P-256 leaf made with rcgen, and its key.
    pub(crate) fn test_signer() -> RequestSigner {
        let key_pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let params =
            rcgen::CertificateParams::new(vec!["verifier.example".into()]).expect("params");
        let cert = params.self_signed(&key_pair).expect("cert");
        let key = SigningKey::from_pkcs8_der(&key_pair.serialize_der()).expect("pkcs8");
        RequestSigner::new(key, vec![cert.der().to_vec()]).expect("signer")
    }

    #[test]
    fn key_must_match_the_leaf() {
        let signer = test_signer();
        let other = SigningKey::from_slice(&[7; 32]).expect("key");
        assert_eq!(
            RequestSigner::new(other.clone(), signer.chain.clone()).err(),
            Some(SignerError::KeyMismatch)
        );
        assert_eq!(
            RequestSigner::new(other.clone(), vec![]).err(),
            Some(SignerError::EmptyChain)
        );
        assert!(matches!(
            RequestSigner::new(other, vec![vec![0x30, 0x00]]),
            Err(SignerError::BadLeaf(_))
        ));
    }

    #[test]
    fn client_id_is_the_leaf_hash() {
        let signer = test_signer();
        let expected = b64url(&Sha256::digest(&signer.chain[0]));
        assert_eq!(signer.client_id(), format!("x509_hash:{expected}"));
        assert_eq!(signer.client_id().len(), "x509_hash:".len() + 43);
    }

    #[test]
    fn jws_verifies_with_the_leaf_key() {
        let signer = test_signer();
        let jws = signer.jws("oauth-authz-req+jwt", br#"{"a":1}"#);
        let parsed = jose::Jws::parse(&jws, &[jose::Alg::Es256]).expect("jws");
        assert_eq!(parsed.x5c(), Some(Ok(signer.chain.clone())));
        let verified = parsed
            .verify(&jose::PublicKey::P256(*signer.key.verifying_key()))
            .expect("verifies");
        assert_eq!(verified.header["alg"], "ES256");
        assert_eq!(verified.header["typ"], "oauth-authz-req+jwt");
        assert_eq!(verified.payload, br#"{"a":1}"#);
    }

    /// The project's own COSE_Sign1 verifier (src/mdoc/cose.rs) accepts the readerAuth.
    #[test]
    fn cose_sign1_verifies_with_the_mdoc_verifier() {
        let signer = test_signer();
        let sign1 = signer.cose_sign1_detached(b"reader authentication bytes");
        let value = crate::mdoc::cbor::decode(&sign1).expect("cbor");
        let parsed = crate::mdoc::cose::Sign1::parse(&value).expect("es256 sign1");
        assert_eq!(parsed.payload(), None);
        assert!(parsed.verify(
            signer.key.verifying_key(),
            Some(b"reader authentication bytes")
        ));
        assert!(!parsed.verify(signer.key.verifying_key(), Some(b"other")));
        assert_eq!(parsed.x5chain_leaf().ok(), Some(&signer.chain[0][..]));
    }
}
