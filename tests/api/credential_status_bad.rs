//! docs/credential-status.md: each mode, each refusal of a list token, and bad inputs —
//! lists agegate must not use or must not even fetch. Under `check` such a credential is
//! accepted with `credentialStatus: "unknown"`; under `require` it is refused, naming why.

use std::time::{Duration, Instant};

use agegate::domain::StatusMode;
use agegate::testkit::{status_list_ref, stranger_signer};
use serde_json::json;

use crate::credential_status_helpers::{
    answer_with_status, receipt_status, refused, status_app, status_list, ListServer, Served,
};
use crate::helpers::T0;
use crate::wallet::TestIssuer;

/// Answers with a credential naming `uri` under `check` (accepted, `unknown`) and under
/// `require` (refused): the refusal's message.
async fn unknown_then_refused(issuer: &TestIssuer, uri: &str) -> String {
    let check = status_app(issuer, StatusMode::Check).await;
    let (site, id, resp) =
        answer_with_status(&check, issuer, Some(status_list_ref(1, uri, None))).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(&check, &site, &id).await, "unknown");
    let require = status_app(issuer, StatusMode::Require).await;
    let (_, _, resp) =
        answer_with_status(&require, issuer, Some(status_list_ref(1, uri, None))).await;
    let message = refused(resp).await;
    assert!(
        message.starts_with("presentation refused: the credential's status cannot be checked (")
            && message.ends_with("), and this server requires it"),
        "{message}"
    );
    message
}

#[tokio::test]
async fn each_refusal_of_a_list_token_leaves_the_status_unknown_and_require_names_it() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    // Each list says index 1 is revoked: used, it would refuse the credential.
    let revoked = json!({"1": 1});
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "/stranger",
            status_list(
                &lists.uri("/stranger"),
                &stranger_signer(T0),
                revoked.clone(),
                |_| {},
            ),
            "does not chain to an anchor",
        ),
        (
            "/sub",
            status_list(&lists.uri("/other"), &signer, revoked.clone(), |_| {}),
            "sub is not the uri",
        ),
        (
            "/exp",
            status_list(&lists.uri("/exp"), &signer, revoked.clone(), |s| {
                s["exp"] = json!(T0 - 1)
            }),
            "exp passed",
        ),
        (
            "/typ",
            status_list(&lists.uri("/typ"), &signer, revoked.clone(), |s| {
                s["typ"] = json!("statuslist+cwt")
            }),
            "typ is not application/statuslist+cwt",
        ),
        (
            "/typ-other-form",
            status_list(
                &lists.uri("/typ-other-form"),
                &signer,
                revoked.clone(),
                |s| s["typ"] = json!("application/identifierlist+cwt"),
            ),
            "typ is not application/statuslist+cwt",
        ),
        (
            "/no-x5chain",
            status_list(&lists.uri("/no-x5chain"), &signer, revoked.clone(), |s| {
                s["x5chain"] = json!([])
            }),
            "no x5chain",
        ),
    ];
    for (path, body, why) in cases {
        lists.serve_body(path, body);
        let message = unknown_then_refused(&issuer, &lists.uri(path)).await;
        assert!(message.contains(why), "{path}: {message}");
    }
}

#[tokio::test]
async fn off_fetches_nothing_and_a_credential_without_status_is_none() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/off");
    lists.serve_body(
        "/sl/off",
        status_list(&uri, &signer, json!({"1": 1}), |_| {}),
    );
    let off = status_app(&issuer, StatusMode::Off).await;
    let (site, id, resp) =
        answer_with_status(&off, &issuer, Some(status_list_ref(1, &uri, None))).await;
    assert_eq!(resp.status(), 200, "revoked, but not looked at");
    assert_eq!(receipt_status(&off, &site, &id).await, "unchecked");
    assert_eq!(lists.fetches("/sl/off"), 0);
    for mode in [StatusMode::Check, StatusMode::Require] {
        let app = status_app(&issuer, mode).await;
        let (site, id, resp) = answer_with_status(&app, &issuer, None).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(receipt_status(&app, &site, &id).await, "none", "{mode}");
    }
}

#[tokio::test]
async fn uris_off_https_are_never_fetched_and_redirects_only_go_to_https() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    // The list itself is good, behind a redirect to plain http (on loopback even).
    let target = lists.uri("/sl/target");
    lists.serve_body(
        "/sl/target",
        status_list(&target, &signer, json!({"1": 1}), |_| {}),
    );
    lists.serve(
        "/sl/redirect",
        Served {
            redirect: Some(target),
            ..Served::default()
        },
    );
    let message = unknown_then_refused(&issuer, &lists.uri("/sl/redirect")).await;
    assert!(message.contains("HTTP 302"), "{message}");
    assert_eq!(lists.fetches("/sl/target"), 0);
    for uri in [
        "file:///etc/passwd".to_owned(),
        "file:/etc/passwd".to_owned(),
        format!("http://example.invalid:{}/sl/target", lists.addr.port()),
        "ftp://127.0.0.1/list".to_owned(),
    ] {
        let message = unknown_then_refused(&issuer, &uri).await;
        assert!(message.contains("is not fetched"), "{uri}: {message}");
    }
    assert_eq!(lists.fetches("/sl/target"), 0);
}

#[tokio::test]
async fn a_zlib_bomb_is_refused_without_its_memory() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/bomb");
    // 65 MiB of one-bit entries, all zero: a small body past the 64 MiB cap.
    let bomb = status_list(&uri, &signer, json!({}), |s| {
        s["size"] = json!(65u64 * 1024 * 1024 * 8)
    });
    assert!(bomb.len() < 4 * 1024 * 1024, "{} bytes", bomb.len());
    lists.serve_body("/sl/bomb", bomb);
    let message = unknown_then_refused(&issuer, &uri).await;
    assert!(
        message.contains("does not inflate to at most 67108864 bytes"),
        "{message}"
    );
}

#[tokio::test]
async fn a_token_nested_deeper_than_sixteen_levels_is_refused() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/deep");
    let deep = status_list(&uri, &signer, json!({"1": 1}), |s| {
        s["extra"] = json!({"-70000": 16})
    });
    lists.serve_body("/sl/deep", deep);
    let message = unknown_then_refused(&issuer, &uri).await;
    assert!(message.contains("nested at most 16 levels"), "{message}");
    // Fifteen arrays in the claims map make sixteen levels: read, and it revokes.
    let app = status_app(&issuer, StatusMode::Check).await;
    let fits_uri = lists.uri("/sl/fits");
    let body = status_list(&fits_uri, &signer, json!({"1": 1}), |s| {
        s["extra"] = json!({"-70000": 15})
    });
    lists.serve_body("/sl/fits", body);
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(1, &fits_uri, None))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
}

#[tokio::test]
async fn a_list_slower_than_five_seconds_is_given_up() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/slow");
    let body = status_list(&uri, &signer, json!({"1": 1}), |_| {});
    lists.serve(
        "/sl/slow",
        Served {
            body,
            delay: Duration::from_secs(8),
            ..Served::default()
        },
    );
    let app = status_app(&issuer, StatusMode::Require).await;
    let started = Instant::now();
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(1, &uri, None))).await;
    let took = started.elapsed();
    let message = refused(resp).await;
    assert!(message.contains("no answer within 5s"), "{message}");
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(7),
        "{took:?}"
    );
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("agegate_status_list_fetches_total{result=\"timeout\"} 1"),
        "{metrics}"
    );
    // Not asked again for every answer: a second one within 30 s is refused at once.
    let started = Instant::now();
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(1, &uri, None))).await;
    assert!(refused(resp).await.contains("a moment ago"));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(lists.fetches("/sl/slow"), 1);
}

#[tokio::test]
async fn require_refuses_a_zero_knowledge_proof_whose_status_is_hidden() {
    use crate::zk::{Backend, Minter, ZkCase, ZkServer};
    use crate::zk_answers::{link_proof, mdl_vp_token};
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start_with(2, |s| s.credential_status = StatusMode::Require).await;
    let app = &server.app;
    let case = ZkCase::new(app, crate::helpers::SiteOptions::default()).await;
    let proof = minter.one(link_proof("hidden", &case, app)).await;
    let resp = case.post_link(app, &mdl_vp_token(&proof)).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: a zero-knowledge proof cannot show the credential's status, \
         which this server requires"
    );
    assert_eq!(case.status(app).await, "pending");
}
