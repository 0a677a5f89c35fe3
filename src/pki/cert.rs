//! A certificate, parsed once: the parts the checks use, the signed bytes kept exactly as
//! received (the issuer's signature covers those, not a re-encoding).

use der::asn1::ObjectIdentifier;
use der::{Decode, Encode, Header, Reader, SliceReader, Tagged};
use sha2::{Digest, Sha256};
use x509_cert::ext::pkix::BasicConstraints;

use super::key::{Encoding, Hash, PublicKey, Scheme};

const OID_BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const COUNTRY_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.6");
const ORGANIZATION_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.10");

/// Why a certificate is unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertError {
    Malformed(String),
    /// Its key is not one agegate verifies with (or not one this use accepts).
    UnsupportedKey(String),
}

impl std::fmt::Display for CertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CertError::Malformed(why) | CertError::UnsupportedKey(why) => f.write_str(why),
        }
    }
}

/// A parsed X.509 certificate.
#[derive(Clone, Debug)]
pub struct Cert {
    der: Vec<u8>,
    /// The `tbsCertificate` TLV sliced from the input, not re-encoded.
    tbs: Vec<u8>,
    issuer: Vec<u8>,
    subject: Vec<u8>,
    not_before: i64,
    not_after: i64,
    /// How its issuer signed it; None when the algorithm is not one agegate checks, or
    /// its signed copy differs from the outer one (RFC 5280 section 4.1.1.2): then no
    /// issuer's signature can verify.
    signed_with: Option<(Scheme, Hash)>,
    signature: Option<Vec<u8>>,
    /// basicConstraints (once, decodable) says cA.
    is_ca: bool,
    pub key: PublicKey,
}

impl Cert {
    /// Parses a DER certificate with any key agegate verifies with (RSA, P-256, P-384).
    pub fn from_der(der: &[u8]) -> Result<Cert, CertError> {
        let malformed = |e: der::Error| CertError::Malformed(e.to_string());
        let cert = x509_cert::Certificate::from_der(der).map_err(malformed)?;
        let tbs = tbs_bytes(der).map_err(malformed)?;
        let tbs_cert = &cert.tbs_certificate;
        let unix = |t: x509_cert::time::Time| {
            i64::try_from(t.to_unix_duration().as_secs())
                .map_err(|_| CertError::Malformed("validity date out of range".into()))
        };
        let key = PublicKey::from_spki(&tbs_cert.subject_public_key_info)?;
        let alg = &cert.signature_algorithm;
        let params_null = alg
            .parameters
            .as_ref()
            .is_none_or(|p| p.tag() == der::Tag::Null && p.value().is_empty());
        // Parameters absent for ECDSA (RFC 5758 section 3.2), NULL or absent for RSA.
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
        let mut constraints = tbs_cert
            .extensions
            .iter()
            .flatten()
            .filter(|e| e.extn_id == OID_BASIC_CONSTRAINTS);
        let is_ca = match (constraints.next(), constraints.next()) {
            (Some(ext), None) => {
                BasicConstraints::from_der(ext.extn_value.as_bytes()).is_ok_and(|bc| bc.ca)
            }
            _ => false,
        };
        Ok(Cert {
            der: der.to_vec(),
            tbs: tbs.to_vec(),
            issuer: tbs_cert.issuer.to_der().map_err(malformed)?,
            subject: tbs_cert.subject.to_der().map_err(malformed)?,
            not_before: unix(tbs_cert.validity.not_before)?,
            not_after: unix(tbs_cert.validity.not_after)?,
            signed_with,
            signature: cert.signature.as_bytes().map(<[u8]>::to_vec),
            is_ca,
            key,
        })
    }

    /// [`Cert::from_der`] for the uses that take EC keys only (mdoc issuers, VICAL,
    /// status list signers, readerAuth): an RSA key is `UnsupportedKey`.
    pub fn from_der_ec(der: &[u8]) -> Result<Cert, CertError> {
        let cert = Cert::from_der(der)?;
        if !cert.key.is_ec() {
            return Err(CertError::UnsupportedKey(
                "key algorithm 1.2.840.113549.1.1.1 is not EC (P-256 or P-384)".into(),
            ));
        }
        Ok(cert)
    }

    /// The certificate as received (DER).
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// `notBefore` and `notAfter`, Unix seconds.
    pub fn validity(&self) -> (i64, i64) {
        (self.not_before, self.not_after)
    }

    pub fn valid_at(&self, now: i64) -> bool {
        self.not_before <= now && now <= self.not_after
    }

    /// Issuer and subject are the same name: a root (or a self-signed leaf).
    pub fn is_self_issued(&self) -> bool {
        self.issuer == self.subject
    }

    /// basicConstraints says cA.
    pub fn is_ca(&self) -> bool {
        self.is_ca
    }

    /// Whether `issuer`'s key made this certificate's signature: names match and the
    /// signature (RSA PKCS#1 v1.5 or ECDSA, SHA-256/384/512) verifies over the TBS bytes.
    pub fn is_signed_by(&self, issuer: &Cert) -> bool {
        self.issuer == issuer.subject
            && match (self.signed_with, self.signature.as_deref()) {
                (Some((scheme, hash)), Some(signature)) => {
                    issuer
                        .key
                        .verifies(scheme, hash, &self.tbs, signature, Encoding::Der)
                }
                _ => false,
            }
    }

    /// SHA-256 of the DER.
    pub fn sha256(&self) -> [u8; 32] {
        Sha256::digest(&self.der).into()
    }

    /// The subject's distinguished name (RFC 4514).
    pub fn subject_name(&self) -> String {
        x509_cert::name::Name::from_der(&self.subject)
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "(unreadable subject)".into())
    }

    /// The subject's organizationName (O) values, as text.
    pub fn organizations(&self) -> Vec<String> {
        self.name_values(ORGANIZATION_NAME)
    }

    /// The subject's countryName (C) values, as text.
    pub fn countries(&self) -> Vec<String> {
        self.name_values(COUNTRY_NAME)
    }

    /// The values of one attribute type in the subject, as text; a value in a string
    /// type that is not text-compatible (e.g. TeletexString) is left out, so it matches
    /// nothing.
    fn name_values(&self, oid: ObjectIdentifier) -> Vec<String> {
        let Ok(name) = x509_cert::name::Name::from_der(&self.subject) else {
            return Vec::new();
        };
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
}

/// The `tbsCertificate` TLV of a DER certificate, sliced from the input.
fn tbs_bytes(der: &[u8]) -> der::Result<&[u8]> {
    let mut reader = SliceReader::new(der)?;
    let outer = Header::decode(&mut reader)?;
    outer.tag.assert_eq(der::Tag::Sequence)?;
    reader.tlv_bytes()
}
