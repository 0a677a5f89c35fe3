//! The embedded default backend: one SQLite file in WAL mode, `synchronous=FULL` so a
//! commit is on disk (fsynced) before the request that made it is answered. Its SQL is in
//! the submodules, one per area; rows are read by [`crate::store::rows`].
//!
//! Invariants, and what holds each by construction:
//! - Acknowledged means committed: the writer answers a batch's jobs only after its
//!   COMMIT returned (`pool`); a job's failure undoes only its own savepoint.
//! - A verification or expiry is written with its webhook event, in the same
//!   transaction: `changes` is the one place that writes either.
//! - A create, verification or expiry is counted in the overview's tallies in its own
//!   transaction: the functions that write one take a job's transaction ([`hooks::Tx`])
//!   and note the change there; the batch's hooks add the kept notes before its commit.
//! - The status cache is never older than this process's commits: every UPDATE or
//!   DELETE of an invite on the writer's connection evicts it by trigger
//!   (`status_coherence`, that connection's hooks), and nothing read during a batch
//!   that changed invites is kept (`InviteCache`'s epoch).
//! - Another process's change of an invite is seen within `FRESH_FOR` (2 ms): persistent
//!   triggers move `invite_changes.generation`, checked when `data_version` moves; the
//!   shared read transaction is ended by the writer thread at that age.
//! - A writer that panics fails every waiting and later write (`pool::FailOnPanic`).

mod background;
mod capabilities;
mod changes;
mod checkpoint;
mod connect;
mod console;
mod custom_id_upkeep;
mod custom_ids;
mod erasure;
mod errors;
mod health;
mod hooks;
mod invites;
mod jobs;
mod migrations;
mod pool;
mod presentations;
mod query;
mod queue;
mod receipts;
mod sites;
mod status_coherence;
mod status_lists;
mod tally;
mod trust_lists;
mod webhooks;
mod writer_conn;

use super::invite_cache::{self, InviteCache, Lookup};
use super::{
    AdminStore, AfterAttempt, AnswerOutcome, Attempt, CancelOutcome, CreateOutcome,
    CredentialRecord, DueEvent, EventRecord, GatewayInvite, InviteRecord, InviteSlice, InviteStore,
    NewCredential, NewInvite, NewSite, Outbox, PresentationStore, RetentionStore, RevokeOutcome,
    SiteRecord, SiteUpdate, StoreError, StoreResult, VerifyOutcome,
};
use crate::clock::UnixTime;
use crate::domain::{
    IdempotentRequest, InviteId, PresentationRequest, SiteId, VerifyMethod, WebhookSecret,
};
use connect::{connect, Role};
use pool::Pool;
use query::{all, one};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use writer_conn::Snapshot;

const READERS: usize = 4;

/// The file a `sqlite:` URL names (`sqlite:PATH`, `sqlite://PATH`), if it is one.
pub fn path_of(database_url: &str) -> Option<&str> {
    let rest = database_url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    Some(rest.split('?').next().unwrap_or(rest))
}

pub struct SqliteStore {
    pool: Pool<hooks::Hooks>,
    /// Invites read lately; every write of an invite passes it to the SQL that changes it.
    cache: Arc<InviteCache>,
}

impl SqliteStore {
    pub async fn open(path: &str) -> StoreResult<Self> {
        if path.is_empty() || path == ":memory:" {
            return Err(StoreError::UnsupportedUrl(
                "sqlite needs a file path (an in-memory database cannot be shared)".into(),
            ));
        }
        let path = PathBuf::from(path);
        // Opening and migrating block; keep them off the async workers.
        tokio::task::spawn_blocking(move || Self::open_blocking(&path))
            .await
            .map_err(|e| StoreError::Database(std::sync::Arc::new(e)))?
    }

    fn open_blocking(path: &Path) -> StoreResult<Self> {
        let mut writer = connect(path, Role::Writer)?;
        migrations::apply(&mut writer)?;
        let readers = (0..READERS)
            .map(|_| connect(path, Role::Reader))
            .collect::<StoreResult<Vec<_>>>()?;
        // One per thread that may read at once: the async runtime's workers.
        let inline = (0..std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
            .map(|_| connect(path, Role::Inline))
            .collect::<StoreResult<Vec<_>>>()?;
        let cache = Arc::new(InviteCache::new(invite_cache::CAPACITY));
        let pool = Pool::start(
            pool::Connections {
                writer,
                readers,
                inline,
                checkpointer: connect(path, Role::Checkpointer)?,
            },
            status_coherence::StatusCoherence::new(cache.clone()),
            hooks::Hooks::new(),
        )
        .map_err(|e| StoreError::Database(Arc::new(e)))?;
        Ok(Self { pool, cache })
    }
}

#[cfg(test)]
mod tests {
    use super::path_of;

    #[test]
    fn sqlite_urls_name_a_file() {
        assert_eq!(path_of("sqlite:agegate.db"), Some("agegate.db"));
        assert_eq!(path_of("sqlite://data/a.db"), Some("data/a.db"));
        assert_eq!(path_of("sqlite:///var/lib/a.db"), Some("/var/lib/a.db"));
        assert_eq!(path_of("sqlite:a.db?mode=rwc"), Some("a.db"));
        assert_eq!(path_of("postgres://x"), None);
    }
}
