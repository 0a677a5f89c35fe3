//! The EU age-verification trusted list (ETSI TS 119 612): its signature verified first
//! ([`super::xmldsig`]), then read from that same document: type, sequence number,
//! issue date, `NextUpdate`, and the certificates of the recognised proof-of-age
//! providers' current services.

use roxmltree::Node;

use super::text;
use super::xmldsig::{self, SignatureError};
use super::SignerCert;
use crate::pki::{Cert, CertError};

const NS_TSL: &str = "http://uri.etsi.org/02231/v2#";

/// A list past its `NextUpdate` by more than this contributes nothing.
pub const STALE_AFTER_SECS: i64 = 7 * 86_400;

/// `TSLType` endings of the age-verification list: the live list's (http in production,
/// https in acceptance, hence endings) and the AV specification's (its sample list).
const AV_TYPE_ENDINGS: [&str; 2] = ["/lists/age-verification/tsl-type", "/TSLType/AVTL"];
/// Service types of proof-of-age attestation providers: the live list's, and the AV
/// specification's examples.
const PAA_ENDINGS: [&str; 2] = ["/service-type/paa", "/Svctype/PAA"];
const STATUS_ENDINGS: [&str; 2] = ["/recognized", "/granted"];

/// A verified list and what it admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedList {
    pub tsl_type: String,
    pub sequence: u64,
    /// `ListIssueDateTime`, Unix seconds.
    pub issued: i64,
    /// `NextUpdate`, Unix seconds.
    pub next_update: i64,
    /// DER of each anchor, in the list's order, each once.
    pub anchors: Vec<Vec<u8>>,
    /// Recognised providers' certificates whose key agegate cannot verify with.
    pub skipped_unsupported_key: usize,
    /// The list signer's certificate (DER).
    pub signer: Vec<u8>,
}

/// Why a list is refused: one short line, which the caller prefixes with the list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("larger than {} bytes", super::MAX_LIST_BYTES)]
    TooLarge,
    #[error("has a DTD or entity declaration")]
    Dtd,
    #[error("not well-formed XML: {0}")]
    NotXml(String),
    #[error("signature refused: {0}")]
    Signature(#[from] SignatureError),
    /// A list of trusted entities' JWS or its `x5c` signer, refused.
    #[error("jws refused: {0}")]
    Jws(String),
    #[error("not a trusted list: {0} is missing or malformed")]
    Malformed(&'static str),
    /// A list of trusted entities whose signer's subject is not its operator.
    #[error(
        "signer's subject (O={organization:?}, C={country:?}) is not the list's \
         SchemeOperatorName and SchemeTerritory"
    )]
    SignerNotOperator {
        organization: String,
        country: String,
    },
    #[error("list type {0} is not the one expected")]
    WrongType(String),
    #[error("past its NextUpdate by more than 7 days")]
    Stale,
    #[error("sequence number {got} is lower than the {in_force} in force")]
    Older { got: u64, in_force: u64 },
    #[error("certificate {0} of a recognised service is not a certificate")]
    BadCertificate(usize),
}

use ListError as E;

/// Verifies and reads the age-verification trusted list in `bytes`: its signature under
/// `signers` (a pinned certificate or one chaining to it) at `now`, its type, its
/// freshness, and its sequence number against `in_force` (the list's in force, if any).
pub fn eu_av_list(
    bytes: &[u8],
    signers: &[SignerCert],
    now: i64,
    in_force: Option<u64>,
) -> Result<TrustedList, ListError> {
    let doc = super::parse_xml(bytes)?;
    let signed = xmldsig::verify(&doc, signers, now)?;
    let root = doc.root_element();
    if !root.has_tag_name((NS_TSL, "TrustServiceStatusList")) {
        return Err(E::Malformed("TrustServiceStatusList"));
    }
    let scheme = one(root, "SchemeInformation")?.ok_or(E::Malformed("SchemeInformation"))?;
    let field = |parent: Node<'_, '_>, name: &'static str| {
        one(parent, name)
            .map(text::trimmed)?
            .ok_or(E::Malformed(name))
    };
    let tsl_type = field(scheme, "TSLType")?;
    if !AV_TYPE_ENDINGS.iter().any(|e| tsl_type.ends_with(e)) {
        return Err(E::WrongType(tsl_type));
    }
    let sequence = field(scheme, "TSLSequenceNumber")?
        .parse::<u64>()
        .map_err(|_| E::Malformed("TSLSequenceNumber"))?;
    let issued =
        date_time(&field(scheme, "ListIssueDateTime")?).ok_or(E::Malformed("ListIssueDateTime"))?;
    let next_update = one(scheme, "NextUpdate")?
        .map(|n| field(n, "dateTime"))
        .and_then(Result::ok)
        .and_then(|t| date_time(&t))
        .ok_or(E::Malformed("NextUpdate"))?;
    if now > next_update.saturating_add(STALE_AFTER_SECS) {
        return Err(E::Stale);
    }
    if let Some(in_force) = in_force.filter(|f| sequence < *f) {
        return Err(E::Older {
            got: sequence,
            in_force,
        });
    }
    let (anchors, skipped_unsupported_key) = recognised_certificates(root)?;
    Ok(TrustedList {
        tsl_type,
        sequence,
        issued,
        next_update,
        anchors,
        skipped_unsupported_key,
        signer: signed.signer,
    })
}

/// `TrustServiceProviderList/TrustServiceProvider/TSPServices/TSPService/
/// ServiceInformation` of a PAA service in a recognised status: its
/// `ServiceDigitalIdentity/DigitalId/X509Certificate`s (never `ServiceHistory`'s).
fn recognised_certificates(root: Node<'_, '_>) -> Result<(Vec<Vec<u8>>, usize), ListError> {
    let mut anchors: Vec<Vec<u8>> = Vec::new();
    let mut skipped = 0;
    let mut n = 0;
    let services = children(root, "TrustServiceProviderList")
        .flat_map(|l| children(l, "TrustServiceProvider"))
        .flat_map(|p| children(p, "TSPServices"))
        .flat_map(|s| children(s, "TSPService"));
    for service in services {
        let Some(info) = one(service, "ServiceInformation")? else {
            continue;
        };
        // Both are required by TS 119 612; one that cannot be read refuses the list
        // rather than silently dropping (or keeping) a service.
        let service_type = one(info, "ServiceTypeIdentifier")
            .map(text::trimmed)?
            .ok_or(E::Malformed("ServiceTypeIdentifier"))?;
        let status = one(info, "ServiceStatus")
            .map(text::trimmed)?
            .ok_or(E::Malformed("ServiceStatus"))?;
        if !PAA_ENDINGS.iter().any(|e| service_type.ends_with(e))
            || !STATUS_ENDINGS.iter().any(|e| status.ends_with(e))
        {
            continue;
        }
        let certs = children(info, "ServiceDigitalIdentity")
            .flat_map(|d| children(d, "DigitalId"))
            .flat_map(|d| children(d, "X509Certificate"));
        for cert in certs {
            n += 1;
            let der = text::base64(cert).ok_or(E::BadCertificate(n))?;
            match Cert::from_der_ec(&der) {
                Ok(_) if anchors.contains(&der) => {}
                Ok(_) => anchors.push(der),
                Err(CertError::UnsupportedKey(_)) => skipped += 1,
                Err(CertError::Malformed(_)) => return Err(E::BadCertificate(n)),
            }
        }
    }
    Ok((anchors, skipped))
}

fn children<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children()
        .filter(move |c| c.has_tag_name((NS_TSL, name)))
}

/// The one `name` child of `node`: None when absent; a second one refuses the list (a
/// value read twice could be read two ways).
fn one<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> Result<Option<Node<'a, 'i>>, ListError> {
    let mut found = children(node, name);
    match (found.next(), found.next()) {
        (first, None) => Ok(first),
        (Some(_), Some(_)) | (None, Some(_)) => Err(E::Malformed(name)),
    }
}

/// xs:dateTime as lists write it (`2025-06-10T00:00:00Z`), Unix seconds.
pub(super) fn date_time(text: &str) -> Option<i64> {
    use time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}
