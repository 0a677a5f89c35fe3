//! The signed lists agegate reads (docs/trust.md#where-trust-anchors-come-from), as a
//! table: each row names the list, the kind its anchors are for, how its signer is pinned
//! and how it is read. Reading is pure (bytes, the signer's PEM, `now` and the sequence
//! number in force in; anchors or one [`Refusal`] out), so it runs off the request path.

use crate::clock::UnixTime;
use crate::domain::Kind;
use crate::mdoc::TrustAnchors;
use crate::trustlist::{self, ListError, LoteKind};

/// One kind of signed list.
#[derive(Debug)]
pub struct ListType {
    /// Its name in the database, logs and metrics: the flag's, without dashes.
    pub name: &'static str,
    /// The credential kind its anchors are for.
    pub kind: Kind,
    /// Prefixed to the location in an anchor's `source`.
    pub origin_prefix: &'static str,
    /// A list past its `NextUpdate` by more than 7 days contributes nothing (the VICAL,
    /// re-issued daily, only warns: docs/trust.md#where-trust-anchors-come-from).
    pub drops_when_stale: bool,
    read: Reader,
}

/// Bytes, the signer's PEM, `now` and the sequence number in force: the list, or why not.
type Reader = fn(&[u8], &str, UnixTime, Option<u64>) -> Result<Verified, Refusal>;

pub static EU_AV_TRUSTED_LIST: ListType = ListType {
    name: "eu-av-trusted-list",
    kind: Kind::EU_AV,
    origin_prefix: "eu-av-trusted-list:",
    drops_when_stale: true,
    read: |bytes, pem, now, in_force| {
        let signers = signers(pem)?;
        let l = trustlist::eu_av_list(bytes, &signers, now, in_force).map_err(Refusal::from)?;
        Verified::new(
            l.sequence,
            l.issued,
            Some(l.next_update),
            &l.anchors,
            l.skipped_unsupported_key,
        )
    },
};

pub static EUDI_PID_LOTE: ListType = ListType {
    name: "eudi-pid-lote",
    kind: Kind::EUDI_PID,
    origin_prefix: "lote:",
    drops_when_stale: true,
    read: |bytes, pem, now, in_force| read_lote(LoteKind::EudiPid, bytes, pem, now, in_force),
};

pub static MDL_LOTE: ListType = ListType {
    name: "mdl-lote",
    kind: Kind::MDL,
    origin_prefix: "lote:",
    drops_when_stale: true,
    read: |bytes, pem, now, in_force| read_lote(LoteKind::Mdl, bytes, pem, now, in_force),
};

pub static MDL_VICAL: ListType = ListType {
    name: "mdl-vical",
    kind: Kind::MDL,
    origin_prefix: "vical:",
    drops_when_stale: false,
    read: read_vical,
};

/// Every kind of list, in the order they are loaded.
pub static LIST_TYPES: [&ListType; 4] =
    [&MDL_VICAL, &EU_AV_TRUSTED_LIST, &EUDI_PID_LOTE, &MDL_LOTE];

impl ListType {
    /// Verifies and reads `bytes` under the signer certificates of `signer_pem`, refusing a
    /// list older than `in_force`.
    pub fn read(
        &self,
        bytes: &[u8],
        signer_pem: &str,
        now: UnixTime,
        in_force: Option<u64>,
    ) -> Result<Verified, Refusal> {
        (self.read)(bytes, signer_pem, now, in_force)
    }

    /// Whether the signer's PEM can pin anything (a start-up check: an unreadable signer
    /// is a configuration error, not a list that failed).
    pub fn check_signer(&self, signer_pem: &str) -> Result<(), String> {
        if self.name == MDL_VICAL.name {
            TrustAnchors::from_pem(signer_pem)
                .map(drop)
                .map_err(|e| e.to_string())
        } else {
            trustlist::signers_from_pem(signer_pem).map(drop)
        }
    }
}

/// A list that verified, and what it admits.
#[derive(Debug, Clone)]
pub struct Verified {
    pub sequence: u64,
    pub issued: i64,
    pub next_update: Option<i64>,
    pub anchors: TrustAnchors,
    pub skipped_unsupported_key: usize,
}

impl Verified {
    fn new(
        sequence: u64,
        issued: i64,
        next_update: Option<i64>,
        ders: &[Vec<u8>],
        skipped_unsupported_key: usize,
    ) -> Result<Self, Refusal> {
        // Every certificate was parsed by the list's reader; none left is a valid list
        // that gives its kind nothing.
        let anchors = TrustAnchors::from_ders(ders.iter().map(Vec::as_slice))
            .unwrap_or_else(|_| TrustAnchors::merged([]));
        Ok(Self {
            sequence,
            issued,
            next_update,
            anchors,
            skipped_unsupported_key,
        })
    }
}

/// Why a list was not taken: a short fixed reason (the metric's label) and the detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: Reason,
    pub detail: String,
}

/// The reasons, as `agegate_trust_list_refresh_failures_total`'s `reason` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The source could not be read or fetched (no file, connection refused, HTTP error).
    Unreachable,
    Timeout,
    TooLarge,
    /// The pinned signer file could not be read.
    Signer,
    /// The signature, or its signer's chain to the pinned certificates.
    Signature,
    /// Not a list of its type, or malformed.
    Invalid,
    Stale,
    Older,
}

impl Reason {
    pub fn label(self) -> &'static str {
        match self {
            Reason::Unreachable => "unreachable",
            Reason::Timeout => "timeout",
            Reason::TooLarge => "too_large",
            Reason::Signer => "signer",
            Reason::Signature => "signature",
            Reason::Invalid => "invalid",
            Reason::Stale => "stale",
            Reason::Older => "older",
        }
    }
}

impl Refusal {
    pub fn new(reason: Reason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

impl From<ListError> for Refusal {
    fn from(e: ListError) -> Self {
        let reason = match &e {
            ListError::TooLarge => Reason::TooLarge,
            ListError::Signature(_) | ListError::Jws(_) | ListError::SignerNotOperator { .. } => {
                Reason::Signature
            }
            ListError::Stale => Reason::Stale,
            ListError::Older { .. } => Reason::Older,
            ListError::Dtd
            | ListError::NotXml(_)
            | ListError::Malformed(_)
            | ListError::WrongType(_)
            | ListError::BadCertificate(_) => Reason::Invalid,
        };
        Refusal::new(reason, e.to_string())
    }
}

impl From<super::source::FetchError> for Refusal {
    fn from(e: super::source::FetchError) -> Self {
        use super::source::FetchError as F;
        let reason = match &e {
            F::Timeout(_) => Reason::Timeout,
            F::TooLarge(_) => Reason::TooLarge,
            F::Status(_) | F::Network(_) | F::Read(_) => Reason::Unreachable,
        };
        Refusal::new(reason, e.to_string())
    }
}

fn signers(pem: &str) -> Result<Vec<trustlist::SignerCert>, Refusal> {
    trustlist::signers_from_pem(pem)
        .map_err(|e| Refusal::new(Reason::Signer, format!("signer: {e}")))
}

fn read_lote(
    kind: LoteKind,
    bytes: &[u8],
    pem: &str,
    now: UnixTime,
    in_force: Option<u64>,
) -> Result<Verified, Refusal> {
    let signers = signers(pem)?;
    let l = trustlist::lote(bytes, kind, &signers, now, in_force).map_err(Refusal::from)?;
    Verified::new(
        l.sequence,
        l.issued,
        Some(l.next_update),
        &l.anchors,
        l.skipped_unsupported_key,
    )
}

fn read_vical(
    bytes: &[u8],
    pem: &str,
    now: UnixTime,
    in_force: Option<u64>,
) -> Result<Verified, Refusal> {
    use crate::mdoc::vical::VicalError as V;
    let anchor = TrustAnchors::from_pem(pem)
        .map_err(|e| Refusal::new(Reason::Signer, format!("anchor: {e}")))?;
    let vical = crate::mdoc::vical::mdl_anchors(bytes, &anchor, now).map_err(|e| {
        let reason = match e {
            V::TooLarge => Reason::TooLarge,
            V::UntrustedSigner
            | V::SignatureInvalid
            | V::AlgorithmKeyMismatch
            | V::UnsupportedAlgorithm(_)
            | V::IntermediateNotCa(_)
            | V::CertificateNotYetValid(_)
            | V::CertificateExpired(_)
            | V::MissingX5chain
            | V::MalformedX5chain(_)
            | V::ChainTooLong => Reason::Signature,
            _ => Reason::Invalid,
        };
        Refusal::new(reason, e.to_string())
    })?;
    let sequence = vical.issue_id.unwrap_or(0);
    if let Some(in_force) = in_force.filter(|&f| sequence < f) {
        return Err(ListError::Older {
            got: sequence,
            in_force,
        }
        .into());
    }
    // No mDL entry: a valid list that leaves the kind off (unless a PEM file has it).
    let anchors = match vical.trust_anchors() {
        Ok(anchors) => anchors,
        Err(crate::mdoc::AnchorError::Empty) => TrustAnchors::merged([]),
        Err(e) => return Err(Refusal::new(Reason::Invalid, e.to_string())),
    };
    Ok(Verified {
        sequence,
        issued: vical.date,
        next_update: vical.next_update,
        anchors,
        skipped_unsupported_key: vical.skipped_unsupported_key,
    })
}
