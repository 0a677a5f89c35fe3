//! What credential status costs (docs/credential-status.md), single-threaded: a
//! 1,000,000-entry one-bit list loaded and verified (inflate, CBOR, signature, signer
//! chain), the memory it holds, and what an answer pays with its list in hand (the MSO's
//! `status` parsed, the list looked up). Not part of the suite's assertions: run it on
//! purpose, pinned to one core (`bash bench/status.sh`):
//!
//!   taskset -c 0 cargo test --test api credential_status_bench -- --ignored --nocapture

use std::sync::Arc;
use std::time::{Duration, Instant};

use agegate::clock::ManualClock;
use agegate::mdoc::status::{ListForm, ListToken, Signer, StatusClaim};
use agegate::mdoc::{verify_device_response, Expected, KindAnchors, TrustAnchors};
use agegate::testkit::{cbor, session_transcript, status_list_ref, TokenSpec};
use agegate::trust::status_lists::{ListSigner, StatusLists, Verdict};
use rand::Rng as _;

use crate::credential_status_helpers::ListServer;
use crate::helpers::T0;
use crate::wallet::{Presentation, TestIssuer};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
#[ignore = "a benchmark; run on purpose (see the module's comment)"]
fn a_million_entry_list_loads_and_verifies_on_one_core() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let anchors = TrustAnchors::from_pem(&issuer.ca_pem).unwrap();
    let uri = "https://issuer.example/status/1";
    let mut rng = rand::thread_rng();
    for (what, share) in [
        ("1 % revoked", 0.01),
        ("half revoked (incompressible)", 0.5),
    ] {
        let statuses: Vec<u8> = (0..1_000_000)
            .map(|_| u8::from(rng.gen_bool(share)))
            .collect();
        let mut spec = TokenSpec::status_list(uri, T0 - 60, 1, &statuses);
        spec.x5chain = vec![signer.cert_der.clone()];
        let token = spec.sign(&signer.key);
        let mut times = Vec::new();
        let mut held = 0;
        for _ in 0..21 {
            let started = Instant::now();
            let list = ListToken::parse(&token, ListForm::StatusList, uri, T0).unwrap();
            list.check_signer(Signer::Anchors(&anchors), T0).unwrap();
            times.push(started.elapsed());
            assert_eq!(list.entries(), 1_000_000);
            held = list.held_bytes();
        }
        println!(
            "1,000,000 entries, {what}: token {} bytes, load and verify median {:?} (max {:?}), held {} bytes",
            token.len(),
            median(times.clone()),
            times.iter().max().unwrap(),
            held
        );
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "a benchmark; run on purpose (see the module's comment)"]
async fn an_answer_with_its_list_in_hand_costs_little_more() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/bench");
    let statuses = vec![0u8; 1_000_000];
    let mut spec = TokenSpec::status_list(&uri, T0 - 60, 1, &statuses);
    spec.x5chain = vec![signer.cert_der.clone()];
    lists.serve_body("/bench", spec.sign(&signer.key));
    let ca = Arc::new(TrustAnchors::from_pem(&issuer.ca_pem).unwrap());
    let anchors = KindAnchors::none().with(agegate::domain::Kind::EU_AV, ca.clone());

    // The verifier's share: the same answer with and without `status` in its MSO.
    let transcript = session_transcript(
        "redirect_uri:https://a.example/x",
        "nonce",
        None,
        "https://a.example/x",
    );
    let transcript_bytes = cbor(&transcript);
    let expected = Expected {
        session_transcript: &transcript_bytes,
        min_age: 18,
        now: T0,
    };
    let plain = Presentation::for_claim("age_over_18", T0);
    let with_status = plain
        .clone()
        .with_status(status_list_ref(123_456, &uri, None));
    let without = issuer.device_response_cbor_over(transcript.clone(), &plain);
    let with = issuer.device_response_cbor_over(transcript, &with_status);
    let time = |bytes: &[u8]| {
        let mut times = Vec::new();
        for _ in 0..2000 {
            let started = Instant::now();
            let proof = verify_device_response(bytes, &expected, &anchors).unwrap();
            times.push(started.elapsed());
            std::hint::black_box(proof);
        }
        median(times)
    };
    let (mut base, mut listed) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        base.push(time(&without));
        listed.push(time(&with));
    }
    let (base, listed) = (median(base), median(listed));
    let proof = verify_device_response(&with, &expected, &anchors).unwrap();
    let StatusClaim::Listed(status) = proof.status else {
        panic!("listed")
    };

    // The status lists' share: the lookup once the list is in hand.
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("bench.db").display());
    let store = agegate::store::open(&agegate::store::DatabaseUrl::new(url))
        .await
        .unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let status_lists = StatusLists::new(store, clock, Box::new(|_| {}));
    let first = status_lists
        .status(&status, ListSigner::of(&status, ca.clone()))
        .await;
    assert_eq!(first, Verdict::Status(0));
    let mut times = Vec::new();
    for _ in 0..20_000 {
        let started = Instant::now();
        let verdict = status_lists
            .status(&status, ListSigner::of(&status, ca.clone()))
            .await;
        times.push(started.elapsed());
        std::hint::black_box(verdict);
    }
    let lookup = median(times);
    assert_eq!(lists.fetches("/bench"), 1);
    let held: usize = status_lists.in_hand().iter().map(|l| l.held_bytes).sum();
    println!(
        "verify without status {base:?}, with status {listed:?} (+{:?}); lookup with the list in hand {lookup:?}; total added {:?}; list held {held} bytes",
        listed.saturating_sub(base),
        listed.saturating_sub(base) + lookup,
    );
}
