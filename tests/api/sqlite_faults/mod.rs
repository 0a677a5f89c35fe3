//! SQLite faults (docs/reliability.md#database-faults): a full disk, an immutable database file and a
//! lock held past the busy timeout each make creates and `/healthz` answer 503 with the
//! error body; service resumes without a restart once the fault clears; an invite is
//! acknowledged only if it was stored. Each test provokes its fault for real under a
//! server process of its own (the real binary). Where this machine cannot (not root, no
//! `mount`, a filesystem without `chattr +i`), the test says why and skips. SQLite only:
//! PostgreSQL's faults are in `pg_faults.rs`.

use crate::helpers::{cli_site, client, eventually, temp_db, ServerProcess, TestDb, TestSite};
use crate::pg::postgres_backend;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod fs;
use crate::faultfs::{fill, Tmpfs};
use fs::{chattr_works, Immutable};

/// How long a cleared fault may take to stop showing (it should be the next request).
const RESUME_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn disk_full_answers_503_then_recovers_with_nothing_lost() {
    if skip_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&dir.path().join("fs"), "2m") else {
        return;
    };
    let db = sqlite_db(&fs.path);
    let (site, _) = cli_site(&db, &[]);
    let server = Server::start(&db);
    let mut acknowledged = server.create_some(&site, 5).await;

    // A reader that keeps its snapshot, as a long report or backup would: nothing written
    // after it can be checkpointed, so the WAL cannot start over in the space it already
    // has and every commit needs new space. (Without it, the background checkpoint may
    // restart the WAL between writes, and small writes such as the health check's fit in
    // the room it has, as they should.)
    let snapshot = rusqlite::Connection::open(db.path.as_ref().unwrap()).unwrap();
    snapshot
        .execute_batch("BEGIN; SELECT count(*) FROM invites;")
        .unwrap();
    fill(&fs.path.join("filler"));
    // A create may still fit in space the WAL already holds; the disk is full for the
    // first create that needs more, and from then on `/healthz` answers 503 at once: its
    // probe needs more new room than a create (docs/operations.md#health), even where the
    // refused create left part of its frames written.
    let mut answered = 0;
    while let Some(id) = server.create(&site).await {
        acknowledged.push(id);
        answered += 1;
        assert!(answered < 500, "a create was refused on a full disk");
    }
    for check in 0..5 {
        assert!(
            server.health_unavailable().await,
            "/healthz answered 200 after a create was refused (check {check})"
        );
    }
    // Now stably refused, while reads of what is stored go on.
    assert!(
        server.create(&site).await.is_none(),
        "create on a full disk"
    );
    assert!(server.health_unavailable().await, "/healthz on a full disk");
    server.assert_readable(&site, &acknowledged).await;

    std::fs::remove_file(fs.path.join("filler")).unwrap();
    drop(snapshot);
    acknowledged.extend(server.resumes(&site).await);
    server.assert_nothing_lost(&site, &acknowledged).await;
}

#[tokio::test]
async fn immutable_database_file_answers_503_then_recovers() {
    if skip_on_postgres() {
        return;
    }
    let (dir, db) = temp_db();
    if !chattr_works(dir.path()) {
        return;
    }
    let (site, _) = cli_site(&db, &[]);
    let server = Server::start(&db);
    let mut acknowledged = server.create_some(&site, 5).await;

    // The database file and its WAL, where commits go. Not the `-shm` index: SQLite maps
    // it into memory, and a store into an immutable mapped file kills the process (SIGBUS).
    let path = db.path.clone().unwrap();
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    assert!(wal.exists(), "the server keeps a WAL");
    let mut immutable = Immutable::set(&[path, wal]);
    // A write to an open file made immutable fails (EPERM: SQLite's disk I/O error).
    assert!(
        server.create(&site).await.is_none(),
        "create on an immutable file"
    );
    assert!(server.create(&site).await.is_none(), "a second create");
    assert!(
        server.health_unavailable().await,
        "/healthz on an immutable file"
    );
    server.assert_readable(&site, &acknowledged).await;

    immutable.clear();
    acknowledged.extend(server.resumes(&site).await);
    server.assert_nothing_lost(&site, &acknowledged).await;
}

#[tokio::test]
async fn locked_database_answers_503_then_recovers() {
    if skip_on_postgres() {
        return;
    }
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    // Its debug log says when a request has arrived.
    let process = ServerProcess::start_with_env(
        &db,
        &[],
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("RUST_LOG", "info,agegate::http=debug"),
        ],
    );
    let server = Server::on(&process);
    let mut acknowledged = server.create_some(&site, 5).await;

    // Another process's connection takes the write lock and keeps it past the server's
    // busy timeout (5 s). In WAL mode that blocks writers only.
    let holder = rusqlite::Connection::open(db.path.as_ref().unwrap()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let read = Instant::now();
    server.assert_readable(&site, &acknowledged).await;
    assert!(read.elapsed() < Duration::from_secs(3), "reads do not wait");

    let waited = Instant::now();
    let (create, health) = tokio::join!(server.create(&site), server.health_unavailable());
    assert!(create.is_none(), "create while the lock is held");
    assert!(health, "/healthz while the lock is held");
    // Each gives up after the busy timeout (the two may take one turn each).
    let waited = waited.elapsed();
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(15),
        "answered after {waited:?}"
    );

    // A create that arrives while the lock is held, and gets it within its wait, is
    // answered 200 once the lock is released.
    const STARTED: &str = "started processing request";
    let arrived = process.log_count(STARTED) + 1;
    let during = tokio::spawn({
        let server = server.clone_handle();
        let site = site.clone();
        async move { server.create(&site).await }
    });
    process.logged_times(STARTED, arrived).await;
    holder.execute_batch("ROLLBACK").unwrap();
    let during = during.await.unwrap();
    acknowledged.push(during.expect("a create waiting for the lock when it is released"));

    acknowledged.extend(server.resumes(&site).await);
    drop(holder);
    server.assert_nothing_lost(&site, &acknowledged).await;
}

fn skip_on_postgres() -> bool {
    if postgres_backend() {
        eprintln!("skipping: SQLite faults need the SQLite backend");
    }
    postgres_backend()
}

/// A SQLite database file in `dir`.
fn sqlite_db(dir: &Path) -> TestDb {
    let path = dir.join("agegate.db");
    TestDb {
        url: format!("sqlite:{}", path.display()),
        path: Some(path),
    }
}

/// The exact answer to every request the fault refuses.
async fn assert_unavailable(resp: reqwest::Response) {
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": 50301, "message": "the service is temporarily unavailable"})
    );
}

/// A server process and how to talk to it.
struct Server {
    _process: Option<ServerProcess>,
    base: String,
    client: reqwest::Client,
}

impl Server {
    fn start(db: &TestDb) -> Self {
        let process = ServerProcess::start(db, &[]);
        Self {
            base: process.base.clone(),
            _process: Some(process),
            client: client(),
        }
    }

    /// A handle on a server process the test keeps.
    fn on(process: &ServerProcess) -> Self {
        Self {
            _process: None,
            base: process.base.clone(),
            client: client(),
        }
    }

    /// Another handle on the same server (the process stays with `self`).
    fn clone_handle(&self) -> Self {
        Self {
            _process: None,
            base: self.base.clone(),
            client: self.client.clone(),
        }
    }

    fn invites(&self, site: &TestSite) -> String {
        format!("{}/v1/website/{}/invite", self.base, site.site_id)
    }

    /// Creates an invite: its id if acknowledged (200), `None` if refused with the exact
    /// 503 answer. Any other answer fails the test.
    async fn create(&self, site: &TestSite) -> Option<String> {
        let resp = self
            .client
            .post(self.invites(site))
            .basic_auth(&site.username, Some(&site.password))
            .send()
            .await
            .unwrap();
        if resp.status() == 503 {
            assert_unavailable(resp).await;
            return None;
        }
        assert_eq!(resp.status(), 200, "a create answers 200 or 503");
        let body: Value = resp.json().await.unwrap();
        Some(body["inviteId"].as_str().unwrap().to_owned())
    }

    async fn create_some(&self, site: &TestSite, n: usize) -> Vec<String> {
        let mut ids = Vec::new();
        for _ in 0..n {
            ids.push(self.create(site).await.expect("a create before the fault"));
        }
        ids
    }

    /// Whether `/healthz` answered the exact 503 (`false` for 200; anything else fails).
    async fn health_unavailable(&self) -> bool {
        let resp = self
            .client
            .get(format!("{}/healthz", self.base))
            .send()
            .await
            .unwrap();
        if resp.status() == 503 {
            assert_unavailable(resp).await;
            return true;
        }
        assert_eq!(resp.status(), 200, "/healthz answers 200 or 503");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body, json!({"status": "ok"}));
        false
    }

    /// After a fault clears: `/healthz` turns 200 within [`RESUME_WITHIN`], without a
    /// restart, and creates are acknowledged again; their ids.
    async fn resumes(&self, site: &TestSite) -> Vec<String> {
        eventually("/healthz 200 again", RESUME_WITHIN, || async {
            !self.health_unavailable().await
        })
        .await;
        self.create_some(site, 5).await
    }

    /// Every invite in `ids` reads 200, pending.
    async fn assert_readable(&self, site: &TestSite, ids: &[String]) {
        for id in ids {
            let resp = self
                .client
                .get(format!("{}/{id}", self.invites(site)))
                .basic_auth(&site.username, Some(&site.password))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200, "{id} was acknowledged");
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body[0]["inviteId"], id.as_str());
            assert_eq!(body[0]["status"], "pending");
        }
    }

    /// Every invite of the site, from the list API.
    async fn listed(&self, site: &TestSite) -> BTreeSet<String> {
        let mut ids = BTreeSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut query = vec![("limit", "500".to_owned())];
            if let Some(c) = cursor.take() {
                query.push(("cursor", c));
            }
            let resp = self
                .client
                .get(self.invites(site))
                .query(&query)
                .basic_auth(&site.username, Some(&site.password))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            let page: Value = resp.json().await.unwrap();
            for invite in page["data"].as_array().unwrap() {
                ids.insert(invite["inviteId"].as_str().unwrap().to_owned());
            }
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return ids,
            }
        }
    }

    /// Every acknowledged invite (before, during and after the fault) is stored, and,
    /// for these faults, a refused create stored nothing: the site holds exactly them.
    async fn assert_nothing_lost(&self, site: &TestSite, acknowledged: &[String]) {
        self.assert_readable(site, acknowledged).await;
        let expected: BTreeSet<String> = acknowledged.iter().cloned().collect();
        assert_eq!(expected.len(), acknowledged.len(), "ids are unique");
        assert_eq!(self.listed(site).await, expected);
    }
}
