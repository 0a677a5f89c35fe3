//! A VICAL (ISO/IEC 18013-5 Annex C.1.7, "Verified Issuer Certificate Authority List"),
//! the signed list US states' IACA roots are published in (AAMVA's Digital Trust
//! Service). [`mdl_anchors`] checks its COSE_Sign1 against the operator's VICAL anchor
//! and returns the certificates it admits for the mDL docType. Pure and total: no I/O,
//! no clock (the caller passes `now`), and no input makes it panic.
//!
//! The COSE_Sign1 is `coset`'s (through [`super::cose`]); the list inside is read here
//! by hand because no maintained crate parses a VICAL, and its rules (which fields
//! must be unique, which docTypes count) are agegate's.
//!
//! ```text
//! VICAL = { "version": tstr, "vicalProvider": tstr, "date": tdate,
//!           ? "vicalIssueID": uint, ? "nextUpdate": tdate,
//!           "certificateInfos": [* CertificateInfo], ? "extensions": {...}, * tstr => any }
//! CertificateInfo = { "certificate": bstr (DER), "serialNumber": biguint, "ski": bstr,
//!                     ? "docType": [+ DocType], * tstr => any }
//! ```

use ciborium::Value;

use super::cbor::{self, Lookup};
use super::cose::{Sign1, Sign1Error, ALG_ES256, ALG_ES384};
use super::TrustAnchors;
use crate::pki::{self, Cert, CertError, Position, PublicKey};

/// The mDL docType: an entry whose `docType` list holds it, or has none, is admitted.
pub const MDL_DOC_TYPE: &str = "org.iso.18013.5.1.mDL";

/// Largest VICAL accepted. AAMVA's (14 roots) is about 21 KiB; this leaves room for
/// hundreds of roots and stops a wrong file (a disk image, say) before decoding.
pub const MAX_VICAL_BYTES: usize = 4 * 1024 * 1024;

/// Longest x5chain followed (signer and intermediates, and the anchor if sent).
const MAX_CHAIN: usize = 8;

/// A verified VICAL: who published it, when, and what it admits for mDL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VicalAnchors {
    /// `vicalProvider`, e.g. "AAMVA".
    pub provider: String,
    /// `date`, Unix seconds.
    pub date: i64,
    /// `vicalIssueID`, when present (unique and increasing per provider).
    pub issue_id: Option<u64>,
    /// `nextUpdate`, Unix seconds, when present: a newer VICAL is due by then.
    pub next_update: Option<i64>,
    /// DER of each admitted certificate (docType list absent or holding the mDL
    /// docType), in the VICAL's order. May be empty: that is not an error.
    pub certificates: Vec<Vec<u8>>,
    /// Entries whose docType list does not hold the mDL docType.
    pub skipped_doc_type: usize,
    /// Entries admitted by docType whose key agegate cannot verify with (neither P-256
    /// nor P-384): no mDL could be checked under them, so they are left out.
    pub skipped_unsupported_key: usize,
}

impl VicalAnchors {
    /// The admitted certificates as trust anchors; `Err(AnchorError::Empty)` when the
    /// VICAL admits none.
    pub fn trust_anchors(&self) -> Result<TrustAnchors, super::AnchorError> {
        TrustAnchors::from_ders(self.certificates.iter().map(Vec::as_slice))
    }
}

/// Which certificate of the VICAL's signing chain a failure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainCert {
    /// x5chain\[0\], the VICAL signer.
    Signer,
    /// x5chain\[n\] (n ≥ 1): an intermediate, or the anchor sent along.
    Intermediate(usize),
    /// The operator's VICAL anchor.
    Anchor,
}

impl std::fmt::Display for ChainCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainCert::Signer => f.write_str("vical signer"),
            ChainCert::Intermediate(n) => write!(f, "x5chain[{n}]"),
            ChainCert::Anchor => f.write_str("vical anchor"),
        }
    }
}

/// Why a VICAL is refused. Display is one short line without the file's name: the
/// caller prefixes it ("--mdl-vical states.vical: {error}").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VicalError {
    #[error("file is larger than {MAX_VICAL_BYTES} bytes")]
    TooLarge,
    /// Names what is wrong with the structure.
    #[error("not a signed vical (cose_sign1): {0}")]
    NotCoseSign1(&'static str),
    /// The protected header's `alg` (None: absent).
    #[error("signature algorithm {} is not es256 or es384", .0.map_or("(none)".to_owned(), |a| a.to_string()))]
    UnsupportedAlgorithm(Option<i64>),
    #[error(
        "signature algorithm does not match the signer's key (es256 needs p-256, es384 p-384)"
    )]
    AlgorithmKeyMismatch,
    #[error("no x5chain: the vical signer's certificate is missing")]
    MissingX5chain,
    #[error("malformed x5chain: {0}")]
    MalformedX5chain(String),
    #[error("x5chain is longer than {MAX_CHAIN} certificates")]
    ChainTooLong,
    #[error("vical signer does not chain to the vical anchor")]
    UntrustedSigner,
    #[error("{0} is not a ca certificate")]
    IntermediateNotCa(ChainCert),
    #[error("{0} certificate is not yet valid")]
    CertificateNotYetValid(ChainCert),
    #[error("{0} certificate has expired")]
    CertificateExpired(ChainCert),
    #[error("payload is detached")]
    DetachedPayload,
    #[error("vical signature is invalid")]
    SignatureInvalid,
    /// Names the field (as Annex C.1.7 spells it) that is missing or ill-formed.
    #[error("malformed vical payload: {0}")]
    MalformedPayload(String),
    #[error("vical has no certificateInfos")]
    NoCertificateInfos,
}

use VicalError as E;

/// Verifies `vical` (a COSE_Sign1, tag 18 or untagged) and returns the certificates it
/// admits for mDL. The signature must be ES256 (P-256 signer) or ES384 (P-384); the
/// signer is x5chain\[0\] (unprotected header, or protected); each certificate must be
/// signed by the next in x5chain until one is an anchor or is signed by one; every
/// certificate on that path, the anchor included, must be valid at `now`, and every
/// one after the signer a CA. The signature is checked before the payload is read.
pub fn mdl_anchors(
    vical: &[u8],
    vical_anchors: &TrustAnchors,
    now: i64,
) -> Result<VicalAnchors, VicalError> {
    if vical.len() > MAX_VICAL_BYTES {
        return Err(E::TooLarge);
    }
    let value = cbor::decode(vical).ok_or(E::NotCoseSign1("not a single cbor data item"))?;
    let (sign1, alg) = Sign1::parse_any_alg(&value).map_err(|e| match e {
        Sign1Error::Malformed(what) => E::NotCoseSign1(what),
        Sign1Error::NotEs256 => E::UnsupportedAlgorithm(None),
    })?;
    if !matches!(alg, Some(ALG_ES256 | ALG_ES384)) {
        return Err(E::UnsupportedAlgorithm(alg));
    }
    let ders = match sign1.x5chain() {
        None => return Err(E::MissingX5chain),
        Some(Err(why)) => return Err(E::MalformedX5chain(why.to_owned())),
        Some(Ok(ders)) if ders.len() > MAX_CHAIN => return Err(E::ChainTooLong),
        Some(Ok(ders)) => ders,
    };
    let chain = ders
        .iter()
        .enumerate()
        .map(|(i, der)| {
            Cert::from_der_ec(der).map_err(|e| {
                let why = match e {
                    CertError::Malformed(why) | CertError::UnsupportedKey(why) => why,
                };
                E::MalformedX5chain(format!("x5chain[{i}]: {why}"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_chain(&chain, vical_anchors, now)?;
    let signer = chain.first().ok_or(E::MissingX5chain)?;
    match (&signer.key, alg) {
        (PublicKey::P256(_), Some(ALG_ES256)) | (PublicKey::P384(_), Some(ALG_ES384)) => {}
        _ => return Err(E::AlgorithmKeyMismatch),
    }
    let payload = sign1.payload().ok_or(E::DetachedPayload)?;
    if !sign1.verify_ec(&signer.key) {
        return Err(E::SignatureInvalid);
    }
    parse_payload(payload)
}

/// The signer chains to the VICAL anchor ([`pki::verify_chain`]: each certificate signed
/// by the next one used, every one after the signer a CA, all and the anchor valid at
/// `now`), its failures named by their place in x5chain.
fn check_chain(chain: &[Cert], anchors: &TrustAnchors, now: i64) -> Result<(), VicalError> {
    let place = |p: Position| match p {
        Position::Leaf => ChainCert::Signer,
        Position::Intermediate(i) => ChainCert::Intermediate(i),
        Position::Anchor => ChainCert::Anchor,
    };
    match pki::verify_chain(chain, anchors.certs(), now) {
        Ok(_) => Ok(()),
        Err(pki::ChainError::NotCa(p)) => Err(E::IntermediateNotCa(place(p))),
        Err(pki::ChainError::NotYetValid(p)) => Err(E::CertificateNotYetValid(place(p))),
        Err(pki::ChainError::Expired(p)) => Err(E::CertificateExpired(place(p))),
        Err(pki::ChainError::Empty | pki::ChainError::Untrusted) => Err(E::UntrustedSigner),
    }
}

fn malformed(field: &str) -> VicalError {
    E::MalformedPayload(field.to_owned())
}

/// The signed payload. It was signed by the VICAL provider, so anything ill-formed in
/// it (an entry whose certificate is not DER X.509, a docType that is not a list of
/// text) refuses the whole file rather than the one entry: a provider that signs such
/// a list has a fault we should not guess around, and a partial list would silently
/// drop a state's root.
fn parse_payload(payload: &[u8]) -> Result<VicalAnchors, VicalError> {
    let value = cbor::decode(payload).ok_or_else(|| malformed("not a single cbor data item"))?;
    let map = cbor::as_map(&value).ok_or_else(|| malformed("VICAL is not a map"))?;
    let required = |key: &'static str| -> Result<&Value, VicalError> {
        cbor::get(map, key).map_err(|_| malformed(key))
    };
    let optional = |key: &'static str| -> Result<Option<&Value>, VicalError> {
        match cbor::get(map, key) {
            Ok(v) => Ok(Some(v)),
            Err(Lookup::Absent) => Ok(None),
            Err(Lookup::Duplicate) => Err(malformed(key)),
        }
    };
    required("version")?
        .as_text()
        .ok_or_else(|| malformed("version"))?;
    let provider = required("vicalProvider")?
        .as_text()
        .ok_or_else(|| malformed("vicalProvider"))?
        .to_owned();
    let date = tdate(required("date")?).ok_or_else(|| malformed("date"))?;
    let issue_id = optional("vicalIssueID")?
        .map(|v| cbor::uint(v).ok_or_else(|| malformed("vicalIssueID")))
        .transpose()?;
    let next_update = optional("nextUpdate")?
        .map(|v| tdate(v).ok_or_else(|| malformed("nextUpdate")))
        .transpose()?;
    let infos = match cbor::get(map, "certificateInfos") {
        Ok(Value::Array(infos)) => infos,
        Ok(_) | Err(Lookup::Duplicate) => return Err(malformed("certificateInfos")),
        Err(Lookup::Absent) => return Err(E::NoCertificateInfos),
    };
    let mut out = VicalAnchors {
        provider,
        date,
        issue_id,
        next_update,
        certificates: Vec::new(),
        skipped_doc_type: 0,
        skipped_unsupported_key: 0,
    };
    for (i, info) in infos.iter().enumerate() {
        let field = |name: &str| E::MalformedPayload(format!("certificateInfos[{i}].{name}"));
        let info = cbor::as_map(info).ok_or_else(|| field("(not a map)"))?;
        let der = cbor::get(info, "certificate")
            .ok()
            .and_then(Value::as_bytes)
            .ok_or_else(|| field("certificate"))?;
        let key_supported = match Cert::from_der_ec(der) {
            Ok(_) => true,
            Err(CertError::UnsupportedKey(_)) => false,
            Err(CertError::Malformed(_)) => return Err(field("certificate")),
        };
        // `[+ DocType]`: an empty list is not well-formed, but admits nothing either way.
        let admits_mdl = match cbor::get(info, "docType") {
            Err(Lookup::Absent) => true,
            Ok(Value::Array(types)) => {
                let texts: Option<Vec<&str>> = types.iter().map(Value::as_text).collect();
                texts
                    .ok_or_else(|| field("docType"))?
                    .contains(&MDL_DOC_TYPE)
            }
            Ok(_) | Err(Lookup::Duplicate) => return Err(field("docType")),
        };
        match (admits_mdl, key_supported) {
            (false, _) => out.skipped_doc_type += 1,
            (true, false) => out.skipped_unsupported_key += 1,
            (true, true) => out.certificates.push(der.clone()),
        }
    }
    Ok(out)
}

/// `tdate` (`#6.0(tstr)`, RFC 3339) to Unix seconds; an untagged text is taken too.
fn tdate(value: &Value) -> Option<i64> {
    let text = match value {
        Value::Tag(0, inner) => inner.as_text()?,
        other => other.as_text()?,
    };
    super::time::parse_rfc3339(text).map(|t| t.secs)
}
