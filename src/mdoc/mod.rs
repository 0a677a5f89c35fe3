//! Verification of a presentation of an ISO/IEC 18013-5 mdoc with `age_over_NN` — any
//! kind of the kinds table (docs/kinds.md#credential-kinds: the EU's Proof of Age, an EUDI PID, a mobile driving
//! licence), each under its own trust anchors ([`KindAnchors`]) — delivered over
//! OpenID4VP 1.0 with `direct_post` (docs/wallets.md#the-wallet-link, [`verify_vp_token`]) or through the
//! Digital Credentials API (docs/dc-api.md#the-answers: the transport opens its envelope, then
//! [`verify_device_response`]). Pure: no I/O, no clock (the caller passes `now`). The
//! transport decides the SessionTranscript the device signature must cover; every other
//! check is the same.
//!
//! Order of checks: envelope (vp_token JSON, base64url, CBOR) → DeviceResponse status
//! and document choice → issuer (x5chain trust and validity, ES256 signature) → MSO
//! (docType, digest algorithm, validity, device key) → every disclosed item's digest →
//! device signature over this request's SessionTranscript → the age claim. The age
//! claim is judged last so that "false" is only ever said of authenticated data.

mod anchors;
pub(crate) mod cbor;
pub(crate) mod cose;
mod error;
mod mso;
mod outcome;
mod raw;
pub mod status;
mod time;
pub(crate) mod transcript;
pub mod vical;
pub(crate) mod x509;
pub mod zk;

#[cfg(test)]
mod anchor_tests;
#[cfg(test)]
mod annex_d_tests;
#[cfg(test)]
mod edit_tests;
#[cfg(test)]
mod kind_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod received_tests;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod vical_proptests;
#[cfg(test)]
mod vical_tests;

use base64::Engine;
use ciborium::Value;

use crate::pki::{Cert, CertError, PublicKey};
use cbor::Lookup;
use cose::{Sign1, Sign1Error};
use raw::Raw;

pub use anchors::KindAnchors;
pub use error::{CertRole, PresentationError};
pub use x509::{AnchorSummary, TrustAnchors};

use crate::kind::Kind;

/// Largest DeviceResponse accepted; a Proof of Age one is a few KiB.
const MAX_DEVICE_RESPONSE: usize = 48 * 1024;
/// Largest vp_token text accepted: the base64url of a zero-knowledge DeviceResponse (the
/// largest kind) plus JSON framing; a plain one is held to its own limit once decoded.
const MAX_VP_TOKEN: usize = zk::MAX_ZK_DEVICE_RESPONSE / 3 * 4 + 1024;

/// base64url, padding optional (OpenID4VP says unpadded; some wallets pad).
pub(crate) use crate::jose::B64URL_LENIENT as BASE64URL;

/// Why a trust anchors PEM bundle cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error("no certificate found")]
    Empty,
    #[error("malformed certificate: {0}")]
    Malformed(String),
    #[error("unsupported certificate: {0}")]
    Unsupported(String),
}

/// What the relying party asked for; the facts the presentation must be bound to.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// CBOR `SessionTranscript` of the transport the answer came by, which binds it to
    /// this request: [`session_transcript`] for a redirect (OpenID4VP `direct_post`),
    /// `crate::dcapi::transcript`'s for the Digital Credentials API.
    pub session_transcript: &'a [u8],
    /// N of `age_over_NN`; a disclosed `age_over_M == true` with M ≥ N is accepted.
    pub min_age: u8,
    /// Unix seconds.
    pub now: i64,
}

/// An accepted presentation: `kind` is the credential's, `age_over` the M whose `true`
/// proved the age, and `issuer_anchor` the SHA-256 of the DER of the trust anchor (of
/// that kind) the issuer chained to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgeProof {
    pub kind: Kind,
    /// The docType presented (one of the kind's; the MSO's is the same).
    pub doc_type: &'static str,
    pub age_over: u8,
    pub issuer_anchor: [u8; 32],
    /// What the issuer-signed MSO says of where its status is published (a
    /// zero-knowledge proof hides the MSO: [`status::StatusClaim::Hidden`]).
    pub status: status::StatusClaim,
}

use PresentationError as E;

/// Verifies the `vp_token` form field, `{"<credential id>": ["<base64url
/// DeviceResponse>"]}`, against the request it answers: the id names the kind (one of
/// `anchors`'), and only a document of that kind counts.
pub fn verify_vp_token(
    vp_token: &str,
    expected: &Expected<'_>,
    anchors: &KindAnchors,
) -> Result<AgeProof, PresentationError> {
    let (kind, bytes) = device_response_bytes(vp_token, anchors)?;
    verify_device_response(&bytes, expected, &anchors.only(kind))
}

/// A DeviceResponse's envelope, as plain and zero-knowledge answers both begin: at most
/// `max` bytes, one CBOR map, `status` 0. Its entries, for the caller to read its documents.
pub(crate) fn device_response_entries(bytes: &[u8], max: usize) -> Result<Vec<(Value, Value)>, E> {
    if bytes.len() > max {
        return Err(E::TooLarge);
    }
    let response =
        cbor::decode(bytes).ok_or(E::MalformedDeviceResponse("not a single cbor data item"))?;
    let Value::Map(entries) = response else {
        return Err(E::MalformedDeviceResponse("DeviceResponse"));
    };
    let status = cbor::get(&entries, "status")
        .ok()
        .and_then(cbor::uint)
        .ok_or(E::MalformedDeviceResponse("status"))?;
    if status != 0 {
        return Err(E::StatusNotZero(status));
    }
    Ok(entries)
}

/// Verifies a DeviceResponse (CBOR, as the wallet sent it) against the request it
/// answers: every check of docs/presentations.md#what-is-checked, the device signature over
/// `expected.session_transcript`. The first document of a kind `anchors` has anchors for
/// is checked, under that kind's anchors only.
pub fn verify_device_response(
    bytes: &[u8],
    expected: &Expected<'_>,
    anchors: &KindAnchors,
) -> Result<AgeProof, PresentationError> {
    let response = device_response_entries(bytes, MAX_DEVICE_RESPONSE)?;
    let response = response.as_slice();
    let documents = match cbor::get(response, "documents") {
        Ok(Value::Array(docs)) => docs.as_slice(),
        Err(Lookup::Absent) => &[],
        _ => return Err(E::MalformedDeviceResponse("documents")),
    };
    let doc_type = |doc: &Value| -> Option<String> {
        let map = cbor::as_map(doc)?;
        cbor::get(map, "docType").ok()?.as_text().map(str::to_owned)
    };
    let position = documents.iter().enumerate().find_map(|(i, d)| {
        let (kind, row) = doc_type(d).as_deref().and_then(Kind::by_doc_type)?;
        Some((i, kind, row.doc_type, anchors.get(kind)?))
    });
    match (position, documents.first()) {
        (Some((i, kind, doc_type, kind_anchors)), _) => {
            let doc = documents
                .get(i)
                .and_then(cbor::as_map)
                .ok_or(E::MalformedDeviceResponse("documents"))?;
            // The same document as received, by the same index: digests and the
            // device signature cover its bytes as sent, not a re-encoding.
            let raw_doc = Raw::new(bytes)
                .and_then(|r| r.get("documents"))
                .and_then(Raw::array_items)
                .and_then(|docs| docs.get(i).copied())
                .ok_or(E::MalformedDeviceResponse("documents"))?;
            verify_document(doc, raw_doc, expected, (kind, doc_type), kind_anchors)
        }
        (None, None) => Err(E::NoDocument),
        (None, Some(first)) => Err(doc_type(first)
            .map_or(E::MalformedDeviceResponse("docType"), |t| {
                E::WrongDocType(t.chars().take(64).collect())
            })),
    }
}

/// The kind and DeviceResponse bytes inside a `direct_post` vp_token (`{"<credential
/// id>": ["<base64url>"]}`, the id, plain or zero-knowledge, one of `anchors`' kinds'),
/// size-capped before decoding.
pub fn device_response_bytes(vp_token: &str, anchors: &KindAnchors) -> Result<(Kind, Vec<u8>), E> {
    if vp_token.len() > MAX_VP_TOKEN {
        return Err(E::TooLarge);
    }
    let json: serde_json::Value = serde_json::from_str(vp_token).map_err(|_| E::VpTokenNotJson)?;
    let Some((id, presentations)) = json
        .as_object()
        .filter(|map| map.len() == 1)
        .and_then(|map| map.iter().next())
    else {
        return Err(E::VpTokenShape);
    };
    let Some([serde_json::Value::String(encoded)]) = presentations.as_array().map(Vec::as_slice)
    else {
        return Err(E::VpTokenShape);
    };
    let kind = Kind::by_dcql_id(id)
        .or_else(|| Kind::by_zk_dcql_id(id).map(|(kind, _)| kind))
        .filter(|k| anchors.get(*k).is_some())
        .ok_or_else(|| E::UnrequestedCredential(id.chars().take(64).collect()))?;
    if encoded.len() > zk::MAX_ZK_DEVICE_RESPONSE.div_ceil(3) * 4 {
        return Err(E::TooLarge);
    }
    let bytes = BASE64URL.decode(encoded).map_err(|_| E::NotBase64Url)?;
    if bytes.len() > zk::MAX_ZK_DEVICE_RESPONSE {
        return Err(E::TooLarge);
    }
    Ok((kind, bytes))
}

/// `doc` is the decoded document and `raw_doc` the same document's received bytes.
fn verify_document(
    doc: &[(Value, Value)],
    raw_doc: Raw<'_>,
    expected: &Expected<'_>,
    (kind, doc_type): (Kind, &'static str),
    anchors: &TrustAnchors,
) -> Result<AgeProof, E> {
    // Issuer: who signed, whether we trust them, and what they signed.
    let issuer_signed = cbor::get(doc, "issuerSigned")
        .ok()
        .and_then(cbor::as_map)
        .ok_or(E::MalformedDeviceResponse("issuerSigned"))?;
    let issuer_auth = cbor::get(issuer_signed, "issuerAuth")
        .map_err(|_| E::MalformedIssuerAuth("issuerAuth is missing"))?;
    let issuer_auth = Sign1::parse(issuer_auth).map_err(|e| match e {
        Sign1Error::Malformed(what) => E::MalformedIssuerAuth(what),
        Sign1Error::NotEs256 => E::UnsupportedAlgorithm,
    })?;
    let signer = Cert::from_der_ec(issuer_auth.x5chain_leaf()?).map_err(|e| match e {
        CertError::Malformed(_) => E::MalformedCertificate,
        CertError::UnsupportedKey(_) => E::UnsupportedIssuerKey,
    })?;
    let issuer_anchor = anchors.check_signer(&signer, expected.now)?;
    let PublicKey::P256(issuer_key) = &signer.key else {
        return Err(E::UnsupportedIssuerKey);
    };
    let mso_bytes = issuer_auth
        .payload()
        .ok_or(E::MalformedIssuerAuth("payload is detached"))?;
    if !issuer_auth.verify(issuer_key, None) {
        return Err(E::IssuerSignatureInvalid);
    }
    let mso = mso::parse_mso(mso_bytes, doc_type, expected.now)?;
    let disclosed = match cbor::get(issuer_signed, "nameSpaces") {
        Ok(namespaces) => {
            let raw_namespaces = raw_doc
                .get("issuerSigned")
                .and_then(|r| r.get("nameSpaces"))
                .ok_or(E::MalformedDeviceResponse("issuerSigned.nameSpaces"))?;
            mso::check_disclosures(namespaces, raw_namespaces, &mso)?
        }
        Err(Lookup::Absent) => Vec::new(),
        Err(Lookup::Duplicate) => {
            return Err(E::MalformedDeviceResponse("issuerSigned.nameSpaces"))
        }
    };

    // Device: proves possession of the MSO's device key, bound to this request.
    let device_signed = cbor::get(doc, "deviceSigned")
        .ok()
        .and_then(cbor::as_map)
        .ok_or(E::MalformedDeviceResponse("deviceSigned"))?;
    // DeviceNameSpacesBytes: checked on the decoded item, signed as received.
    let device_namespaces = cbor::get(device_signed, "nameSpaces")
        .ok()
        .filter(|v| {
            cbor::tag24_content(v).is_some_and(|b| matches!(cbor::decode(b), Some(Value::Map(_))))
        })
        .and_then(|v| {
            raw_doc
                .get("deviceSigned")
                .and_then(|r| r.get("nameSpaces"))
                .filter(|r| r.same_as(v))
        })
        .ok_or(E::MalformedDeviceResponse("deviceSigned.nameSpaces"))?;
    let device_auth = cbor::get(device_signed, "deviceAuth")
        .ok()
        .and_then(cbor::as_map)
        .ok_or(E::MalformedDeviceResponse("deviceAuth"))?;
    let device_signature = match cbor::get(device_auth, "deviceSignature") {
        Ok(sig) => sig,
        Err(Lookup::Duplicate) => {
            return Err(E::MalformedDeviceSignature("deviceSignature appears twice"))
        }
        Err(Lookup::Absent) if cbor::get(device_auth, "deviceMac").is_ok() => {
            return Err(E::DeviceMacUnsupported)
        }
        Err(Lookup::Absent) => return Err(E::MissingDeviceSignature),
    };
    let device_signature = Sign1::parse(device_signature).map_err(|e| match e {
        Sign1Error::Malformed(what) => E::MalformedDeviceSignature(what),
        Sign1Error::NotEs256 => E::UnsupportedDeviceAlgorithm,
    })?;
    if device_signature.payload().is_some() {
        return Err(E::MalformedDeviceSignature("payload is not detached"));
    }
    let signed = transcript::device_authentication_bytes(
        expected.session_transcript,
        doc_type,
        device_namespaces.bytes(),
    );
    if !device_signature.verify(&mso.device_key, Some(&signed)) {
        return Err(E::DeviceSignatureInvalid);
    }

    // Only issuer-signed, digest-checked claims count; device-signed ones never do.
    let age_over = mso::age_proof(&disclosed, kind.info().namespace, expected.min_age)?;
    Ok(AgeProof {
        kind,
        doc_type,
        age_over,
        issuer_anchor,
        status: mso.status,
    })
}

/// CBOR bytes of `SessionTranscript = [null, null, ["OpenID4VPHandover",
/// SHA-256(CBOR([client_id, nonce, null, response_uri]))]]` (OpenID4VP 1.0 B.2.6.1).
pub fn session_transcript(client_id: &str, nonce: &str, response_uri: &str) -> Vec<u8> {
    transcript::session_transcript_from_info(&handover_info(client_id, nonce, response_uri))
}

/// CBOR bytes of `OpenID4VPHandoverInfo = [client_id, nonce, null, response_uri]`: the
/// thumbprint is null because a `direct_post` response is not encrypted.
pub fn handover_info(client_id: &str, nonce: &str, response_uri: &str) -> Vec<u8> {
    transcript::handover_info_with_thumbprint(client_id, nonce, None, response_uri)
}
