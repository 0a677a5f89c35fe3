//! The cost of verifying one Proof of Age presentation (issuer signature, certificate
//! chain, digests, device signature), single-threaded. Not part of the suite's
//! assertions: run it on purpose, pinned to one core, with the release profile:
//!
//!   taskset -c 1 cargo test --release --test api eu_av_bench -- --ignored --nocapture

use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use agegate::mdoc::{verify_vp_token, Expected, TrustAnchors};
use std::time::Instant;

#[test]
#[ignore = "a benchmark; run on purpose (see the module's comment)"]
fn verifications_per_second_on_one_core() {
    const T0: i64 = crate::helpers::T0;
    let issuer = TestIssuer::new(T0);
    let anchors = agegate::mdoc::KindAnchors::single(
        agegate::domain::Kind::EU_AV,
        TrustAnchors::from_pem(&issuer.ca_pem).unwrap(),
    );
    let response_uri = "https://age.example/gateway/AAAAAAAAAAAAAAAAAAAAAA/openid4vp";
    let uri = url::form_urlencoded::Serializer::new("av://authorize?".to_owned())
        .append_pair("response_type", "vp_token")
        .append_pair("response_mode", "direct_post")
        .append_pair("response_uri", response_uri)
        .append_pair("client_id", &format!("redirect_uri:{response_uri}"))
        .append_pair("nonce", "bm9uY2Utbm9uY2Utbm9uY2U")
        .append_pair("state", "c3RhdGUtc3RhdGUtc3RhdGU")
        .append_pair(
            "dcql_query",
            &agegate::domain::presentation::dcql_query(
                agegate::domain::KindSet::one(agegate::domain::Kind::EU_AV),
                agegate::domain::MinAge::DEFAULT,
                None,
            ),
        )
        .append_pair(
            "client_metadata",
            agegate::domain::presentation::CLIENT_METADATA,
        )
        .finish();
    let req = AuthorizationRequest::parse(&uri);
    let vp_token = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    let transcript =
        agegate::mdoc::session_transcript(&req.client_id, &req.nonce, &req.response_uri);
    let expected = Expected {
        session_transcript: &transcript,
        min_age: 18,
        now: T0,
    };
    assert!(verify_vp_token(&vp_token, &expected, &anchors).is_ok());
    // Warm up, then measure for about two seconds.
    for _ in 0..50 {
        verify_vp_token(&vp_token, &expected, &anchors).unwrap();
    }
    let started = Instant::now();
    let mut n = 0u32;
    while started.elapsed().as_secs_f64() < 2.0 {
        verify_vp_token(&vp_token, &expected, &anchors).unwrap();
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "eu-av verification: {n} in {secs:.2} s = {:.0} verifications/s on one core ({:.0} µs each; vp_token {} bytes)",
        f64::from(n) / secs,
        secs * 1e6 / f64::from(n),
        vp_token.len()
    );
}

/// What a receipt adds to a verification: reading the stored key and signing the
/// payload (ES256), as the verifying transaction does.
#[test]
#[ignore = "a benchmark; run on purpose (see the module's comment)"]
fn receipts_signed_per_second_on_one_core() {
    use agegate::receipt::{Evidence, Payload, Presented, ReceiptKey, Transport, Verified};
    let stored = ReceiptKey::generate().to_bytes();
    let evidence = Evidence {
        issuer: "https://age.example".into(),
        min_age: 18,
        presented: Some(Presented {
            kind: agegate::domain::Kind::EU_AV,
            doc_type: "eu.europa.ec.av.1",
            issuer_anchor: [7; 32],
            transport: Transport::OpenId4Vp,
            nonce: "bm9uY2Utbm9uY2Utbm9uY2U".into(),
            zk_circuit: None,
            credential_status: agegate::domain::CredentialStatus::None,
        }),
    };
    let sign = || {
        let key = ReceiptKey::from_bytes(&stored).unwrap();
        let verified = Verified {
            invite_id: "AAAAAAAAAAAAAAAAAAAAAA",
            site_id: "6f9619ff-8b86-d011-b42d-00cf4fc964ff".into(),
            custom_id: Some("user-42"),
            at: crate::helpers::T0,
            method: "eu-av",
        };
        key.sign(&Payload::new(&verified, &evidence))
    };
    for _ in 0..50 {
        sign();
    }
    let started = Instant::now();
    let mut n = 0u32;
    while started.elapsed().as_secs_f64() < 2.0 {
        sign();
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "receipt: {n} in {secs:.2} s = {:.0} receipts/s on one core ({:.0} µs each; {} bytes)",
        f64::from(n) / secs,
        secs * 1e6 / f64::from(n),
        sign().len()
    );
}
