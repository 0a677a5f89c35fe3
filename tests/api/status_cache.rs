//! Status reads never answer older than a change already made: the SQLite backend keeps
//! lately read invites in memory (`store::invite_cache`), so every way an invite changes
//! is read back at once on the same server, and within milliseconds on another server
//! sharing the file. On PostgreSQL they run too, with two nodes (the cache there keeps
//! itself coherent by notifications and syncs: `pg_status_cache.rs`).

use crate::helpers::{
    assert_error, cli_site, client, eventually, spawn_app, temp_db, ServerProcess, TestSite,
};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn a_status_read_after_a_verification_cancel_or_erase_shows_it_at_once() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for _ in 0..20 {
        let verified = app.new_invite_id(&site, None).await;
        let cancelled = app.new_invite_id(&site, None).await;
        let erased = app.new_invite_id(&site, None).await;
        for id in [&verified, &cancelled, &erased] {
            // Read twice: the second read is the one a cache would answer.
            for _ in 0..2 {
                assert_eq!(app.status_record(&site, id).await["status"], "pending");
            }
        }
        assert_eq!(app.verify(&verified).await.status(), 200);
        assert_eq!(
            app.status_record(&site, &verified).await["status"],
            "verified"
        );
        assert_eq!(app.cancel(&site, &cancelled).await.status(), 200);
        assert_eq!(
            app.status_record(&site, &cancelled).await["status"],
            "expired"
        );
        assert_eq!(app.erase(&site, &erased).await.status(), 204);
        assert_error(app.get_invite(&site, &erased).await, 404, 40401).await;
    }
}

#[tokio::test]
async fn another_sites_status_read_of_a_read_invite_is_404() {
    let app = spawn_app().await;
    let (mine, theirs) = (app.create_site().await, app.create_site().await);
    let id = app.new_invite_id(&mine, None).await;
    assert_eq!(app.status_record(&mine, &id).await["status"], "pending");
    assert_error(app.get_invite(&theirs, &id).await, 404, 40401).await;
}

async fn status(node: &ServerProcess, site: &TestSite, id: &str) -> (u16, Value) {
    let resp = node.get_invite(site, id).await;
    (resp.status().as_u16(), resp.json().await.unwrap())
}

/// Two servers on one SQLite file, and a site created by the command line.
fn two_servers() -> (tempfile::TempDir, ServerProcess, ServerProcess, TestSite) {
    let (dir, db) = temp_db();
    let flags = ["--verifier-token", crate::helpers::VERIFIER_TOKEN];
    let (a, b) = (
        ServerProcess::start(&db, &flags),
        ServerProcess::start(&db, &flags),
    );
    let (site, _) = cli_site(&db, &[]);
    (dir, a, b, site)
}

/// Ten times: `b` reads a new invite of `a` three times (the later reads are the ones a
/// cache answers), `a` verifies it, and `b` then reads "verified". With `look_first`,
/// `b` reads that invite before, the read that looks for other processes' commits.
async fn a_verification_on_a_is_read_on_b(
    a: &ServerProcess,
    b: &ServerProcess,
    site: &TestSite,
    look_first: Option<&str>,
) {
    for _ in 0..10 {
        let id = a.new_invite(site, None).await["inviteId"]
            .as_str()
            .unwrap()
            .to_owned();
        for _ in 0..3 {
            let (code, body) = status(b, site, &id).await;
            assert_eq!((code, body[0]["status"].as_str()), (200, Some("pending")));
        }
        assert_eq!(a.verify(&id).await.status(), 200);
        // Another process's commit shows within milliseconds (the cache's FRESH_FOR,
        // 2 ms): each look reads the other invite first when asked to, then this one,
        // until it shows verified; the deadline is far above FRESH_FOR, and well under
        // anything a stale cache would give.
        let id = &id;
        eventually(
            "another process's commit shows",
            Duration::from_millis(100),
            || async move {
                if let Some(other) = look_first {
                    assert_eq!(status(b, site, other).await.0, 200);
                }
                let (code, body) = status(b, site, id).await;
                assert_eq!(code, 200);
                body[0]["status"] == "verified"
            },
        )
        .await;
    }
}

#[tokio::test]
async fn a_status_read_shows_what_another_server_on_the_same_database_changed() {
    let (_dir, a, b, site) = two_servers();
    let other = a.new_invite(&site, None).await["inviteId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The read of another invite first is the one that looks for other processes'
    // commits: what `b` kept of the invite from before must not outlive it.
    a_verification_on_a_is_read_on_b(&a, &b, &site, Some(&other)).await;
}

#[tokio::test]
async fn a_status_read_on_a_server_busy_writing_shows_what_another_server_changed() {
    let (_dir, a, b, site) = two_servers();
    // `b` creates invites without pause, so its writer holds the write lock batch after
    // batch and its cache counts on the check each batch makes when it takes the lock.
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..8)
        .map(|_| {
            let (stop, url, site) = (
                stop.clone(),
                format!("{}/v1/website/{}/invite", b.base, site.site_id),
                site.clone(),
            );
            tokio::spawn(async move {
                let client = client();
                let mut created = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let resp = client
                        .post(&url)
                        .basic_auth(&site.username, Some(&site.password))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(resp.status(), 200);
                    created += 1;
                }
                created
            })
        })
        .collect();
    // No read of another invite first: `b`'s batches check.
    a_verification_on_a_is_read_on_b(&a, &b, &site, None).await;
    stop.store(true, Ordering::Relaxed);
    for task in load {
        assert!(task.await.unwrap() > 0, "the load ran");
    }
}
