//! Several `serve` processes on one PostgreSQL database, all equal: any node answers for
//! any invite, each webhook event is sent once, a node killed mid-delivery loses
//! nothing, revocation reaches every node within 5 s, and a presentation request shown
//! by one node is answered on another. Run in the PostgreSQL pass of the suite
//! (`AGEGATE_TEST_BACKEND=postgres`); on SQLite, `webhooks.rs` covers two servers on
//! one file.

use crate::helpers::{
    cli_site, client, eventually, gateway_page, now, run_cli, temp_db, ServerProcess, TestDb,
    TestSite,
};
use crate::pg::postgres_backend;
use crate::receiver::{signed_by, TestReceiver};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use serde_json::Value;
use std::time::{Duration, Instant};

async fn status(node: &ServerProcess, site: &TestSite, id: &str) -> Value {
    let resp = node.get_invite(site, id).await;
    assert_eq!(resp.status(), 200);
    resp.json::<Value>().await.unwrap()[0].clone()
}

const NODE_FLAGS: &[&str] = &[
    "--allow-private-webhooks",
    "--verifier-token",
    crate::helpers::VERIFIER_TOKEN,
    "--webhook-retry-schedule",
    "1s,1s,1s",
    "--webhook-lease",
    "3s",
];

/// A node whose webhook client gives up after 2 s (the test-only variable of
/// `agegate::config::webhook_timeout`), so that a 3 s lease is allowed and a dead
/// node's event is taken over in seconds rather than after the default 60 s.
fn node(db: &TestDb) -> ServerProcess {
    ServerProcess::start_with_env(
        db,
        NODE_FLAGS,
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("AGEGATE_TEST_WEBHOOK_TIMEOUT_MS", "2000"),
        ],
    )
}

/// `site deliveries --json` of `site`.
fn deliveries(db: &TestDb, site: &TestSite) -> Value {
    let (code, stdout, stderr) = run_cli(db, &["site", "deliveries", &site.site_id, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[tokio::test]
async fn two_nodes_answer_for_each_others_invites_and_send_each_event_once() {
    if !postgres_backend() {
        return;
    }
    let receiver = TestReceiver::start().await;
    let (_dir, db) = temp_db();
    let mut a = node(&db);
    let mut b = node(&db);
    let (site, _) = cli_site(&db, &["--webhook-url", &receiver.url]);
    let mut ids = Vec::new();
    for i in 0..10 {
        let (create, read) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let invite = create.new_invite(&site, None).await;
        let id = invite["inviteId"].as_str().unwrap().to_owned();
        assert_eq!(status(read, &site, &id).await["status"], "pending");
        assert_eq!(create.verify(&id).await.status(), 200);
        assert_eq!(status(read, &site, &id).await["status"], "verified");
        ids.push(id);
    }
    receiver.wait_for(10, Duration::from_secs(10)).await;
    eventually("every event delivered", Duration::from_secs(10), || {
        let events = deliveries(&db, &site);
        let done = events
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["state"] == "delivered" && e["attempts"].as_array().unwrap().len() == 1);
        std::future::ready(done)
    })
    .await;
    // Delivered events are never claimed again, and once both nodes have stopped no
    // attempt is under way: the count is final.
    a.stop().await;
    b.stop().await;
    assert_eq!(receiver.received().len(), 10, "each event once");
    let mut delivered: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r.json()["data"]["inviteId"].as_str().unwrap().to_owned())
        .collect();
    delivered.sort();
    ids.sort();
    assert_eq!(delivered, ids);
    assert!(receiver
        .received()
        .iter()
        .all(|r| signed_by(&site.webhook_secret, r)));
}

#[tokio::test]
async fn a_node_killed_mid_delivery_loses_nothing_another_node_delivers() {
    if !postgres_backend() {
        return;
    }
    let receiver = TestReceiver::start().await;
    let (_dir, db) = temp_db();
    let mut a = node(&db);
    let (site, _) = cli_site(&db, &["--webhook-url", &receiver.url]);
    receiver.hold_next(1);
    let invite = a.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap().to_owned();
    assert_eq!(a.verify(&id).await.status(), 200);
    // A has claimed the event and is waiting on the receiver: kill it there.
    assert_eq!(receiver.wait_for(1, Duration::from_secs(5)).await.len(), 1);
    a.signal("KILL");
    a.exited().await;
    let b = node(&db);
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(
        got.len(),
        2,
        "B delivered the event after A's lease ran out"
    );
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    assert_eq!(got[1].json()["data"]["inviteId"], id.as_str());
    eventually(
        "the event recorded delivered",
        Duration::from_secs(5),
        || std::future::ready(deliveries(&db, &site)[0]["state"] == "delivered"),
    )
    .await;
    drop(b);
}

#[tokio::test]
async fn a_key_revoked_on_one_node_is_refused_by_the_other_within_5_seconds() {
    if !postgres_backend() {
        return;
    }
    let (_dir, db) = temp_db();
    let a = node(&db);
    let b = node(&db);
    let (site, _) = cli_site(&db, &[]);
    b.new_invite(&site, None).await;
    a.new_invite(&site, None).await;
    let (code, _, stderr) = run_cli(
        &db,
        &["site", "key", "revoke", &site.site_id, &site.username],
    );
    assert_eq!(code, 0, "{stderr}");
    let revoked = Instant::now();
    for node in [&a, &b] {
        let left = Duration::from_secs(5).saturating_sub(revoked.elapsed());
        eventually("the revoked key refused", left, || async {
            let resp = client()
                .post(format!("{}/v1/website/{}/invite", node.base, site.site_id))
                .basic_auth(&site.username, Some(&site.password))
                .send()
                .await
                .unwrap();
            assert!(matches!(resp.status().as_u16(), 200 | 401));
            resp.status() == 401
        })
        .await;
    }
}

#[tokio::test]
async fn a_presentation_request_shown_by_one_node_is_answered_on_another() {
    if !postgres_backend() {
        return;
    }
    let issuer = TestIssuer::new(now());
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("anchors.pem");
    std::fs::write(&anchors, &issuer.ca_pem).unwrap();
    let (_db_dir, db) = temp_db();
    // Behind a load balancer every node has the same public URL; requests are sent to
    // each node's own address (nothing is sent to the public one).
    const PUBLIC: &str = "https://age.example";
    let flags = [
        "--eu-av-trust-anchors",
        anchors.to_str().unwrap(),
        "--public-url",
        PUBLIC,
    ];
    let a = ServerProcess::start(&db, &flags);
    let b = ServerProcess::start(&db, &flags);
    let (site, _) = cli_site(&db, &[]);
    let invite = a.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    let url = invite["url"].as_str().unwrap();
    assert!(url.starts_with(PUBLIC));
    let html = gateway_page(&client(), &url.replace(PUBLIC, &a.base)).await;
    let req = AuthorizationRequest::from_gateway_html(&html);
    assert!(req.response_uri.starts_with(PUBLIC));
    // The load balancer sends the wallet's answer to B.
    let on_b = req.response_uri.replace(PUBLIC, &b.base);
    let vp_token = issuer.vp_token(&req, &Presentation::for_request(&req, now()));
    let resp = client()
        .post(&on_b)
        .form(&[
            ("state", req.state.as_str()),
            ("vp_token", vp_token.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(status(&a, &site, id).await["status"], "verified");
}
