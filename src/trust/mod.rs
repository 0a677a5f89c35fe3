//! The trust anchors a server holds (docs/kinds.md#credential-kinds): loaded per kind from the files
//! and signed lists of `serve`'s trust flags ([`TrustFiles`]), kept current by
//! [`refresh`], swapped whole ([`TrustHandle`]), and
//! listed for people — by kind, each with its subject, `notAfter`, the SHA-256
//! fingerprint of its DER and where it came from, flagged when it expires within 30
//! days. `agegate trust show`, the console's trust page, the statement and `/metrics`'
//! expiry gauge all read this one list.

pub mod lists;
pub mod load;
pub mod outcome;
pub mod refresh;
pub mod source;
mod status_held;
pub mod status_lists;

pub use lists::ListType;
pub use load::{ListFiles, ListStatus, Trust, TrustFiles, TrustHandle};
pub use source::{Fetcher, Source};

use serde::Serialize;
use std::fmt::Write;
use std::sync::Arc;

use crate::clock::{rfc3339, UnixTime};
use crate::domain::Kind;
use crate::mdoc::TrustAnchors;

/// An anchor expiring within this long is flagged.
pub const EXPIRY_WARNING_SECS: i64 = 30 * 86_400;

/// One source of anchors of one kind: a PEM file, or a signed list.
#[derive(Debug, Clone)]
pub struct AnchorSource {
    /// The credential kind the anchors are trusted for (the table of docs/kinds.md#credential-kinds).
    pub kind: Kind,
    /// Where they came from, for people: the file's path, or the list's location after its
    /// prefix (`vical:`, `eu-av-trusted-list:`, `lote:`).
    pub origin: String,
    pub anchors: Arc<TrustAnchors>,
}

/// One anchor as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnchorListing {
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    pub subject: String,
    /// Unix seconds; RFC 3339 in JSON.
    #[serde(serialize_with = "rfc3339_text")]
    pub not_after: UnixTime,
    /// Lowercase hex of the SHA-256 of the certificate's DER.
    pub sha256: String,
    pub source: String,
    /// It expires within [`EXPIRY_WARNING_SECS`] (or has expired).
    pub expires_soon: bool,
    pub expired: bool,
}

impl AnchorListing {
    pub fn not_after_text(&self) -> String {
        rfc3339(self.not_after)
    }

    /// The fingerprint as `AB:CD:...`, the way certificate tools print one.
    pub fn fingerprint_colons(&self) -> String {
        self.sha256
            .as_bytes()
            .chunks(2)
            .map(|pair| std::str::from_utf8(pair).unwrap_or("").to_ascii_uppercase())
            .collect::<Vec<_>>()
            .join(":")
    }
}

/// Every anchor of every source at `now`, by kind in the sources' order, then as each
/// file lists them.
pub fn list(sources: &[AnchorSource], now: UnixTime) -> Vec<AnchorListing> {
    sources
        .iter()
        .flat_map(|source| {
            source
                .anchors
                .summaries()
                .into_iter()
                .map(move |a| AnchorListing {
                    kind: source.kind,
                    subject: a.subject,
                    not_after: a.not_after,
                    sha256: hex(&a.sha256),
                    source: source.origin.clone(),
                    expires_soon: a.not_after <= now + EXPIRY_WARNING_SECS,
                    expired: a.not_after < now,
                })
        })
        .collect()
}

fn rfc3339_text<S: serde::Serializer>(t: &UnixTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(*t))
}

fn kind_name<S: serde::Serializer>(kind: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind.name())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mdoc::testkit;
    use sha2::Digest;

    #[test]
    fn anchors_are_listed_with_fingerprint_and_expiry_flag() {
        let pki = testkit::Pki::fixed();
        let anchors = Arc::new(TrustAnchors::from_pem(&pki.ds_cert_pem).unwrap());
        let summary = anchors.summaries().remove(0);
        let sources = [AnchorSource {
            kind: Kind::EU_AV,
            origin: "/etc/agegate/eu-av.pem".into(),
            anchors,
        }];
        let far = list(&sources, summary.not_after - EXPIRY_WARNING_SECS - 1);
        assert_eq!(far.len(), 1);
        let a = &far[0];
        assert_eq!(
            (a.kind, a.source.as_str()),
            (Kind::EU_AV, "/etc/agegate/eu-av.pem")
        );
        assert!(a.subject.contains("CN="), "{}", a.subject);
        assert!(!a.expires_soon && !a.expired);
        assert_eq!(a.sha256, hex(&sha2::Sha256::digest(&pki.ds_cert_der)));
        assert_eq!(a.fingerprint_colons().len(), 32 * 3 - 1);
        let near = list(&sources, summary.not_after - EXPIRY_WARNING_SECS);
        assert!(near[0].expires_soon && !near[0].expired);
        let past = list(&sources, summary.not_after + 1);
        assert!(past[0].expires_soon && past[0].expired);
    }
}
