//! docs/credential-status.md across transports and nodes: a revoked credential is
//! refused however it arrives (the link, the Digital Credentials API's R1 and R2, a
//! request by reference), and the database's copy of a list is shared by the nodes on
//! it and read when the list host is down.

use agegate::domain::StatusMode;
use agegate::testkit::status_list_ref;
use serde_json::json;

use crate::by_reference::{encrypt, plaintext, resolve, thumbprint, transcript, wallet_metadata};
use crate::credential_status_helpers::{
    answer_with_status, receipt_status, refused, status_app, status_list, ListServer, Served,
};
use crate::dc_api::DcCase;
use crate::helpers::{json_output, spawn_beside, trust_show_json, SiteOptions, TestApp, T0};
use crate::wallet::{DcAnswer, Presentation, TestIssuer};

const REVOKED: &str = "presentation refused: the credential is revoked";

/// A list host serving at `path` `issuer`'s status list with index 1 revoked: the host
/// (which counts its fetches) and the list's URI.
async fn revoking_one(issuer: &TestIssuer, path: &str) -> (ListServer, String) {
    let lists = ListServer::start().await;
    let uri = lists.uri(path);
    let signer = issuer.status_signer(T0);
    lists.serve_body(path, status_list(&uri, &signer, json!({"1": 1}), |_| {}));
    (lists, uri)
}

#[tokio::test]
async fn a_revoked_credential_is_refused_through_the_dc_api_r1_and_r2() {
    let issuer = TestIssuer::new(T0);
    let (lists, uri) = revoking_one(&issuer, "/sl/dc").await;
    let app = status_app(&issuer, StatusMode::Check).await;
    let c = DcCase::on(issuer, app, SiteOptions::default()).await;
    let revoked = c.valid().with_status(status_list_ref(1, &uri, None));
    for body in [
        c.r1_body(&revoked, &DcAnswer::default()),
        c.r2_body(&revoked, &DcAnswer::default()),
    ] {
        let resp = c.post(&body).await;
        assert_eq!(refused(resp).await, REVOKED);
    }
    assert_eq!(c.status().await, "pending");
    let valid = c.valid().with_status(status_list_ref(2, &uri, None));
    let resp = c.post(&c.r2_body(&valid, &DcAnswer::default())).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(&c.app, &c.site, &c.invite_id).await, "valid");
    assert_eq!(lists.fetches("/sl/dc"), 1);
}

#[tokio::test]
async fn a_revoked_credential_is_refused_through_a_request_by_reference() {
    let c = crate::by_reference::RefCase::with(|s| s.credential_status = StatusMode::Require).await;
    let (_lists, uri) = revoking_one(&c.issuer, "/sl/ref").await;
    let resolved = resolve(&c.link(), &wallet_metadata(false, &["A128GCM"]))
        .await
        .expect("the library resolves and verifies the request");
    let claim = resolved.claim();
    let answer = |idx: u64| {
        let p = Presentation::for_claim(&claim, T0).with_status(status_list_ref(idx, &uri, None));
        let t = transcript(&resolved, Some(thumbprint(resolved.jwk())));
        encrypt(
            resolved.jwk(),
            "ECDH-ES",
            "A128GCM",
            &plaintext(&c.issuer, &resolved, t, &p),
        )
    };
    let response_uri = resolved.text("response_uri");
    let resp = c
        .post_answer(&response_uri, &[("response", &answer(1))])
        .await;
    assert_eq!(refused(resp).await, REVOKED);
    let resp = c
        .post_answer(&response_uri, &[("response", &answer(2))])
        .await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(&c.app, &c.site, &c.invite_id).await, "valid");
}

/// Another node on `first`'s database, trusting `issuer` and requiring status checks.
async fn node_beside(first: &TestApp, issuer: &TestIssuer) -> TestApp {
    spawn_beside(first, |s| {
        s.trust = crate::helpers::trusting(agegate::domain::Kind::EU_AV, &issuer.ca_pem);
        s.credential_status = StatusMode::Require;
    })
    .await
}

/// An answer on `node` with the credential at `idx` of the list at `uri`: refused as
/// revoked.
async fn revoked_on(node: &TestApp, issuer: &TestIssuer, uri: &str, idx: u64) {
    let (_, _, resp) =
        answer_with_status(node, issuer, Some(status_list_ref(idx, uri, None))).await;
    assert_eq!(refused(resp).await, REVOKED);
}

/// An answer on `node` with the credential at `idx` of the list at `uri`: accepted, its
/// receipt saying the status is valid.
async fn valid_on(node: &TestApp, issuer: &TestIssuer, uri: &str, idx: u64) {
    let (site, id, resp) =
        answer_with_status(node, issuer, Some(status_list_ref(idx, uri, None))).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(node, &site, &id).await, "valid");
}

#[tokio::test]
async fn two_nodes_share_one_copy_and_a_node_reads_it_while_the_list_host_is_down() {
    let issuer = TestIssuer::new(T0);
    let (lists, uri) = revoking_one(&issuer, "/sl/shared").await;
    let first = status_app(&issuer, StatusMode::Require).await;
    // The first node fetches 1000 s before the others' clocks: its copy's ttl (600 s)
    // has run out for them, but not its exp (a day).
    first.clock.advance(-1000);
    revoked_on(&first, &issuer, &uri, 1).await;
    assert_eq!(lists.fetches("/sl/shared"), 1);
    first.clock.advance(1000);

    // A second node on the database finds that copy past its ttl and fetches once; a
    // third then takes the second's copy without fetching.
    let second = node_beside(&first, &issuer).await;
    revoked_on(&second, &issuer, &uri, 1).await;
    assert_eq!(lists.fetches("/sl/shared"), 2);
    let third = node_beside(&first, &issuer).await;
    valid_on(&third, &issuer, &uri, 2).await;
    assert_eq!(
        lists.fetches("/sl/shared"),
        2,
        "the third node used the shared copy"
    );

    // The list host goes down, and the kept copy is past its ttl: a node started now (a
    // restart) tries the host once, then reads the list from the database, even under
    // `require`, while the copy is before its exp.
    lists.serve(
        "/sl/shared",
        Served {
            status: Some(503),
            ..Served::default()
        },
    );
    let mut copy = first
        .store
        .status_list("status_list", &uri)
        .await
        .unwrap()
        .unwrap();
    copy.fetched_at = T0 - 1000;
    first.store.save_status_list(copy).await.unwrap();
    let restarted = node_beside(&first, &issuer).await;
    revoked_on(&restarted, &issuer, &uri, 1).await;
    valid_on(&restarted, &issuer, &uri, 3).await;
    assert_eq!(
        lists.fetches("/sl/shared"),
        3,
        "one try while the host is down"
    );

    // `trust show` lists the copy the nodes share.
    let (shown, _) = json_output(&mut trust_show_json(&first.db_url));
    let listed = &shown["statusLists"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{shown}");
    assert_eq!(listed[0]["form"], "status_list");
    assert_eq!(listed[0]["uri"], uri);
    assert_eq!(listed[0]["iat"], agegate::clock::rfc3339(T0 - 60));
    assert_eq!(listed[0]["exp"], agegate::clock::rfc3339(T0 + 86_400));
    assert!(listed[0]["size"].as_u64().unwrap() > 100, "{listed}");
    assert_eq!(listed[0]["lastFetch"], agegate::clock::rfc3339(T0 - 1000));
}
