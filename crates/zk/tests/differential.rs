//! agegate-zk accepts exactly when Google's C++ verifier (through pylongfellow) accepts:
//! fresh proofs over a random transcript and random age_over_NN claims — v7 with one claim
//! from both backends, v6 with two from google-cpp — each with its public inputs or bytes
//! altered (tests/mint.py mints and judges). The seed is printed; AGEGATE_ZK_SEED replays one.

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
            "google-v7-1attr:google-cpp,google-v7-1attr:isrg-rust,google-v6-2attr:google-cpp",
        ])
        .output()
        .expect("run tests/mint.py");
    assert!(
        out.status.success(),
        "mint.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut circuits = std::collections::HashMap::new();
    let (mut accepted, mut refused) = (0, 0);
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| case[k].as_str().unwrap();
        let x: [u8; 32] = unhex(s("x")).try_into().unwrap();
        let y: [u8; 32] = unhex(s("y")).try_into().unwrap();
        let transcript = unhex(s("transcript"));
        let claims: Vec<(String, Vec<u8>)> = case["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_string(),
                    unhex(c[1].as_str().unwrap()),
                )
            })
            .collect();
        let attributes: Vec<(&str, &[u8])> = claims
            .iter()
            .map(|(i, v)| (i.as_str(), v.as_slice()))
            .collect();
        let circuit = circuits.entry(s("circuit").to_string()).or_insert_with(|| {
            ZkCircuit::load(&read(&format!("circuits/{}.circuit", s("circuit")))).unwrap()
        });
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
    // Both verdicts were exercised: each minted proof verifies, its five variants do not.
    assert_eq!((accepted, refused), (3, 15));
}
