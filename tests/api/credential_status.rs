//! docs/credential-status.md end to end: credentials from the test issuer name a status
//! list or identifier list whose token is made and signed by implementations nobody on
//! agegate wrote (scripts/status-list-token.py: PyPI's token-status-list, cbor2, pycose),
//! served by a loopback server that counts its fetches (`credential_status_helpers.rs`).
//! Bad inputs are in `credential_status_bad.rs`, transports and nodes in
//! `credential_status_nodes.rs`, the console's counts in `console_status.rs`.

use agegate::domain::StatusMode;
use agegate::testkit::{identifier_list_ref, status_list_ref};
use serde_json::json;
use std::time::Duration;

use crate::credential_status_helpers::{
    answer_req, answer_with_status, hex, receipt_status, refused, status_app, status_list, token,
    ListServer,
};
use crate::eu_av::{answer, invite_with_request};
use crate::helpers::{SiteOptions, T0};
use crate::wallet::{Presentation, TestIssuer};

#[tokio::test]
async fn a_revoked_credential_is_refused_and_a_valid_one_verifies_with_credential_status_valid() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    lists.serve_body(
        "/sl/1",
        status_list(&lists.uri("/sl/1"), &signer, json!({"3": 1}), |_| {}),
    );
    let app = status_app(&issuer, StatusMode::Check).await;
    let uri = lists.uri("/sl/1");

    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(3, &uri, None))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");

    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(4, &uri, None))).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    // Fetched whole, once, asking for the CWT form.
    assert_eq!(lists.accepts("/sl/1"), ["application/statuslist+cwt"]);

    let metrics = app.metrics().await;
    for line in [
        "agegate_status_list_fetches_total{result=\"ok\"} 1",
        "agegate_credential_status_total{kind=\"eu-av\",status=\"revoked\"} 1",
        "agegate_credential_status_total{kind=\"eu-av\",status=\"valid\"} 1",
        "agegate_presentations_total{kind=\"eu-av\",transport=\"openid4vp\",outcome=\"revoked\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

#[tokio::test]
async fn each_status_value_is_judged_and_an_index_past_the_end_is_refused() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/2bits");
    // Two bits per entry: 0 valid, 1 revoked, 2 suspended, 3 application-specific.
    let body = status_list(&uri, &signer, json!({"1": 1, "2": 2, "3": 3}), |s| {
        s["bits"] = json!(2);
        s["size"] = json!(16);
    });
    lists.serve_body("/sl/2bits", body);
    let app = status_app(&issuer, StatusMode::Check).await;
    let cases = [
        (1, "presentation refused: the credential is revoked"),
        (2, "presentation refused: the credential is suspended"),
        (3, "presentation refused: the credential's status is not valid (status 3)"),
        (16, "presentation refused: the credential's status index is past the end of its status list"),
    ];
    for (idx, message) in cases {
        let (_, _, resp) =
            answer_with_status(&app, &issuer, Some(status_list_ref(idx, &uri, None))).await;
        assert_eq!(refused(resp).await, message, "idx {idx}");
    }
    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(15, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    assert_eq!(lists.fetches("/sl/2bits"), 1);
}

#[tokio::test]
async fn an_identifier_list_revokes_the_identifiers_it_holds() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/il/1");
    let body = token(&json!({
        "form": "identifier_list", "uri": uri, "iat": T0 - 60, "exp": T0 + 3600,
        "ids": [hex(b"revoked-1"), hex(b"revoked-2")],
        "key_pem": signer.key_pem, "x5chain": [hex(&signer.cert_der)],
    }));
    lists.serve_body("/il/1", body);
    let app = status_app(&issuer, StatusMode::Check).await;
    let (_, _, resp) = answer_with_status(
        &app,
        &issuer,
        Some(identifier_list_ref(b"revoked-2", &uri, None)),
    )
    .await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    let (site, id, resp) = answer_with_status(
        &app,
        &issuer,
        Some(identifier_list_ref(b"fine", &uri, None)),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    assert_eq!(lists.accepts("/il/1"), ["application/identifierlist+cwt"]);
}

#[tokio::test]
async fn a_list_signed_by_the_certificate_the_credential_names_needs_no_x5chain() {
    let issuer = TestIssuer::new(T0);
    // A signer no anchor vouches for: the issuer vouches for it by naming it.
    let signer = agegate::testkit::stranger_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/named");
    lists.serve_body(
        "/sl/named",
        status_list(&uri, &signer, json!({"9": 1}), |s| s["x5chain"] = json!([])),
    );
    let app = status_app(&issuer, StatusMode::Require).await;
    let named = |idx| status_list_ref(idx, &uri, Some(&signer.cert_der));
    let (_, _, resp) = answer_with_status(&app, &issuer, Some(named(9))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    let (site, id, resp) = answer_with_status(&app, &issuer, Some(named(8))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    // Without the certificate, the same list has no signer the kind's anchors know.
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(8, &uri, None))).await;
    let message = refused(resp).await;
    assert!(
        message.contains("cannot be checked") && message.contains("x5chain"),
        "{message}"
    );
}

#[tokio::test]
async fn five_credentials_on_one_list_within_its_ttl_cost_one_fetch_and_then_one_more() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/ttl");
    lists.serve_body("/sl/ttl", status_list(&uri, &signer, json!({}), |_| {}));
    let app = status_app(&issuer, StatusMode::Check).await;
    let mut answers = Vec::new();
    for idx in 0..5 {
        let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
        answers.push((site, invite, req, idx));
    }
    // Five at once: one fetch, the others wait for it.
    let all = answers.iter().map(|(_, _, req, idx)| {
        answer_req(&app, &issuer, req, Some(status_list_ref(*idx, &uri, None)))
    });
    for resp in futures_util::future::join_all(all).await {
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(lists.fetches("/sl/ttl"), 1);
    // Past its ttl (600 s) the copy in hand still answers, and is fetched again behind it.
    app.clock.advance(601);
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(7, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    let refetched = || async { lists.fetches("/sl/ttl") == 2 };
    crate::helpers::eventually("the list fetched again", Duration::from_secs(5), refetched).await;
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(8, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(lists.fetches("/sl/ttl"), 2);
}

#[tokio::test]
async fn a_credential_whose_issuer_signature_fails_names_a_list_never_fetched() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/never");
    lists.serve_body("/sl/never", status_list(&uri, &signer, json!({}), |_| {}));
    let app = status_app(&issuer, StatusMode::Require).await;
    let (_, _, req) = invite_with_request(&app, SiteOptions::default()).await;
    let mut p = Presentation::for_request(&req, T0);
    p.mso_status = Some(status_list_ref(1, &uri, None));
    p.bad_issuer_signature = true;
    let resp = answer(&app, &req, &issuer.vp_token(&req, &p)).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: issuer signature is invalid"
    );
    // Nor for a stranger's credential that is otherwise well made.
    let stranger = TestIssuer::new(T0);
    let resp = answer_req(&app, &stranger, &req, Some(status_list_ref(1, &uri, None))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: issuer is not trusted"
    );
    assert_eq!(lists.fetches("/sl/never"), 0);
}
