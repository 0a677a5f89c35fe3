//! Zero-knowledge answers (docs/zk.md#zero-knowledge-proofs): a DeviceResponse whose
//! `zkDocuments` carry a Longfellow proof in place of the issuer's signature and the
//! disclosed items. Pure: no I/O, no clock, no panics on any input.
//!
//! ```text
//! DeviceResponse = {"version", "status": 0, "zkDocuments": [ZkDocument, ...]}
//! ZkDocument     = {"proof": bstr, "documentData": 24(<<ZkDocumentData>>)}
//! ZkDocumentData = {"zkSystemId": tstr, "docType": tstr, "timestamp": 0(tstr),
//!                   "issuerSigned": {ns: [{"elementIdentifier", "elementValue"}]},
//!                   ? "deviceSigned": {}, "msoX5chain": bstr / [+ bstr]}
//! ```
//!
//! [`check_zk_response`] runs the cheap checks (structure, circuit, docType, timestamp,
//! the listed claim, deviceSigned, the certificate chain); [`ZkChecked::verify`] then checks
//! the proof itself, which takes a core for a quarter of a second, against public inputs
//! built here from the verifier's own facts: the leaf's key, the transport's
//! SessionTranscript, the claim the request asked for, the timestamp text and the docType.

use ciborium::Value;

use super::cbor::{self, Lookup};
use super::raw::Raw;
use super::{KindAnchors, PresentationError as E};
use crate::kind::Kind;
use crate::pki::{Cert, CertError, PublicKey};

/// Largest zero-knowledge DeviceResponse accepted: a proof is 320–370 KB from Google's
/// prover and up to 2.3 times that from ISRG's; the wallet answer routes take 2 MiB.
pub const MAX_ZK_DEVICE_RESPONSE: usize = 1536 * 1024;

/// How far the proof's timestamp may be from the server's clock, either way.
pub const TIMESTAMP_SKEW_SECS: i64 = 5 * 60;

/// Longest `msoX5chain` followed (the leaf and its intermediates).
const MAX_CHAIN: usize = 4;

/// The prefix of Multipaz's `zkSystemId`, which ends with the circuit hash.
const SYSTEM_PREFIX: &str = "longfellow-libzk-v1_";

/// The CBOR of `true`: the value of the one attribute a request asks for.
const CBOR_TRUE: &[u8] = &[0xf5];

/// Whether a DeviceResponse answers with zero-knowledge documents (it has
/// `zkDocuments`) rather than plain ones. Anything unreadable is not.
pub fn is_zk_response(bytes: &[u8]) -> bool {
    Raw::new(bytes).and_then(|r| r.get("zkDocuments")).is_some()
}

/// What the request asked of a zero-knowledge answer.
#[derive(Debug, Clone, Copy)]
pub struct ZkExpected<'a> {
    /// The `circuit_hash`es the request offered (64 lowercase hex digits each).
    pub offered: &'a [String],
    /// N of the one attribute asked for, `age_over_NN` (a circuit proves the attribute
    /// it is given, so ISO 18013-5's "nearest" rule does not apply).
    pub min_age: u8,
    /// Unix seconds.
    pub now: i64,
}

/// A zero-knowledge document that passed every check but the proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkChecked {
    pub kind: Kind,
    /// The docType presented (one of the kind's).
    pub doc_type: &'static str,
    /// The offered circuit the proof is for.
    pub circuit_hash: String,
    /// SHA-256 of the DER of the trust anchor the leaf chained to.
    pub issuer_anchor: [u8; 32],
    /// N of the `age_over_NN` proven.
    pub age_over: u8,
    issuer_x: [u8; 32],
    issuer_y: [u8; 32],
    /// Exactly as received: the circuit takes its 20 bytes.
    timestamp: String,
    claim: String,
    proof: Vec<u8>,
}

impl ZkChecked {
    /// The proof against `circuit` (the one named by `circuit_hash`), bound to
    /// `session_transcript`, the server's own for the transport the answer came by.
    pub fn verify(
        &self,
        circuit: &agegate_zk::ZkCircuit,
        session_transcript: &[u8],
    ) -> Result<(), E> {
        let attributes = [(self.claim.as_str(), CBOR_TRUE)];
        circuit
            .verify(
                &self.public_inputs(session_transcript, &attributes),
                &self.proof,
            )
            .map_err(|_| E::ZkProofInvalid)
    }

    /// The proof's public inputs: everything but the transcript and the attributes is
    /// this document's, checked; DeviceNameSpacesBytes is `24(<<{}>>)` by the circuit.
    pub(crate) fn public_inputs<'a>(
        &'a self,
        session_transcript: &'a [u8],
        attributes: &'a [(&'a str, &'a [u8])],
    ) -> agegate_zk::PublicInputs<'a> {
        agegate_zk::PublicInputs {
            issuer_x: &self.issuer_x,
            issuer_y: &self.issuer_y,
            session_transcript,
            attributes,
            timestamp: &self.timestamp,
            doc_type: self.doc_type,
        }
    }
}

/// Every check of a zero-knowledge answer but the proof, cheapest first: the
/// DeviceResponse, its first document of a kind `anchors` has (the request asked for),
/// the circuit it names among those `expected.offered`, the timestamp, the claim listed,
/// an empty deviceSigned, and the leaf of `msoX5chain` chained to an anchor of that kind.
pub fn check_zk_response(
    bytes: &[u8],
    expected: &ZkExpected<'_>,
    anchors: &KindAnchors,
) -> Result<ZkChecked, E> {
    let response = super::device_response_entries(bytes, MAX_ZK_DEVICE_RESPONSE)?;
    let response = response.as_slice();
    let mut documents = match cbor::get(response, "zkDocuments") {
        Ok(Value::Array(docs)) => docs
            .iter()
            .map(ZkDocument::parse)
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(E::MalformedDeviceResponse("zkDocuments")),
    };
    let chosen = documents.iter().enumerate().find_map(|(i, d)| {
        let (kind, row) = Kind::by_doc_type(&d.doc_type)?;
        anchors.get(kind)?;
        Some((i, kind, row.doc_type))
    });
    let (doc, kind, doc_type) = match (chosen, documents.first()) {
        (Some((i, kind, doc_type)), _) => (documents.swap_remove(i), kind, doc_type),
        (None, None) => return Err(E::NoDocument),
        (None, Some(first)) => return Err(E::WrongDocType(shown(&first.doc_type))),
    };
    let circuit_hash = circuit_hash_of(&doc.system_id)
        .filter(|h| expected.offered.contains(h))
        .ok_or_else(|| E::ZkCircuitNotOffered(shown(&doc.system_id)))?;
    if (doc.timestamp_secs - expected.now).abs() > TIMESTAMP_SKEW_SECS {
        return Err(E::ZkTimestamp);
    }
    let namespace = kind.info().namespace;
    let claim = format!("age_over_{:02}", expected.min_age);
    let listed = doc.issuer_signed.iter().any(|(ns, items)| {
        ns == namespace
            && items
                .iter()
                .any(|(id, v)| *id == claim && matches!(v, Value::Bool(true)))
    });
    if !listed {
        return Err(E::ZkClaimNotListed(claim));
    }
    if !doc.device_signed_empty {
        return Err(E::ZkDeviceSigned);
    }
    let chain = doc
        .x5chain
        .iter()
        .map(|der| {
            Cert::from_der_ec(der).map_err(|e| match e {
                CertError::Malformed(_) => E::MalformedCertificate,
                CertError::UnsupportedKey(_) => E::UnsupportedIssuerKey,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kind_anchors = anchors.get(kind).ok_or(E::UntrustedIssuer)?;
    let issuer_anchor = kind_anchors.check_chain(&chain, expected.now)?;
    let Some(PublicKey::P256(leaf_key)) = chain.first().map(|c| &c.key) else {
        return Err(E::UnsupportedIssuerKey);
    };
    let point = leaf_key.to_encoded_point(false);
    let (Some(x), Some(y)) = (point.x(), point.y()) else {
        return Err(E::UnsupportedIssuerKey);
    };
    Ok(ZkChecked {
        kind,
        doc_type,
        circuit_hash,
        issuer_anchor,
        age_over: expected.min_age,
        issuer_x: (*x).into(),
        issuer_y: (*y).into(),
        timestamp: doc.timestamp,
        claim,
        proof: doc.proof,
    })
}

/// `issuerSigned` as listed: namespace → (elementIdentifier, elementValue).
type Listing = Vec<(String, Vec<(String, Value)>)>;

/// One `ZkDocument` as received, its `documentData` decoded.
#[derive(Debug)]
struct ZkDocument {
    proof: Vec<u8>,
    system_id: String,
    doc_type: String,
    timestamp: String,
    timestamp_secs: i64,
    issuer_signed: Listing,
    device_signed_empty: bool,
    /// DER, leaf first.
    x5chain: Vec<Vec<u8>>,
}

impl ZkDocument {
    fn parse(value: &Value) -> Result<Self, E> {
        use E::MalformedZkDocument as M;
        let doc = cbor::as_map(value).ok_or(M("ZkDocument"))?;
        let proof = cbor::get(doc, "proof")
            .ok()
            .and_then(Value::as_bytes)
            .ok_or(M("proof"))?;
        let data = cbor::get(doc, "documentData")
            .ok()
            .and_then(cbor::tag24_content)
            .and_then(cbor::decode)
            .ok_or(M("documentData"))?;
        let data = cbor::as_map(&data).ok_or(M("documentData"))?;
        let text = |key: &'static str| {
            cbor::get(data, key)
                .ok()
                .and_then(Value::as_text)
                .map(str::to_owned)
                .ok_or(M(key))
        };
        let (timestamp, timestamp_secs) = match cbor::get(data, "timestamp") {
            Ok(Value::Tag(0, t)) => t.as_text().and_then(|t| Some((t, whole_seconds(t)?))),
            _ => None,
        }
        .ok_or(M("timestamp"))?;
        let issuer_signed = cbor::get(data, "issuerSigned")
            .ok()
            .and_then(listing)
            .ok_or(M("issuerSigned"))?;
        let device_signed_empty = match cbor::get(data, "deviceSigned") {
            Err(Lookup::Absent) => true,
            Ok(Value::Map(m)) => m.is_empty(),
            Ok(_) | Err(Lookup::Duplicate) => return Err(M("deviceSigned")),
        };
        let x5chain = match cbor::get(data, "msoX5chain") {
            Ok(Value::Bytes(der)) => vec![der.clone()],
            Ok(Value::Array(certs)) if (1..=MAX_CHAIN).contains(&certs.len()) => certs
                .iter()
                .map(|c| c.as_bytes().cloned())
                .collect::<Option<Vec<_>>>()
                .ok_or(M("msoX5chain"))?,
            _ => return Err(M("msoX5chain")),
        };
        Ok(Self {
            proof: proof.clone(),
            system_id: text("zkSystemId")?,
            doc_type: text("docType")?,
            timestamp: timestamp.to_owned(),
            timestamp_secs,
            issuer_signed,
            device_signed_empty,
            x5chain,
        })
    }
}

/// `{ns: [{"elementIdentifier": tstr, "elementValue": any}, ...]}`.
fn listing(value: &Value) -> Option<Listing> {
    cbor::as_map(value)?
        .iter()
        .map(|(ns, items)| {
            let items = items
                .as_array()?
                .iter()
                .map(|item| {
                    let item = cbor::as_map(item)?;
                    let id = cbor::get(item, "elementIdentifier").ok()?.as_text()?;
                    let value = cbor::get(item, "elementValue").ok()?;
                    Some((id.to_owned(), value.clone()))
                })
                .collect::<Option<Vec<_>>>()?;
            Some((ns.as_text()?.to_owned(), items))
        })
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SSZ` exactly (the circuit takes these 20 bytes) → Unix seconds.
fn whole_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let shape = b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        });
    if !shape {
        return None;
    }
    Some(super::time::parse_rfc3339(text)?.secs)
}

/// The circuit hash a `zkSystemId` names: 64 hex digits, bare (Google Wallet) or at the
/// end of `longfellow-libzk-v1_…_<hash>` (Multipaz); lowercase.
fn circuit_hash_of(system_id: &str) -> Option<String> {
    let hash = match system_id.strip_prefix(SYSTEM_PREFIX) {
        Some(rest) => rest.rsplit('_').next()?,
        None => system_id,
    };
    (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hash.to_ascii_lowercase())
}

/// Client text in a message: at most 64 characters.
fn shown(text: &str) -> String {
    text.chars().take(64).collect()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod vector_tests;
