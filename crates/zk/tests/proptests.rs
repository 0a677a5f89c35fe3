//! Random proof bytes never panic: whole random proofs, and valid proofs with a byte changed,
//! truncated or extended, are refused (few cases: each check of a full proof costs a
//! fraction of a second).

mod common;

use std::sync::OnceLock;

use agegate_zk::{PublicInputs, ZkCircuit};
use common::{circuit_time, json, read, unhex};
use proptest::prelude::*;

struct Fixture {
    circuit: ZkCircuit,
    proof: Vec<u8>,
    x: [u8; 32],
    y: [u8; 32],
    transcript: Vec<u8>,
    value: Vec<u8>,
    time: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let meta = json("proofs/google-cpp-mdl-mustermann-v7-1attr.json");
        let s = |k: &str| meta[k].as_str().unwrap().to_string();
        Fixture {
            circuit: ZkCircuit::load(&read("circuits/google-v7-1attr.circuit")).unwrap(),
            proof: read("proofs/google-cpp-mdl-mustermann-v7-1attr.proof"),
            x: unhex(&s("issuer_public_key_x")).try_into().unwrap(),
            y: unhex(&s("issuer_public_key_y")).try_into().unwrap(),
            transcript: unhex(&s("transcript")),
            value: unhex(meta["claims"][0]["cbor_value"].as_str().unwrap()),
            time: circuit_time(&s("timestamp")),
        }
    })
}

fn verify(proof: &[u8]) -> bool {
    let f = fixture();
    let attributes = [("issue_date", f.value.as_slice())];
    let inputs = PublicInputs {
        issuer_x: &f.x,
        issuer_y: &f.y,
        session_transcript: &f.transcript,
        attributes: &attributes,
        timestamp: &f.time,
        doc_type: "org.iso.18013.5.1.mDL",
    };
    f.circuit.verify(&inputs, proof).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_changed_byte_anywhere_is_refused(at in any::<prop::sample::Index>(), x in 1u8..) {
        let mut proof = fixture().proof.clone();
        let i = at.index(proof.len());
        proof[i] ^= x;
        prop_assert!(!verify(&proof), "byte {i} ^= {x}");
    }

    #[test]
    fn a_truncated_or_extended_proof_is_refused(cut in any::<prop::sample::Index>(), extra in prop::collection::vec(any::<u8>(), 1..64)) {
        let proof = &fixture().proof;
        prop_assert!(!verify(&proof[..cut.index(proof.len())]));
        let mut longer = proof.clone();
        longer.extend_from_slice(&extra);
        prop_assert!(!verify(&longer));
    }

    #[test]
    fn random_bytes_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        prop_assert!(!verify(&bytes));
    }
}
