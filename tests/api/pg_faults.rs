//! PostgreSQL faults (docs/reliability.md#database-faults): while the database is down, requests get
//! 503 with the error body and `/healthz` 503; service resumes without a restart when it
//! returns; an invite is acknowledged only once committed. Each test stops a cluster of
//! its own; they run in the PostgreSQL pass of the suite.

use crate::faultfs::{fill, Tmpfs};
use crate::helpers::{assert_error, eventually, spawn_on_url};
use crate::pg::{postgres_backend, PgCluster};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the server may take to notice PostgreSQL is back.
const RESUME_WITHIN: Duration = Duration::from_secs(15);

#[tokio::test]
async fn postgresql_down_gives_503_and_service_resumes_without_a_restart() {
    if !postgres_backend() {
        return;
    }
    let cluster = PgCluster::start();
    let app = spawn_on_url(cluster.create_database()).await;
    let site = app.create_site().await;
    let before = app.new_invite_id(&site, None).await;

    cluster.stop_server();
    assert_error(app.create_invite(&site, None).await, 503, 50301).await;
    assert_error(app.get_invite(&site, &before).await, 503, 50301).await;
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_error(health, 503, 50301).await;

    cluster.start_server();
    eventually("creates succeed again", RESUME_WITHIN, || async {
        let resp = app.create_invite(&site, None).await;
        if resp.status() == 200 {
            return true;
        }
        assert_error(resp, 503, 50301).await;
        false
    })
    .await;
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(app.status_record(&site, &before).await["status"], "pending");
}

/// What the load's requests were answered, so far.
#[derive(Default)]
struct Answers {
    ok: AtomicUsize,
    unavailable: AtomicUsize,
}

impl Answers {
    fn ok(&self) -> usize {
        self.ok.load(Ordering::SeqCst)
    }

    fn unavailable(&self) -> usize {
        self.unavailable.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn every_acknowledged_invite_survives_postgresql_going_down_mid_load() {
    if !postgres_backend() {
        return;
    }
    let cluster = PgCluster::start();
    let app = spawn_on_url(cluster.create_database()).await;
    let site = app.create_site().await;
    let answers = Arc::new(Answers::default());
    let done = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let client = app.client.clone();
        let url = app.url(&format!("/v1/website/{}/invite", site.site_id));
        let (user, pass) = (site.username.clone(), site.password.clone());
        let (answers, done) = (answers.clone(), done.clone());
        tasks.spawn(async move {
            let mut acknowledged = Vec::new();
            while !done.is_cancelled() {
                let resp = client
                    .post(&url)
                    .basic_auth(&user, Some(&pass))
                    .send()
                    .await;
                // A connection cut by the outage is neither an answer nor a promise.
                let Ok(resp) = resp else { continue };
                match resp.status().as_u16() {
                    200 => {
                        let body: serde_json::Value = resp.json().await.unwrap();
                        acknowledged.push(body["inviteId"].as_str().unwrap().to_owned());
                        answers.ok.fetch_add(1, Ordering::SeqCst);
                    }
                    503 => {
                        answers.unavailable.fetch_add(1, Ordering::SeqCst);
                    }
                    status => panic!("status {status}"),
                }
            }
            acknowledged
        });
    }
    // Each phase of the load ends on what its answers show, not after a guessed time.
    let seen = |what: &'static str, n: usize, count: fn(&Answers) -> usize| {
        let answers = answers.clone();
        async move {
            let at_least = count(&answers) + n;
            eventually(what, RESUME_WITHIN, || {
                std::future::ready(count(&answers) >= at_least)
            })
            .await;
        }
    };
    seen("creates acknowledged under load", 40, Answers::ok).await;
    cluster.stop_server();
    seen("503s while PostgreSQL is down", 16, Answers::unavailable).await;
    cluster.start_server();
    seen("creates acknowledged again", 16, Answers::ok).await;
    done.cancel();
    let mut acknowledged = Vec::new();
    while let Some(ids) = tasks.join_next().await {
        acknowledged.extend(ids.unwrap());
    }
    for id in &acknowledged {
        assert_eq!(
            app.get_invite(&site, id).await.status(),
            200,
            "{id} was acknowledged"
        );
    }
}

/// docs/reliability.md#database-faults: while PostgreSQL cannot make a write durable (its disk is full), creates
/// and `/healthz` answer 503 alike, so a load balancer stops sending traffic; both recover
/// without a restart once there is room. (A health check that only read, or updated a
/// row in place, still answered 200 here.)
#[tokio::test]
async fn postgresql_disk_full_answers_503_on_healthz_as_on_creates_then_recovers() {
    if !postgres_backend() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&dir.path().join("fs"), "128m") else {
        return;
    };
    let cluster = PgCluster::start_in(&fs.path);
    let app = spawn_on_url(cluster.create_database()).await;
    let site = app.create_site().await;
    let before = app.new_invite_id(&site, None).await;
    let health = || async { app.client.get(app.url("/healthz")).send().await.unwrap() };
    assert_eq!(health().await.status(), 200);

    fill(&fs.path.join("filler"));
    // Creates go on while the invites' last page has room; the first that needs a new
    // page is refused.
    let mut created = 0;
    loop {
        let resp = app.create_invite(&site, None).await;
        if resp.status() == 503 {
            assert_error(resp, 503, 50301).await;
            break;
        }
        assert_eq!(resp.status(), 200);
        created += 1;
        assert!(created < 5000, "creates were never refused on a full disk");
    }
    assert_error(health().await, 503, 50301).await;
    assert_eq!(app.status_record(&site, &before).await["status"], "pending");

    std::fs::remove_file(fs.path.join("filler")).unwrap();
    eventually("/healthz recovers", RESUME_WITHIN, || async {
        health().await.status() == 200
    })
    .await;
    assert_eq!(app.create_invite(&site, None).await.status(), 200);
    drop(app);
    drop(cluster);
}
