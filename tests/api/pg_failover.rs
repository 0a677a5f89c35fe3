//! The background jobs carry on after a PostgreSQL failover
//! (docs/operations.md#high-availability-with-postgresql): on a node using
//! `postgres://…@primary,standby/agegate?target_session_attrs=read-write`, the primary
//! gets SIGKILL and its synchronous standby is promoted; then the expiry sweep sends the
//! `invite.expired` of an invite that expired during the switch, retention erases what it
//! must, the trust-list refresh takes a new list and keeps it in the promoted
//! database, and a credential status list is fetched again after its ttl. The whole load under failover is `scripts/proofs/failover.sh`. In the
//! PostgreSQL pass of the suite.

use crate::credential_status_helpers::{answer_with_status, refused, status_list, ListServer};
use crate::helpers::{eventually, spawn_on_url_with, trusting, ServerProcess, TestApp, TestDb, T0};
use crate::pg::postgres_backend;
use crate::pg_pair::PgPair;
use crate::receiver::TestReceiver;
use crate::trust_lists::{eu_av_gauge, lists_a_and_b};
use crate::trust_refresh::{list, node, ListSource, Reply};
use crate::wallet::TestIssuer;
use crate::webhooks::hooked_site;
use agegate::domain::{Kind, StatusMode};
use agegate::retention::Retention;
use agegate::testkit::status_list_ref;
use serde_json::json;
use std::time::Duration;

const DAY: i64 = 86_400;
const REVOKED: &str = "presentation refused: the credential is revoked";
/// How long a job may take to carry on once the standby is promoted.
const AFTER_PROMOTION: Duration = Duration::from_secs(30);

/// Waits until the node has no database to write to: a create answers 503.
async fn until_writes_fail(app: &TestApp, site: &crate::helpers::TestSite) {
    eventually("creates answer 503", Duration::from_secs(10), || async {
        app.create_invite(site, None).await.status() == 503
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invite_that_expires_during_a_failover_gets_its_invite_expired_event() {
    if !postgres_backend() {
        return;
    }
    let pair = PgPair::start();
    let receiver = TestReceiver::start().await;
    let app = spawn_on_url_with(pair.url(), |s| s.allow_private_webhooks = true).await;
    let site = hooked_site(&app, &receiver).await;
    let invite = app.new_invite_id(&site, None).await;

    pair.kill_primary();
    until_writes_fail(&app, &site).await;
    app.clock.advance(DAY + 1); // it expires while there is no primary
    pair.promote();

    eventually("invite.expired arrives", AFTER_PROMOTION, || async {
        receiver.received().iter().any(|r| {
            let event = r.json();
            event["type"] == "invite.expired" && event["data"]["inviteId"] == invite.as_str()
        })
    })
    .await;
    assert_eq!(app.status_record(&site, &invite).await["status"], "expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_erases_after_a_failover() {
    if !postgres_backend() {
        return;
    }
    let pair = PgPair::start();
    let app = spawn_on_url_with(pair.url(), |s| {
        s.retention = Retention::days(1);
        s.retention_interval = Duration::from_millis(100);
    })
    .await;
    let site = app.create_site().await;
    let settled = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&settled).await.status(), 200);

    pair.kill_primary();
    until_writes_fail(&app, &site).await;
    pair.promote();
    app.clock.advance(DAY + 1);

    eventually("the settled invite is erased", AFTER_PROMOTION, || async {
        app.get_invite(&site, &settled).await.status() == 404
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trust_list_refresh_takes_a_new_list_after_a_failover_and_keeps_it_there() {
    if !postgres_backend() {
        return;
    }
    let pair = PgPair::start();
    let db = TestDb {
        url: pair.url(),
        path: None,
    };
    let source = ListSource::start(list("xmlsec-rsa-filter2-exc.xml")).await;
    let (first, metrics) = node(&db, &source.url);
    let (list_a, list_b) = lists_a_and_b();
    assert_eq!(eu_av_gauge(&metrics).await, list_a);

    pair.kill_primary();
    pair.promote();
    // B (sequence 2) is published after the promotion: the refresh takes it and stores it
    // in the promoted database.
    source.serve(list("xmlsec-rsa-filter2-exc-b.xml"));
    eventually("B in force", AFTER_PROMOTION, || {
        let (metrics, want) = (metrics.clone(), list_b.clone());
        async move { eu_av_gauge(&metrics).await == want }
    })
    .await;
    first
        .logged(&format!(
            "trusted list eu-av-trusted-list {}: sequence 2 in force",
            source.url
        ))
        .await;

    // A node started now, while the source answers 500, has B from the database.
    source.serve(Reply::Status(500));
    let (_second, second_metrics): (ServerProcess, String) = node(&db, &source.url);
    assert_eq!(eu_av_gauge(&second_metrics).await, list_b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_list_refresh_carries_on_after_a_failover() {
    if !postgres_backend() {
        return;
    }
    let pair = PgPair::start();
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/failover");
    lists.serve_body(
        "/sl/failover",
        status_list(&uri, &signer, json!({"1": 1}), |_| {}),
    );
    let ca = issuer.ca_pem.clone();
    let app = spawn_on_url_with(pair.url(), |s| {
        s.trust = trusting(Kind::EU_AV, &ca);
        s.credential_status = StatusMode::Check;
    })
    .await;
    let revoked = Some(status_list_ref(1, &uri, None));
    let (_, _, resp) = answer_with_status(&app, &issuer, revoked.clone()).await;
    assert_eq!(refused(resp).await, REVOKED);
    assert_eq!(lists.fetches("/sl/failover"), 1);

    pair.kill_primary();
    pair.promote();
    // The issuer reinstates credential 1; past the copy's ttl (600 s) the list is fetched
    // again behind the copy in hand, and the new one is used.
    lists.serve_body(
        "/sl/failover",
        status_list(&uri, &signer, json!({}), |spec| {
            spec["iat"] = json!(T0 + 600)
        }),
    );
    app.clock.advance(601);
    let _ = answer_with_status(&app, &issuer, revoked.clone()).await;
    eventually("the list fetched again", AFTER_PROMOTION, || async {
        lists.fetches("/sl/failover") >= 2
    })
    .await;
    eventually("credential 1 verifies", AFTER_PROMOTION, || async {
        let (_, _, resp) = answer_with_status(&app, &issuer, revoked.clone()).await;
        resp.status() == 200
    })
    .await;
}
