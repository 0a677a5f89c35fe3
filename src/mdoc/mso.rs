//! The MobileSecurityObject (ISO/IEC 18013-5 section 9.1.2.4) and the disclosed
//! IssuerSignedItems it vouches for.

use ciborium::Value;
use p256::ecdsa::VerifyingKey;
use sha2::{Digest, Sha256};

use super::cbor::{self, tag24_content};
use super::raw::Raw;
use super::status::StatusClaim;
use super::time::{parse_rfc3339, Instant};
use super::{cose, PresentationError as E};

/// `digestID → digest` of one namespace.
type DigestIds = Vec<(u64, Vec<u8>)>;
/// `namespace → DigestIds`.
type ValueDigests = Vec<(String, DigestIds)>;

/// The MSO fields the verification uses, parsed from the issuerAuth payload.
#[derive(Debug)]
pub(crate) struct Mso {
    /// `valueDigests`: namespace → digestID → digest.
    value_digests: ValueDigests,
    pub device_key: VerifyingKey,
    /// Where the credential's status is published, if the MSO says.
    pub status: StatusClaim,
}

/// Parses `MobileSecurityObjectBytes = #6.24(bstr .cbor MobileSecurityObject)` (the
/// issuerAuth payload) and checks what it alone decides: docType, digest algorithm,
/// validity at `now`, and the device key. `expected_doc_type` is the kind's.
pub(crate) fn parse_mso(payload: &[u8], expected_doc_type: &str, now: i64) -> Result<Mso, E> {
    let outer = cbor::decode(payload).ok_or(E::MalformedMso("payload is not cbor"))?;
    let inner = tag24_content(&outer).ok_or(E::MalformedMso("payload is not a tag-24 bstr"))?;
    let mso = cbor::decode(inner).ok_or(E::MalformedMso("embedded mso is not cbor"))?;
    let map = cbor::as_map(&mso).ok_or(E::MalformedMso("mso is not a map"))?;
    let field = |name: &'static str| cbor::get(map, name).map_err(|_| E::MalformedMso(name));

    let doc_type = field("docType")?
        .as_text()
        .ok_or(E::MalformedMso("docType"))?;
    if doc_type != expected_doc_type {
        return Err(E::WrongMsoDocType);
    }
    let alg = field("digestAlgorithm")?
        .as_text()
        .ok_or(E::MalformedMso("digestAlgorithm"))?;
    if alg != "SHA-256" {
        return Err(E::UnsupportedDigestAlgorithm);
    }

    let validity = field("validityInfo")?;
    let validity = cbor::as_map(validity).ok_or(E::MalformedMso("validityInfo"))?;
    let tdate = |name: &'static str| -> Result<Instant, E> {
        let parsed = match cbor::get(validity, name) {
            Ok(Value::Tag(0, t)) => t.as_text().and_then(parse_rfc3339),
            _ => None,
        };
        parsed.ok_or(E::MalformedMso(name))
    };
    let valid_from = tdate("validFrom")?;
    let valid_until = tdate("validUntil")?;
    if valid_until < valid_from {
        return Err(E::MalformedMso("validUntil is before validFrom"));
    }
    let now = Instant::from_secs(now);
    if now < valid_from {
        return Err(E::MsoNotYetValid);
    }
    if now > valid_until {
        return Err(E::MsoExpired);
    }

    let value_digests = parse_value_digests(field("valueDigests")?)?;

    let key_info = cbor::as_map(field("deviceKeyInfo")?).ok_or(E::MalformedMso("deviceKeyInfo"))?;
    let device_key = cbor::get(key_info, "deviceKey")
        .ok()
        .and_then(cose::p256_key)
        .ok_or(E::MalformedDeviceKey)?;

    let status = super::status::parse_status(cbor::get(map, "status"));

    Ok(Mso {
        value_digests,
        device_key,
        status,
    })
}

fn parse_value_digests(value: &Value) -> Result<ValueDigests, E> {
    const WHAT: E = E::MalformedMso("valueDigests");
    let mut out: ValueDigests = Vec::new();
    for (ns, ids) in cbor::as_map(value).ok_or(WHAT)? {
        let ns = ns.as_text().ok_or(WHAT)?;
        let mut digests: DigestIds = Vec::new();
        for (id, digest) in cbor::as_map(ids).ok_or(WHAT)? {
            let id = cbor::uint(id).ok_or(WHAT)?;
            let digest = digest.as_bytes().ok_or(WHAT)?;
            // A duplicate digestID (or namespace) would be ambiguous.
            if digests.iter().any(|(seen, _)| *seen == id) {
                return Err(WHAT);
            }
            digests.push((id, digest.clone()));
        }
        if out.iter().any(|(seen, _)| seen == ns) {
            return Err(WHAT);
        }
        out.push((ns.to_owned(), digests));
    }
    Ok(out)
}

impl Mso {
    fn digest(&self, namespace: &str, digest_id: u64) -> Option<&[u8]> {
        let (_, ids) = self.value_digests.iter().find(|(ns, _)| ns == namespace)?;
        let (_, d) = ids.iter().find(|(id, _)| *id == digest_id)?;
        Some(d)
    }
}

/// One disclosed element whose digest has been checked.
#[derive(Debug)]
pub(crate) struct Disclosed {
    pub namespace: String,
    pub identifier: String,
    pub value: Value,
}

/// Checks every item of `issuerSigned.nameSpaces` (`{ns: [IssuerSignedItemBytes]}`)
/// against the MSO and returns them. `raw` is the same `nameSpaces` as received: each
/// digest is SHA-256 over the item's whole `#6.24(bstr)` bytes exactly as sent
/// (ISO/IEC 18013-5 section 9.1.2.5), since a wallet may write a longer head than we would.
pub(crate) fn check_disclosures(
    namespaces: &Value,
    raw: Raw<'_>,
    mso: &Mso,
) -> Result<Vec<Disclosed>, E> {
    const WHAT: E = E::MalformedDeviceResponse("issuerSigned.nameSpaces");
    let entries = cbor::as_map(namespaces).ok_or(WHAT)?;
    let raw_entries = raw.map_entries().ok_or(WHAT)?;
    if raw_entries.len() != entries.len() {
        return Err(WHAT);
    }
    let mut out = Vec::new();
    for ((ns, items), (_, raw_items)) in entries.iter().zip(raw_entries) {
        let ns = ns.as_text().ok_or(WHAT)?;
        let items = items.as_array().ok_or(WHAT)?;
        let raw_items = raw_items.array_items().ok_or(WHAT)?;
        if raw_items.len() != items.len() {
            return Err(WHAT);
        }
        for (item, raw_item) in items.iter().zip(raw_items) {
            const ITEM: E = E::MalformedDeviceResponse("IssuerSignedItem");
            let bytes = tag24_content(item).ok_or(ITEM)?;
            // The hashed span must be the very item whose fields are read below.
            if !raw_item.same_as(item) {
                return Err(ITEM);
            }
            let decoded = cbor::decode(bytes).ok_or(ITEM)?;
            let map = cbor::as_map(&decoded).ok_or(ITEM)?;
            let field = |name| cbor::get(map, name).map_err(|_| ITEM);
            let digest_id = cbor::uint(field("digestID")?).ok_or(ITEM)?;
            field("random")?.as_bytes().ok_or(ITEM)?;
            let identifier = field("elementIdentifier")?.as_text().ok_or(ITEM)?;
            let value = field("elementValue")?;

            let expected = mso.digest(ns, digest_id).ok_or(E::DigestMissing)?;
            if Sha256::digest(raw_item.bytes()).as_slice() != expected {
                return Err(E::DigestMismatch);
            }
            out.push(Disclosed {
                namespace: ns.to_owned(),
                identifier: identifier.to_owned(),
                value: value.clone(),
            });
        }
    }
    Ok(out)
}

/// The smallest M ≥ `min_age` with a disclosed `age_over_M: true` in `namespace` (the
/// kind's: an element of the same name elsewhere proves nothing).
pub(crate) fn age_proof(disclosed: &[Disclosed], namespace: &str, min_age: u8) -> Result<u8, E> {
    let qualifying: Vec<(u8, &Value)> = disclosed
        .iter()
        .filter(|d| d.namespace == namespace)
        .filter_map(|d| Some((age_over(&d.identifier)?, &d.value)))
        .filter(|(m, _)| *m >= min_age)
        .collect();
    if qualifying.is_empty() {
        return Err(E::AgeClaimMissing(min_age));
    }
    qualifying
        .iter()
        .filter(|(_, v)| matches!(v, Value::Bool(true)))
        .map(|(m, _)| *m)
        .min()
        .ok_or(E::AgeClaimFalse)
}

/// `age_over_NN` (exactly two digits, as ISO/IEC 18013-5 names it) → NN.
fn age_over(identifier: &str) -> Option<u8> {
    let digits = identifier.strip_prefix("age_over_")?.as_bytes();
    match digits {
        [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => Some((a - b'0') * 10 + (b - b'0')),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC_TYPE: &str = "eu.europa.ec.av.1";

    fn disclosed(id: &str, value: Value) -> Disclosed {
        Disclosed {
            namespace: DOC_TYPE.into(),
            identifier: id.into(),
            value,
        }
    }

    #[test]
    fn age_over_names_have_two_digits() {
        assert_eq!(age_over("age_over_18"), Some(18));
        assert_eq!(age_over("age_over_08"), Some(8));
        assert_eq!(age_over("age_over_8"), None);
        assert_eq!(age_over("age_over_180"), None);
        assert_eq!(age_over("age_over_1x"), None);
        assert_eq!(age_over("age_over_"), None);
    }

    #[test]
    fn a_true_claim_at_or_above_the_minimum_proves_the_age() {
        let d = [
            disclosed("age_over_16", Value::Bool(true)),
            disclosed("age_over_21", Value::Bool(false)),
            disclosed("age_over_18", Value::Bool(true)),
        ];
        assert_eq!(age_proof(&d, DOC_TYPE, 18), Ok(18));
        assert_eq!(age_proof(&d, DOC_TYPE, 17), Ok(18));
        assert_eq!(age_proof(&d, DOC_TYPE, 21), Err(E::AgeClaimFalse));
        assert_eq!(age_proof(&d, DOC_TYPE, 22), Err(E::AgeClaimMissing(22)));
    }

    #[test]
    fn non_bool_or_foreign_namespace_claims_do_not_prove_age() {
        let mut other_ns = disclosed("age_over_18", Value::Bool(true));
        other_ns.namespace = "org.iso.18013.5.1".into();
        let d = [
            disclosed("age_over_18", Value::Text("true".into())),
            other_ns,
        ];
        assert_eq!(age_proof(&d, DOC_TYPE, 18), Err(E::AgeClaimFalse));
        assert_eq!(
            age_proof(&d[1..], DOC_TYPE, 18),
            Err(E::AgeClaimMissing(18))
        );
    }
}
