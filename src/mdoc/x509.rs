//! Trust anchors and the one-link chain check: the document signer certificate is a
//! trust anchor itself, or is signed by one. Extensions are never decoded (x509-cert
//! keeps them as opaque octets), so the EU test issuers' unusual IssuerAltName and EKU
//! cannot make parsing fail, and no extended key usage is required.

use der::{Decode, Encode, Header, Reader, SliceReader};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use sha2::{Digest, Sha256, Sha384};
use x509_cert::Certificate;

use super::{AnchorError, CertRole, PresentationError};

const OID_EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
const OID_P256: &str = "1.2.840.10045.3.1.7";
const OID_P384: &str = "1.3.132.0.34";
const OID_ECDSA_SHA256: &str = "1.2.840.10045.4.3.2";
const OID_ECDSA_SHA384: &str = "1.2.840.10045.4.3.3";

/// An EC public key of a supported curve.
#[derive(Clone, Debug)]
pub(crate) enum EcKey {
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
}

/// The parts of a certificate the checks use, with the signed bytes kept as received.
#[derive(Clone, Debug)]
pub(crate) struct ParsedCert {
    der: Vec<u8>,
    /// The `tbsCertificate` TLV sliced from the input, not re-encoded: the issuer's
    /// signature covers exactly these bytes.
    tbs: Vec<u8>,
    issuer: Vec<u8>,
    subject: Vec<u8>,
    not_before: i64,
    not_after: i64,
    signature_alg: String,
    signature: Option<Vec<u8>>,
    pub(crate) key: EcKey,
}

/// Why a certificate is unusable.
#[derive(Debug)]
pub(crate) enum CertError {
    Malformed(String),
    UnsupportedKey(String),
}

impl ParsedCert {
    /// Issuer and subject are the same name: a root (or a self-signed leaf).
    pub(crate) fn is_self_issued(&self) -> bool {
        self.issuer == self.subject
    }

    pub(crate) fn from_der(der: &[u8]) -> Result<ParsedCert, CertError> {
        let malformed = |e: der::Error| CertError::Malformed(e.to_string());
        let cert = Certificate::from_der(der).map_err(malformed)?;
        let tbs = tbs_bytes(der).map_err(malformed)?;
        let tbs_cert = &cert.tbs_certificate;
        let unix = |t: x509_cert::time::Time| {
            i64::try_from(t.to_unix_duration().as_secs())
                .map_err(|_| CertError::Malformed("validity date out of range".into()))
        };
        let spki = &tbs_cert.subject_public_key_info;
        let key_bits = spki
            .subject_public_key
            .as_bytes()
            .ok_or_else(|| CertError::Malformed("public key bit string has unused bits".into()))?;
        let alg = spki.algorithm.oid.to_string();
        let curve = spki
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.decode_as::<der::asn1::ObjectIdentifier>().ok())
            .map(|oid| oid.to_string());
        let key = match (alg.as_str(), curve.as_deref()) {
            (OID_EC_PUBLIC_KEY, Some(OID_P256)) => {
                p256::ecdsa::VerifyingKey::from_sec1_bytes(key_bits)
                    .map(EcKey::P256)
                    .map_err(|_| CertError::Malformed("invalid P-256 public key".into()))?
            }
            (OID_EC_PUBLIC_KEY, Some(OID_P384)) => {
                p384::ecdsa::VerifyingKey::from_sec1_bytes(key_bits)
                    .map(EcKey::P384)
                    .map_err(|_| CertError::Malformed("invalid P-384 public key".into()))?
            }
            (OID_EC_PUBLIC_KEY, curve) => {
                return Err(CertError::UnsupportedKey(format!(
                    "EC curve {} is not P-256 or P-384",
                    curve.unwrap_or("(none)")
                )))
            }
            (other, _) => {
                return Err(CertError::UnsupportedKey(format!(
                    "key algorithm {other} is not EC (P-256 or P-384)"
                )))
            }
        };
        Ok(ParsedCert {
            der: der.to_vec(),
            tbs: tbs.to_vec(),
            issuer: tbs_cert.issuer.to_der().map_err(malformed)?,
            subject: tbs_cert.subject.to_der().map_err(malformed)?,
            not_before: unix(tbs_cert.validity.not_before)?,
            not_after: unix(tbs_cert.validity.not_after)?,
            // Parameters must be absent for ECDSA (RFC 5758 section 3.2), and the signed copy
            // of the algorithm must match the outer one (RFC 5280 section 4.1.1.2); otherwise
            // no algorithm is recorded and no signature by this certificate's issuer
            // can verify.
            signature_alg: if cert.signature_algorithm.parameters.is_none()
                && tbs_cert.signature == cert.signature_algorithm
            {
                cert.signature_algorithm.oid.to_string()
            } else {
                String::new()
            },
            signature: cert.signature.as_bytes().map(<[u8]>::to_vec),
            key,
        })
    }

    /// Whether `issuer`'s key made this certificate's signature: names match and the
    /// ECDSA signature (DER-encoded, SHA-256 or SHA-384) verifies over the TBS bytes.
    pub(crate) fn is_signed_by(&self, issuer: &ParsedCert) -> bool {
        if self.issuer != issuer.subject {
            return false;
        }
        let Some(signature) = self.signature.as_deref() else {
            return false;
        };
        let prehash: Vec<u8> = match self.signature_alg.as_str() {
            OID_ECDSA_SHA256 => Sha256::digest(&self.tbs).to_vec(),
            OID_ECDSA_SHA384 => Sha384::digest(&self.tbs).to_vec(),
            _ => return false,
        };
        match &issuer.key {
            EcKey::P256(k) => p256::ecdsa::Signature::from_der(signature)
                .is_ok_and(|s| k.verify_prehash(&prehash, &s).is_ok()),
            EcKey::P384(k) => p384::ecdsa::Signature::from_der(signature)
                .is_ok_and(|s| k.verify_prehash(&prehash, &s).is_ok()),
        }
    }

    /// The certificate as received (DER).
    pub(crate) fn der(&self) -> &[u8] {
        &self.der
    }

    /// `notBefore` and `notAfter`, Unix seconds.
    pub(crate) fn validity(&self) -> (i64, i64) {
        (self.not_before, self.not_after)
    }

    fn check_validity(&self, now: i64, role: CertRole) -> Result<(), PresentationError> {
        if now < self.not_before {
            Err(PresentationError::CertificateNotYetValid(role))
        } else if now > self.not_after {
            Err(PresentationError::CertificateExpired(role))
        } else {
            Ok(())
        }
    }
}

/// The `tbsCertificate` TLV of a DER certificate, sliced from the input.
fn tbs_bytes(der: &[u8]) -> der::Result<&[u8]> {
    let mut reader = SliceReader::new(der)?;
    let outer = Header::decode(&mut reader)?;
    outer.tag.assert_eq(der::Tag::Sequence)?;
    reader.tlv_bytes()
}

/// One PEM block: its label and DER contents, or why they cannot be read.
pub(crate) type PemBlock = Result<(String, Vec<u8>), String>;

/// The PEM blocks of `pem` as (label, DER) or why a block is unreadable. Text around
/// the blocks (comments, as in CA bundles) is skipped, since `pem-rfc7468` reads one
/// document alone; each block it then decodes strictly (label grammar, padded base64).
pub(crate) fn pem_blocks(pem: &str) -> Result<Vec<PemBlock>, AnchorError> {
    let boundary = |line: &str, kind: &str| -> Option<String> {
        let label = line.strip_prefix(kind)?.strip_suffix("-----")?;
        Some(label.to_owned())
    };
    let mut blocks = Vec::new();
    let mut lines = pem.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(label) = boundary(line, "-----BEGIN ") else {
            continue;
        };
        let mut body = Vec::new();
        let end = loop {
            let Some(line) = lines.next() else {
                let n = blocks.len() + 1;
                return Err(AnchorError::Malformed(format!("block {n}: no END line")));
            };
            match boundary(line, "-----END ") {
                Some(end) => break end,
                None if line.is_empty() => {}
                None => body.push(line),
            }
        };
        blocks.push(if end == label {
            pem_block(&label, &body)
        } else {
            Err(format!("BEGIN {label} ends with END {end}"))
        });
    }
    Ok(blocks)
}

/// One block's DER, by `pem-rfc7468`. It wants every line but the last to be one width;
/// that width is taken from the first line, so bundles wrapped at 76 (as some tools
/// write them) or with CRLF read as well as RFC 7468's 64.
fn pem_block(label: &str, body: &[&str]) -> PemBlock {
    let width = body
        .first()
        .map_or(pem_rfc7468::BASE64_WRAP_WIDTH, |l| l.len());
    let text = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    );
    let mut der = Vec::new();
    pem_rfc7468::Decoder::new_wrapped(text.as_bytes(), width)
        .and_then(|mut decoder| decoder.decode_to_end(&mut der).map(|_| ()))
        .map(|()| (label.to_owned(), der))
        .map_err(|e| format!("invalid PEM ({e})"))
}

/// One trust anchor as [`TrustAnchors::summaries`] describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorSummary {
    /// The subject's distinguished name (RFC 4514).
    pub subject: String,
    /// Unix seconds.
    pub not_after: i64,
    /// SHA-256 of the certificate's DER.
    pub sha256: [u8; 32],
}

/// Operator-configured trust anchors (X.509 CA certificates) for Proof of Age issuers.
#[derive(Clone)]
pub struct TrustAnchors {
    anchors: Vec<ParsedCert>,
}

/// Brief: the anchors' bytes and keys would only clutter logs of the configuration.
impl std::fmt::Debug for TrustAnchors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustAnchors")
            .field("len", &self.anchors.len())
            .finish()
    }
}

impl TrustAnchors {
    /// Parses a PEM bundle of one or more CERTIFICATE blocks. Text outside the blocks
    /// (comments, as in CA bundles) is ignored; any other block type is an error, since
    /// a key or CSR in this file is surely a mistake.
    pub fn from_pem(pem: &str) -> Result<TrustAnchors, AnchorError> {
        let mut anchors = Vec::new();
        for (i, block) in pem_blocks(pem)?.into_iter().enumerate() {
            let n = i + 1;
            let (label, der) =
                block.map_err(|why| AnchorError::Malformed(format!("block {n}: {why}")))?;
            if label != "CERTIFICATE" {
                return Err(AnchorError::Malformed(format!(
                    "block {n}: a {label} block, not a CERTIFICATE"
                )));
            }
            let cert = ParsedCert::from_der(&der).map_err(|e| match e {
                CertError::Malformed(why) => AnchorError::Malformed(format!("block {n}: {why}")),
                CertError::UnsupportedKey(why) => {
                    AnchorError::Unsupported(format!("block {n}: {why}"))
                }
            })?;
            anchors.push(cert);
        }
        if anchors.is_empty() {
            return if pem.trim().is_empty() {
                Err(AnchorError::Empty)
            } else {
                Err(AnchorError::Malformed(
                    "no PEM CERTIFICATE block found".into(),
                ))
            };
        }
        Ok(TrustAnchors { anchors })
    }

    /// Every anchor of `sets`, in order, each once.
    pub fn merged<'a>(sets: impl IntoIterator<Item = &'a TrustAnchors>) -> TrustAnchors {
        let mut anchors: Vec<ParsedCert> = Vec::new();
        for cert in sets.into_iter().flat_map(|s| s.anchors.iter()) {
            if !anchors.iter().any(|a| a.der == cert.der) {
                anchors.push(cert.clone());
            }
        }
        TrustAnchors { anchors }
    }

    /// Anchors from DER certificates (a VICAL's, say), in the given order.
    pub fn from_ders<'a>(
        ders: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<TrustAnchors, AnchorError> {
        let mut anchors = Vec::new();
        for (i, der) in ders.into_iter().enumerate() {
            let n = i + 1;
            anchors.push(ParsedCert::from_der(der).map_err(|e| match e {
                CertError::Malformed(why) => {
                    AnchorError::Malformed(format!("certificate {n}: {why}"))
                }
                CertError::UnsupportedKey(why) => {
                    AnchorError::Unsupported(format!("certificate {n}: {why}"))
                }
            })?);
        }
        if anchors.is_empty() {
            return Err(AnchorError::Empty);
        }
        Ok(TrustAnchors { anchors })
    }

    /// The anchors, in order.
    pub(crate) fn certs(&self) -> &[ParsedCert] {
        &self.anchors
    }

    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// What a person needs to tell the anchors apart, in the file's order.
    pub fn summaries(&self) -> Vec<AnchorSummary> {
        self.anchors
            .iter()
            .map(|a| AnchorSummary {
                subject: x509_cert::name::Name::from_der(&a.subject)
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "(unreadable subject)".into()),
                not_after: a.not_after,
                sha256: Sha256::digest(&a.der).into(),
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// SHA-256 over the anchors' DER, in order: names this set (what a status list's
    /// signer was found to chain to).
    pub fn identity(&self) -> [u8; 32] {
        let mut hash = Sha256::new();
        for a in &self.anchors {
            hash.update(Sha256::digest(&a.der));
        }
        hash.finalize().into()
    }

    /// Checks that `signer` is an anchor (DER-equal) or is signed by one, and that it
    /// and that anchor are valid at `now`. When several anchors verify it (a renewed
    /// CA with the same name and key), one valid now suffices. Returns the SHA-256 of
    /// that anchor's DER, which a receipt names.
    pub(crate) fn check_signer(
        &self,
        signer: &ParsedCert,
        now: i64,
    ) -> Result<[u8; 32], PresentationError> {
        let issuers: Vec<&ParsedCert> = self
            .anchors
            .iter()
            .filter(|a| a.der == signer.der || signer.is_signed_by(a))
            .collect();
        let Some(first) = issuers.first() else {
            return Err(PresentationError::UntrustedIssuer);
        };
        signer.check_validity(now, CertRole::DocumentSigner)?;
        let fingerprint = |a: &ParsedCert| -> [u8; 32] { Sha256::digest(&a.der).into() };
        if let Some(valid) = issuers
            .iter()
            .find(|a| a.check_validity(now, CertRole::TrustAnchor).is_ok())
        {
            return Ok(fingerprint(valid));
        }
        first.check_validity(now, CertRole::TrustAnchor)?;
        Ok(fingerprint(first))
    }

    /// [`TrustAnchors::check_signer`] for a chain, leaf first: the leaf is an anchor or
    /// signed by one, or by `chain[1]`, a CA that is an anchor or signed by one, and so
    /// on; every certificate of the chain followed is valid at `now`.
    pub(crate) fn check_chain(
        &self,
        chain: &[ParsedCert],
        now: i64,
    ) -> Result<[u8; 32], PresentationError> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err(PresentationError::UntrustedIssuer);
        };
        leaf.check_validity(now, CertRole::DocumentSigner)?;
        let mut current = leaf;
        for next in intermediates {
            match self.check_signer(current, now) {
                Err(PresentationError::UntrustedIssuer) => {}
                done => return done,
            }
            // An intermediate must be a CA, or any certificate an anchor issued could
            // vouch for a document signer.
            if !current.is_signed_by(next) || !is_ca(&next.der) {
                return Err(PresentationError::UntrustedIssuer);
            }
            next.check_validity(now, CertRole::Intermediate)?;
            current = next;
        }
        self.check_signer(current, now)
    }
}

/// The basicConstraints extension (RFC 5280 section 4.2.1.9).
const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";

/// Whether the certificate's basicConstraints says cA (RFC 5280 section 4.2.1.9): an
/// intermediate must be a CA, or any certificate the anchor issued could sign a VICAL.
pub(crate) fn is_ca(der: &[u8]) -> bool {
    use der::Decode;
    use x509_cert::ext::pkix::BasicConstraints;
    let Ok(cert) = x509_cert::Certificate::from_der(der) else {
        return false;
    };
    let mut found = cert
        .tbs_certificate
        .extensions
        .iter()
        .flatten()
        .filter(|e| e.extn_id.to_string() == OID_BASIC_CONSTRAINTS);
    match (found.next(), found.next()) {
        (Some(ext), None) => {
            BasicConstraints::from_der(ext.extn_value.as_bytes()).is_ok_and(|bc| bc.ca)
        }
        _ => false,
    }
}
