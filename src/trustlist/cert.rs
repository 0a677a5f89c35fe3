//! List signers' certificates: RSA (the EU signs its lists with RSA) or ECDSA P-256/P-384
//! keys, the signature checks a list signature and a certificate chain need, and the
//! chain from a list's signer to a pinned certificate.

use der::asn1::ObjectIdentifier;
use der::{Decode, Encode, Header, Reader, SliceReader, Tagged};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use rsa::pkcs1v15::Pkcs1v15Sign;
use rsa::pkcs8::DecodePublicKey;
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256, Sha384, Sha512};
use x509_cert::Certificate;

/// RSA keys shorter than this are refused (they are breakable, and no list uses one).
const MIN_RSA_BITS: usize = 2048;
/// Longest chain followed from a list's signer to a pinned certificate.
const MAX_CHAIN: usize = 4;

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

/// How a signature value is encoded: ECDSA as `r || s` (XML signatures, JWS) or DER
/// (X.509); RSA is the same in both.
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

#[derive(Clone, Debug)]
pub enum PublicKey {
    Rsa(rsa::RsaPublicKey),
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
}

impl PublicKey {
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

/// A certificate that can sign a list or a list signer's certificate.
#[derive(Clone, Debug)]
pub struct SignerCert {
    der: Vec<u8>,
    tbs: Vec<u8>,
    issuer: Vec<u8>,
    subject: Vec<u8>,
    not_before: i64,
    not_after: i64,
    /// How its issuer signed it; None when the algorithm is not one agegate checks.
    signed_with: Option<(Scheme, Hash)>,
    signature: Vec<u8>,
    /// basicConstraints says cA: it may stand between a signer and the pinned one.
    is_ca: bool,
    pub key: PublicKey,
    /// The subject's organizationName (O) and countryName (C) values, for the list
    /// signer's name check (docs/trust.md#what-agegate-checks-in-a-trusted-list).
    pub organizations: Vec<String>,
    pub countries: Vec<String>,
}

impl SignerCert {
    /// Parses a DER certificate; Err says why it cannot be a list signer.
    pub fn from_der(der: &[u8]) -> Result<SignerCert, String> {
        let cert = Certificate::from_der(der).map_err(|e| format!("not a certificate: {e}"))?;
        let tbs_cert = &cert.tbs_certificate;
        let tbs = tbs_bytes(der).map_err(|e| format!("not a certificate: {e}"))?;
        let unix = |t: x509_cert::time::Time| i64::try_from(t.to_unix_duration().as_secs());
        let spki_der = tbs_cert
            .subject_public_key_info
            .to_der()
            .map_err(|e| e.to_string())?;
        let key = if let Ok(k) = rsa::RsaPublicKey::from_public_key_der(&spki_der) {
            if k.n().bits() < MIN_RSA_BITS {
                return Err(format!("rsa key shorter than {MIN_RSA_BITS} bits"));
            }
            PublicKey::Rsa(k)
        } else if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_der(&spki_der) {
            PublicKey::P256(k)
        } else if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_der(&spki_der) {
            PublicKey::P384(k)
        } else {
            return Err("key is not rsa, p-256 or p-384".into());
        };
        let alg = &cert.signature_algorithm;
        let params_null = alg
            .parameters
            .as_ref()
            .is_none_or(|p| p.tag() == der::Tag::Null && p.value().is_empty());
        let signed_with = if tbs_cert.signature != *alg {
            None
        } else {
            match alg.oid.to_string().as_str() {
                "1.2.840.113549.1.1.11" if params_null => Some((Scheme::RsaPkcs1, Hash::Sha256)),
                "1.2.840.113549.1.1.12" if params_null => Some((Scheme::RsaPkcs1, Hash::Sha384)),
                "1.2.840.113549.1.1.13" if params_null => Some((Scheme::RsaPkcs1, Hash::Sha512)),
                "1.2.840.10045.4.3.2" if alg.parameters.is_none() => {
                    Some((Scheme::Ecdsa, Hash::Sha256))
                }
                "1.2.840.10045.4.3.3" if alg.parameters.is_none() => {
                    Some((Scheme::Ecdsa, Hash::Sha384))
                }
                "1.2.840.10045.4.3.4" if alg.parameters.is_none() => {
                    Some((Scheme::Ecdsa, Hash::Sha512))
                }
                _ => None,
            }
        };
        Ok(SignerCert {
            der: der.to_vec(),
            tbs: tbs.to_vec(),
            issuer: tbs_cert.issuer.to_der().map_err(|e| e.to_string())?,
            subject: tbs_cert.subject.to_der().map_err(|e| e.to_string())?,
            not_before: unix(tbs_cert.validity.not_before).map_err(|e| e.to_string())?,
            not_after: unix(tbs_cert.validity.not_after).map_err(|e| e.to_string())?,
            signed_with,
            signature: cert
                .signature
                .as_bytes()
                .ok_or("signature has unused bits")?
                .to_vec(),
            is_ca: crate::mdoc::x509::is_ca(der),
            key,
            organizations: name_values(&tbs_cert.subject, ORGANIZATION_NAME),
            countries: name_values(&tbs_cert.subject, COUNTRY_NAME),
        })
    }

    pub fn der(&self) -> &[u8] {
        &self.der
    }

    fn valid_at(&self, now: i64) -> bool {
        self.not_before <= now && now <= self.not_after
    }

    fn is_signed_by(&self, issuer: &SignerCert) -> bool {
        self.issuer == issuer.subject
            && self.signed_with.is_some_and(|(scheme, hash)| {
                issuer
                    .key
                    .verifies(scheme, hash, &self.tbs, &self.signature, Encoding::Der)
            })
    }
}

/// Why a list's signer is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("signer is not a pinned certificate and does not chain to one")]
    Untrusted,
    #[error("signer's chain has a certificate that is not valid now")]
    NotValidNow,
    #[error("signer's chain has an intermediate that is not a CA")]
    IntermediateNotCa,
}

/// Checks that `chain[0]` (the signer) is a pinned certificate, or is signed by one, or
/// by `chain[1]` which is in turn…, each certificate on the way valid at `now` (a
/// pinned certificate too: an expired pin is the operator's to renew), and each between
/// the signer and the pinned one a CA (else any certificate the pinned CA issued, a
/// TLS server's say, could vouch for a list signer).
pub fn check_chain(
    chain: &[SignerCert],
    pinned: &[SignerCert],
    now: i64,
) -> Result<(), ChainError> {
    let mut current = chain.first().ok_or(ChainError::Untrusted)?;
    for step in 0..MAX_CHAIN {
        if !current.valid_at(now) {
            return Err(ChainError::NotValidNow);
        }
        if pinned.iter().any(|p| p.der == current.der) {
            return Ok(());
        }
        let by_pin: Vec<&SignerCert> = pinned.iter().filter(|p| current.is_signed_by(p)).collect();
        if !by_pin.is_empty() {
            return if by_pin.iter().any(|p| p.valid_at(now)) {
                Ok(())
            } else {
                Err(ChainError::NotValidNow)
            };
        }
        current = chain
            .iter()
            .skip(1)
            .find(|c| current.is_signed_by(c) && c.der != current.der)
            .ok_or(ChainError::Untrusted)?;
        // The pinned one itself is the operator's choice, CA or not.
        if !current.is_ca && !pinned.iter().any(|p| p.der == current.der) {
            return Err(ChainError::IntermediateNotCa);
        }
        let _ = step;
    }
    Err(ChainError::Untrusted)
}

const COUNTRY_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.6");
const ORGANIZATION_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.10");

/// The values of one attribute type in a name, as text; a value in a string type that
/// is not text-compatible (e.g. TeletexString) is left out, so it matches nothing.
fn name_values(name: &x509_cert::name::Name, oid: ObjectIdentifier) -> Vec<String> {
    name.0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .filter(|atv| atv.oid == oid)
        .filter_map(|atv| {
            let bytes = atv.value.value();
            match atv.value.tag() {
                der::Tag::Utf8String | der::Tag::PrintableString | der::Tag::Ia5String => {
                    std::str::from_utf8(bytes).ok().map(str::to_owned)
                }
                der::Tag::BmpString if bytes.len() % 2 == 0 => char::decode_utf16(
                    bytes
                        .chunks_exact(2)
                        .map(|c| u16::from_be_bytes([c[0], c[1]])),
                )
                .collect::<Result<String, _>>()
                .ok(),
                _ => None,
            }
        })
        .collect()
}

/// The `tbsCertificate` TLV of a DER certificate, sliced from the input (its issuer
/// signed exactly these bytes).
fn tbs_bytes(der: &[u8]) -> der::Result<&[u8]> {
    let mut reader = SliceReader::new(der)?;
    let outer = Header::decode(&mut reader)?;
    outer.tag.assert_eq(der::Tag::Sequence)?;
    reader.tlv_bytes()
}
