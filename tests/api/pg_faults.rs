//! PostgreSQL faults (interface §10): while the database is down, requests get
//! 503 with the error body and `/healthz` 503; service resumes without a restart when it
//! returns; an invite is acknowledged only once committed. Each test stops a cluster of
//! its own.

use crate::faultfs::{fill, Tmpfs};
use crate::helpers::{assert_error, spawn_on_url};
use crate::pg::{available, PgCluster};
use std::time::{Duration, Instant};

#[tokio::test]
async fn postgresql_down_gives_503_and_service_resumes_without_a_restart() {
    if !available() {
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
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let resp = app.create_invite(&site, None).await;
        if resp.status() == 200 {
            break;
        }
        assert_error(resp, 503, 50301).await;
        assert!(Instant::now() < deadline, "service resumed within 15 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(app.status_record(&site, &before).await["status"], "pending");
}

#[tokio::test]
async fn every_acknowledged_invite_survives_postgresql_going_down_mid_load() {
    if !available() {
        return;
    }
    let cluster = PgCluster::start();
    let app = spawn_on_url(cluster.create_database()).await;
    let site = app.create_site().await;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let client = app.client.clone();
        let url = app.url(&format!("/v1/website/{}/invite", site.site_id));
        let (user, pass) = (site.username.clone(), site.password.clone());
        tasks.spawn(async move {
            let mut acknowledged = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                let resp = client
                    .post(&url)
                    .basic_auth(&user, Some(&pass))
                    .send()
                    .await;
                if let Ok(resp) = resp {
                    let status = resp.status().as_u16();
                    assert!(status == 200 || status == 503, "status {status}");
                    if status == 200 {
                        let body: serde_json::Value = resp.json().await.unwrap();
                        acknowledged.push(body["inviteId"].as_str().unwrap().to_owned());
                    }
                }
            }
            acknowledged
        });
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    cluster.stop_server();
    tokio::time::sleep(Duration::from_millis(700)).await;
    cluster.start_server();
    let mut acknowledged = Vec::new();
    while let Some(ids) = tasks.join_next().await {
        acknowledged.extend(ids.unwrap());
    }
    assert!(!acknowledged.is_empty());
    let deadline = Instant::now() + Duration::from_secs(15);
    while app.get_invite(&site, &acknowledged[0]).await.status() != 200 {
        assert!(Instant::now() < deadline, "service resumed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for id in &acknowledged {
        assert_eq!(
            app.get_invite(&site, id).await.status(),
            200,
            "{id} was acknowledged"
        );
    }
}

/// Interface §10: while PostgreSQL cannot make a write durable (its disk is full), creates
/// and `/healthz` answer 503 alike, so a load balancer stops sending traffic; both recover
/// without a restart once there is room. (A health check that only read, or updated a
/// row in place, still answered 200 here.)
#[tokio::test]
async fn postgresql_disk_full_answers_503_on_healthz_as_on_creates_then_recovers() {
    if !available() {
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
    let deadline = Instant::now() + Duration::from_secs(15);
    while health().await.status() != 200 {
        assert!(Instant::now() < deadline, "/healthz recovered within 15 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(app.create_invite(&site, None).await.status(), 200);
    drop(app);
    drop(cluster);
}
