//! agegate-zk accepts exactly when Google's C++ verifier (through pylongfellow) accepts:
//! fresh proofs from both backends over a random transcript and a random age_over_NN claim,
//! each with its public inputs or bytes altered (tests/mint.py mints and judges). The seed
//! is printed; AGEGATE_ZK_SEED replays one.

mod common;

use std::process::Command;

use agegate_zk::{PublicInputs, ZkCircuit};
use common::{read, unhex, vectors};

#[test]
fn agegate_accepts_exactly_what_the_cpp_verifier_accepts() {
    let seed: u64 = match std::env::var("AGEGATE_ZK_SEED") {
        Ok(s) => s.parse().expect("AGEGATE_ZK_SEED"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    };
    eprintln!("AGEGATE_ZK_SEED={seed}");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mint.py");
    let out = Command::new(common::python())
        .args([
            script,
            vectors().to_str().unwrap(),
            &seed.to_string(),
            "google-cpp,isrg-rust",
        ])
        .output()
        .expect("run tests/mint.py");
    assert!(
        out.status.success(),
        "mint.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let circuit = ZkCircuit::load(&read("circuits/google-v7-1attr.circuit")).unwrap();
    let (mut accepted, mut refused) = (0, 0);
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| case[k].as_str().unwrap();
        let x: [u8; 32] = unhex(s("x")).try_into().unwrap();
        let y: [u8; 32] = unhex(s("y")).try_into().unwrap();
        let transcript = unhex(s("transcript"));
        let value = unhex(s("value"));
        let attributes = [(s("id"), value.as_slice())];
        let inputs = PublicInputs {
            issuer_x: &x,
            issuer_y: &y,
            session_transcript: &transcript,
            attributes: &attributes,
            timestamp: s("time"),
            doc_type: s("doctype"),
        };
        let ours = circuit.verify(&inputs, &unhex(s("proof")));
        let theirs = case["accept"].as_bool().unwrap();
        assert_eq!(ours.is_ok(), theirs, "{}: agegate says {ours:?}", s("case"));
        if theirs {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    // Both verdicts were exercised: one minted proof per backend verifies, five variants not.
    assert_eq!((accepted, refused), (2, 10));
}
