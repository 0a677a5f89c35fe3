//! The benchmark's ceiling: the invite API's two routes on the same stack (tokio, hyper,
//! axum, serde_json), with the same Basic check (SHA-256 digest, constant-time compare)
//! and the same JSON shapes, but no storage. What agegate keeps of this server's speed
//! is what its own work costs. Used by `bench/run.sh`; not part of the product.
//!
//! With `--store FILE` it is the *floor* instead (`bench/floor.sh`): each create is also
//! stored before it is answered, as agegate must, but as simply as SQLite allows: one row
//! (invite id, customId) per create, one writer thread committing what is queued as one
//! transaction (group commit), WAL with `synchronous = FULL`, SQLite's own checkpoints.
//! `--index` adds an index on the customId (what a list by customId needs, done the
//! plain way); `--no-checkpoint` never copies the WAL back into the database, so the WAL
//! grows without bound: a bound to measure against, not a way to run a server. With
//! `--store postgres://…` the row goes to PostgreSQL instead, each batch as one
//! `INSERT … SELECT FROM unnest(…)` committed on its own (as agegate batches creates).
//! Status reads then look the invite up among those stored (kept in memory, a hash map:
//! the least a read can do) and answer 404 for one never stored.
//!
//! `POST /busy` answers every request at its headers with agegate's answer to a proof
//! while its pool is full (503, `Retry-After`, `Connection: close`, the body never read):
//! what turning a flood of proofs away costs this stack and the kernel (`bench/zk.sh`);
//! `GET /busy` answers how many it turned away.
//!
//!   cargo run --release --example ceiling -- 127.0.0.1:9000 SITE_ID USERNAME PASSWORD
//!   cargo run --release --example ceiling -- 127.0.0.1:9000 SITE_ID USERNAME PASSWORD \
//!     --store /tmp/floor.db [--index] [--no-checkpoint]
//!   cargo run --release --example ceiling -- 127.0.0.1:9000 SITE_ID USERNAME PASSWORD \
//!     --store postgres://postgres@127.0.0.1:5432/floor [--index]

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use subtle::ConstantTimeEq;

struct Site {
    id: String,
    username: String,
    digest: [u8; 32],
    store: Option<Store>,
}

/// A create waiting for the writer: its invite id, its customId, and where to say
/// whether it was committed.
type Job = (String, Option<String>, tokio::sync::oneshot::Sender<bool>);

struct Store {
    writer: Writer,
    /// The customId of every invite stored, by invite id, for status reads.
    kept: Mutex<HashMap<String, Option<String>>>,
}

enum Writer {
    Sqlite(crossbeam_channel::Sender<Job>),
    Postgres(tokio::sync::mpsc::UnboundedSender<Job>),
}

const TABLE: &str =
    "CREATE TABLE IF NOT EXISTS invites (invite_id TEXT PRIMARY KEY, custom_id TEXT)";
const INDEX: &str = "CREATE INDEX IF NOT EXISTS invites_by_custom_id ON invites (custom_id)";

impl Store {
    async fn open(
        target: &str,
        index: bool,
        checkpoint: bool,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let writer = if target.starts_with("postgres://") {
            Self::open_postgres(target, index).await?
        } else {
            Self::open_sqlite(target, index, checkpoint)?
        };
        Ok(Self {
            writer,
            kept: Default::default(),
        })
    }

    async fn open_postgres(url: &str, index: bool) -> Result<Writer, tokio_postgres::Error> {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        client.batch_execute(TABLE).await?;
        if index {
            client.batch_execute(INDEX).await?;
        }
        let (jobs, queue) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(postgres_write_loop(client, queue));
        Ok(Writer::Postgres(jobs))
    }

    fn open_sqlite(path: &str, index: bool, checkpoint: bool) -> rusqlite::Result<Writer> {
        let conn = rusqlite::Connection::open(path)?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")?;
        conn.execute_batch(&format!("{TABLE} WITHOUT ROWID"))?;
        if index {
            conn.execute_batch(INDEX)?;
        }
        if !checkpoint {
            conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        }
        let (jobs, queue) = crossbeam_channel::unbounded();
        std::thread::spawn(move || write_loop(&conn, &queue));
        Ok(Writer::Sqlite(jobs))
    }

    /// Whether the create was committed (false if the writer is gone or failed).
    async fn put(&self, invite_id: String, custom_id: Option<String>) -> bool {
        let (reply, committed) = tokio::sync::oneshot::channel();
        let job = (invite_id.clone(), custom_id.clone(), reply);
        let queued = match &self.writer {
            Writer::Sqlite(jobs) => jobs.send(job).is_ok(),
            Writer::Postgres(jobs) => jobs.send(job).is_ok(),
        };
        let stored = queued && committed.await == Ok(true);
        if stored {
            self.kept().insert(invite_id, custom_id);
        }
        stored
    }

    fn kept(&self) -> MutexGuard<'_, HashMap<String, Option<String>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Group commit on PostgreSQL: what is queued when the last commit ends is one statement.
async fn postgres_write_loop(
    client: tokio_postgres::Client,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<Job>,
) {
    let mut batch = Vec::new();
    while queue.recv_many(&mut batch, 4096).await > 0 {
        let ids: Vec<&str> = batch.iter().map(|(id, _, _)| id.as_str()).collect();
        let custom_ids: Vec<Option<&str>> = batch.iter().map(|(_, c, _)| c.as_deref()).collect();
        let committed = client
            .execute(
                "INSERT INTO invites (invite_id, custom_id)
                 SELECT * FROM unnest($1::TEXT[], $2::TEXT[])",
                &[&ids, &custom_ids],
            )
            .await
            .is_ok();
        for (_, _, reply) in batch.drain(..) {
            let _ = reply.send(committed);
        }
    }
}

/// Group commit: everything queued when the writer gets to it is one transaction, and
/// each create is answered once that transaction is committed (fsynced).
fn write_loop(conn: &rusqlite::Connection, queue: &crossbeam_channel::Receiver<Job>) {
    let mut batch = Vec::new();
    while let Ok(job) = queue.recv() {
        batch.push(job);
        batch.extend(queue.try_iter());
        let committed = commit(conn, &batch).is_ok();
        for (_, _, reply) in batch.drain(..) {
            let _ = reply.send(committed);
        }
    }
}

fn commit(conn: &rusqlite::Connection, batch: &[Job]) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    {
        let mut insert = tx.prepare_cached("INSERT INTO invites VALUES (?1, ?2)")?;
        for (invite_id, custom_id, _) in batch {
            insert.execute(rusqlite::params![invite_id, custom_id])?;
        }
    }
    tx.commit()
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    #[serde(default)]
    custom_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invite {
    invite_id: String,
    url: String,
    expires: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusRecord {
    invite_id: String,
    url: String,
    status: &'static str,
    custom_id: Option<String>,
}

#[derive(Serialize)]
struct ErrorBody {
    error: u32,
    message: &'static str,
}

fn error(status: StatusCode, code: u32, message: &'static str) -> Response {
    (
        status,
        Json(ErrorBody {
            error: code,
            message,
        }),
    )
        .into_response()
}

/// The same decision agegate makes before any handler runs: a Basic credential whose
/// password digest matches, for the site in the path.
fn authorized(site: &Site, headers: &HeaderMap, path_site: &str) -> Result<(), Box<Response>> {
    let unauthorized = || {
        Box::new(error(
            StatusCode::UNAUTHORIZED,
            40101,
            "invalid credentials",
        ))
    };
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(unauthorized)?;
    let (scheme, encoded) = value.trim().split_once(' ').ok_or_else(unauthorized)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(unauthorized());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| unauthorized())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unauthorized())?;
    let (user, pass) = decoded.split_once(':').ok_or_else(unauthorized)?;
    let digest: [u8; 32] = Sha256::digest(pass.as_bytes()).into();
    if user != site.username || !bool::from(digest.ct_eq(&site.digest)) {
        return Err(unauthorized());
    }
    if path_site != site.id {
        return Err(Box::new(error(StatusCode::FORBIDDEN, 40301, "wrong site")));
    }
    Ok(())
}

fn invite_id() -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

async fn create(
    State(site): State<Arc<Site>>,
    Path(site_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(r) = authorized(&site, &headers, &site_id) {
        return *r;
    }
    let parsed: CreateBody = if body.is_empty() {
        CreateBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(b) => b,
            Err(_) => return error(StatusCode::BAD_REQUEST, 40001, "malformed JSON"),
        }
    };
    let id = invite_id();
    if let Some(store) = &site.store {
        if !store.put(id.clone(), parsed.custom_id).await {
            return error(StatusCode::SERVICE_UNAVAILABLE, 50301, "not stored");
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Json(Invite {
        url: format!("http://127.0.0.1/gateway/{id}"),
        invite_id: id,
        expires: now + 86_400,
    })
    .into_response()
}

async fn read(
    State(site): State<Arc<Site>>,
    Path((site_id, invite_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = authorized(&site, &headers, &site_id) {
        return *r;
    }
    let custom_id = match &site.store {
        None => Some("bench-user".to_owned()),
        Some(store) => match store.kept().get(&invite_id) {
            Some(custom_id) => custom_id.clone(),
            None => return error(StatusCode::NOT_FOUND, 40401, "invite not found"),
        },
    };
    Json([StatusRecord {
        url: format!("http://127.0.0.1/gateway/{invite_id}"),
        invite_id,
        status: "pending",
        custom_id,
    }])
    .into_response()
}

static TURNED_AWAY: AtomicU64 = AtomicU64::new(0);

/// A proof turned away unread, as agegate answers it while its pool is full.
async fn busy() -> Response {
    TURNED_AWAY.fetch_add(1, Relaxed);
    let mut answer = error(
        StatusCode::SERVICE_UNAVAILABLE,
        50302,
        "every zero-knowledge proof check is busy",
    );
    let headers = answer.headers_mut();
    headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    headers.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    answer
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!(
            "usage: ceiling LISTEN SITE_ID USERNAME PASSWORD \
             [--store FILE|postgres://… [--index] [--no-checkpoint]]"
        );
        std::process::exit(2);
    };
    let [listen, id, username, password, options @ ..] = args.as_slice() else {
        usage()
    };
    let store = match options {
        [] => None,
        [flag, path, rest @ ..] if flag == "--store" => {
            if rest
                .iter()
                .any(|o| o != "--index" && o != "--no-checkpoint")
            {
                usage()
            }
            let has = |o: &str| rest.iter().any(|r| r == o);
            let store = Store::open(path, has("--index"), !has("--no-checkpoint")).await;
            Some(store.map_err(|e| std::io::Error::other(e.to_string()))?)
        }
        _ => usage(),
    };
    let site = Arc::new(Site {
        id: id.clone(),
        username: username.clone(),
        digest: Sha256::digest(password.as_bytes()).into(),
        store,
    });
    let app = Router::new()
        .route("/v1/website/{site_id}/invite", post(create))
        .route("/v1/website/{site_id}/invite/{invite_id}", get(read))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/busy",
            post(busy).get(|| async { TURNED_AWAY.load(Relaxed).to_string() }),
        )
        .with_state(site);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    axum::serve(listener, app).await
}
