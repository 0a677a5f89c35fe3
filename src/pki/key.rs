//! The one public-key type: RSA (2048 bits or more; the EU signs its lists with RSA) or
//! ECDSA P-256/P-384, and the signature checks every caller needs.

use der::asn1::ObjectIdentifier;
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use rsa::pkcs1v15::Pkcs1v15Sign;
use rsa::pkcs8::DecodePublicKey;
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256, Sha384, Sha512};

use super::CertError;

/// RSA keys shorter than this are refused (they are breakable, and no issuer uses one).
const MIN_RSA_BITS: usize = 2048;

const OID_RSA: &str = "1.2.840.113549.1.1.1";
const OID_EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
const OID_P256: &str = "1.2.840.10045.3.1.7";
const OID_P384: &str = "1.3.132.0.34";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => Sha256::digest(data).to_vec(),
            Hash::Sha384 => Sha384::digest(data).to_vec(),
            Hash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }
}

/// How a signature value is encoded: ECDSA as `r || s` (XML signatures, JWS, COSE) or
/// DER (X.509); RSA is the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Raw,
    Der,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    RsaPkcs1,
    Ecdsa,
}

/// A public key agegate can verify with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
    Rsa(rsa::RsaPublicKey),
}

impl PublicKey {
    /// The key of a DER `SubjectPublicKeyInfo`; `UnsupportedKey` for another algorithm,
    /// curve, or an RSA key that is too short.
    pub fn from_spki(spki: &x509_cert::spki::SubjectPublicKeyInfoOwned) -> Result<Self, CertError> {
        let malformed = |what: &str| CertError::Malformed(what.to_owned());
        let alg = spki.algorithm.oid.to_string();
        let curve = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
            .map(|oid| oid.to_string());
        let bits = spki
            .subject_public_key
            .as_bytes()
            .ok_or_else(|| malformed("public key bit string has unused bits"))?;
        match (alg.as_str(), curve.as_deref()) {
            (OID_EC_PUBLIC_KEY, Some(OID_P256)) => p256::ecdsa::VerifyingKey::from_sec1_bytes(bits)
                .map(PublicKey::P256)
                .map_err(|_| malformed("invalid P-256 public key")),
            (OID_EC_PUBLIC_KEY, Some(OID_P384)) => p384::ecdsa::VerifyingKey::from_sec1_bytes(bits)
                .map(PublicKey::P384)
                .map_err(|_| malformed("invalid P-384 public key")),
            (OID_EC_PUBLIC_KEY, curve) => Err(CertError::UnsupportedKey(format!(
                "EC curve {} is not P-256 or P-384",
                curve.unwrap_or("(none)")
            ))),
            (OID_RSA, _) => {
                use der::Encode;
                let der = spki.to_der().map_err(|e| malformed(&e.to_string()))?;
                let key = rsa::RsaPublicKey::from_public_key_der(&der)
                    .map_err(|_| malformed("invalid RSA public key"))?;
                if key.n().bits() < MIN_RSA_BITS {
                    return Err(CertError::UnsupportedKey(format!(
                        "rsa key shorter than {MIN_RSA_BITS} bits"
                    )));
                }
                Ok(PublicKey::Rsa(key))
            }
            (other, _) => Err(CertError::UnsupportedKey(format!(
                "key algorithm {other} is not RSA or EC (P-256 or P-384)"
            ))),
        }
    }

    /// Whether it is an EC key (what mdoc issuers, VICAL and status list signers use).
    pub fn is_ec(&self) -> bool {
        matches!(self, PublicKey::P256(_) | PublicKey::P384(_))
    }

    /// Whether `signature` over `message` verifies under this key with `scheme` and
    /// `hash`. A scheme that does not fit the key is simply false.
    pub fn verifies(
        &self,
        scheme: Scheme,
        hash: Hash,
        message: &[u8],
        signature: &[u8],
        encoding: Encoding,
    ) -> bool {
        let prehash = hash.digest(message);
        match (self, scheme) {
            (PublicKey::Rsa(key), Scheme::RsaPkcs1) => {
                let padding = match hash {
                    Hash::Sha256 => Pkcs1v15Sign::new::<Sha256>(),
                    Hash::Sha384 => Pkcs1v15Sign::new::<Sha384>(),
                    Hash::Sha512 => Pkcs1v15Sign::new::<Sha512>(),
                };
                key.verify(padding, &prehash, signature).is_ok()
            }
            (PublicKey::P256(key), Scheme::Ecdsa) => {
                let sig = match encoding {
                    Encoding::Raw => p256::ecdsa::Signature::from_slice(signature),
                    Encoding::Der => p256::ecdsa::Signature::from_der(signature),
                };
                sig.is_ok_and(|s| key.verify_prehash(&prehash, &s).is_ok())
            }
            (PublicKey::P384(key), Scheme::Ecdsa) => {
                let sig = match encoding {
                    Encoding::Raw => p384::ecdsa::Signature::from_slice(signature),
                    Encoding::Der => p384::ecdsa::Signature::from_der(signature),
                };
                sig.is_ok_and(|s| key.verify_prehash(&prehash, &s).is_ok())
            }
            _ => false,
        }
    }
}
