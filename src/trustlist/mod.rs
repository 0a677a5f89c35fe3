//! Signed lists of trust anchors, verified: the EU age-verification trusted list (ETSI
//! TS 119 612, XML with an enveloped XAdES signature) and the EU lists of PID and mDL
//! providers (ETSI TS 119 602, JSON in a JWS). Pure and total: bytes, pinned
//! signer certificates and `now` in; anchors or one reason out; no I/O, no clock, no
//! panics. See docs/trust.md#where-trust-anchors-come-from.
//!
//! Why an in-house verifier on `roxmltree` + `rsa` + `p256`/`p384` rather than a crate:
//! - `bergshamra` (pure Rust, complete XML-DSig/XML-Enc) needs a newer Rust than our
//!   `rust-version`, brings its own XML parser and a second generation of RustCrypto,
//!   and implements far more than a list needs (XPath, encryption, HMAC, key transport):
//!   every feature is an attack surface we would then have to switch off and audit.
//! - `xmlsec` bindings wrap libxmlsec1/libxml2 (C, `unsafe`, a system library to ship),
//!   and are just as general.
//! - The profile is narrow (one enveloped signature, two reference shapes, three
//!   canonicalisations, RSA/ECDSA): refusing everything else is the point, and a small
//!   verifier can refuse by construction. Its canonicalisation is checked against
//!   lists signed by `signxml` and `xmlsec1` (src/trustlist/testdata, made by
//!   scripts/trustlist-fixtures.py).

pub mod c14n;
pub mod cert;
mod json;
pub mod lote;
mod text;
pub mod tsl;
pub mod xmldsig;

#[cfg(test)]
mod chain_tests;
#[cfg(test)]
mod lote_tests;
#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tsl_tests;

pub use cert::SignerCert;
pub use lote::{lote, EntityList, LoteKind};
pub use tsl::{eu_av_list, ListError, TrustedList};

/// Largest list accepted (the same cap as a fetch): the EU's is about 70 KB.
pub const MAX_LIST_BYTES: usize = 8 * 1024 * 1024;

/// Most XML nodes parsed; a 500-provider list has some 20 000.
const MAX_NODES: u32 = 1_000_000;

/// The pinned signer certificates of a PEM file (`--eu-av-trusted-list-signer`).
pub fn signers_from_pem(pem: &str) -> Result<Vec<SignerCert>, String> {
    let certs =
        crate::pki::certificates_from_pem(pem, SignerCert::from_der).map_err(|(n, e)| match n {
            0 => e.to_string(),
            n => format!("block {n}: {e}"),
        })?;
    if certs.is_empty() {
        return Err("no certificate".into());
    }
    Ok(certs)
}

/// Parses XML with no DTD (so no entities), a node limit, and the size cap.
pub(crate) fn parse_xml(bytes: &[u8]) -> Result<roxmltree::Document<'_>, ListError> {
    if bytes.len() > MAX_LIST_BYTES {
        return Err(ListError::TooLarge);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| ListError::NotXml("not utf-8".into()))?;
    // roxmltree accepts an empty `<!DOCTYPE x>`; a list has no business with one.
    if text.contains("<!DOCTYPE") || text.contains("<!ENTITY") {
        return Err(ListError::Dtd);
    }
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(text, options).map_err(|e| match e {
        roxmltree::Error::DtdDetected => ListError::Dtd,
        other => ListError::NotXml(other.to_string()),
    })
}
