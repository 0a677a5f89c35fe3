//! The embedded default backend: one SQLite file in WAL mode, `synchronous=FULL` so a
//! commit is on disk (fsynced) before the request that made it is answered. Its SQL is in
//! the submodules, one per area; rows are read by [`crate::store::rows`].

mod changes;
mod checkpoint;
mod connect;
mod erasure;
mod errors;
mod invites;
mod migrations;
mod pool;
mod presentations;
mod query;
mod queue;
mod sites;
mod webhooks;
mod writer_conn;

use super::invite_cache::{self, InviteCache, Lookup};
use super::{
    AfterAttempt, AnswerOutcome, Attempt, CancelOutcome, CreateOutcome, CredentialRecord, DueEvent,
    EventRecord, GatewayInvite, InviteRecord, InviteSlice, NewCredential, NewInvite, NewSite,
    RevokeOutcome, SiteRecord, SiteUpdate, Store, StoreError, StoreResult, VerifyOutcome,
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
    pool: Pool,
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
            cache.clone(),
        )
        .map_err(|e| StoreError::Database(Arc::new(e)))?;
        Ok(Self { pool, cache })
    }
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        // `/healthz` checks that the database accepts a write (interface §10), so the
        // writer commits one, as it would a request's: a full disk, a file that cannot be
        // written or a lock held past the busy timeout answer 503 here too. The write
        // sets the schema version (`PRAGMA user_version`, the migrations' count) to its
        // own value, read under the same write lock. Nothing changes, no table is added,
        // and page 1 still goes through the WAL with an fsync, at about 4 KiB per check.
        self.pool
            .write(|conn| {
                let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                conn.pragma_update(None, "user_version", version)?;
                Ok(())
            })
            .await
    }

    async fn credential(&self, username: &str) -> StoreResult<Option<CredentialRecord>> {
        let username = username.to_owned();
        self.pool
            .read_now(Snapshot::Latest, move |conn| {
                sites::credential(conn, &username)
            })
            .await
    }

    async fn create_invite(
        &self,
        invite: NewInvite,
        key: Option<IdempotentRequest>,
    ) -> StoreResult<CreateOutcome> {
        match key {
            // Without a key, a create is one INSERT.
            None => {
                self.pool
                    .write_one_statement(move |conn| invites::insert_new(conn, &invite))
                    .await
            }
            Some(key) => {
                self.pool
                    .write(move |conn| invites::create(conn, &invite, Some(&key)))
                    .await
            }
        }
    }

    async fn invite_slices(
        &self,
        site: SiteId,
        slices: Vec<InviteSlice>,
    ) -> StoreResult<Vec<Vec<InviteRecord>>> {
        self.pool
            .read(move |conn| invites::slices(conn, site, &slices))
            .await
    }

    async fn cancel_invite(
        &self,
        site: SiteId,
        id: &InviteId,
        now: UnixTime,
    ) -> StoreResult<CancelOutcome> {
        let id = id.clone();
        self.pool
            .write(move |conn| invites::cancel(conn, site, &id, now))
            .await
    }

    async fn erase_invite(&self, site: SiteId, id: &InviteId) -> StoreResult<bool> {
        let id = id.clone();
        self.pool
            .write(move |conn| erasure::erase(conn, site, &id))
            .await
    }

    async fn invite(&self, site: SiteId, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
        // Status polls: served from the cache when it has the invite (see
        // `invite_cache` for why that is never older than what was answered).
        let ticket = match self.cache.lookup(site, id, Instant::now()) {
            Lookup::Hit(record) => return Ok(Some(record)),
            Lookup::Miss(ticket) => ticket,
        };
        let id = id.clone();
        let found = self
            .pool
            .read_now(Snapshot::Shared, move |conn| {
                invites::of_site(conn, site, &id)
            })
            .await?;
        if let Some(record) = &found {
            self.cache.fill(ticket, record.clone());
        }
        Ok(found)
    }

    async fn verify_invite(
        &self,
        id: &InviteId,
        method: VerifyMethod,
        now: UnixTime,
    ) -> StoreResult<VerifyOutcome> {
        let id = id.clone();
        self.pool
            .write(move |conn| invites::verify(conn, &id, method, now))
            .await
    }

    async fn gateway_invite(&self, id: &InviteId) -> StoreResult<Option<GatewayInvite>> {
        let id = id.clone();
        self.pool
            .read(move |conn| invites::gateway(conn, &id))
            .await
    }

    async fn live_request(
        &self,
        invite: &InviteId,
        now: UnixTime,
    ) -> StoreResult<Option<PresentationRequest>> {
        let invite = invite.clone();
        self.pool
            .read(move |conn| presentations::live(conn, &invite, now))
            .await
    }

    async fn open_request(
        &self,
        invite: &InviteId,
        fresh: PresentationRequest,
    ) -> StoreResult<PresentationRequest> {
        let invite = invite.clone();
        self.pool
            .write(move |conn| presentations::open(conn, &invite, fresh))
            .await
    }

    async fn request(
        &self,
        invite: &InviteId,
        state: &str,
    ) -> StoreResult<Option<PresentationRequest>> {
        let (invite, state) = (invite.clone(), state.to_owned());
        self.pool
            .read(move |conn| presentations::by_state(conn, &invite, &state))
            .await
    }

    async fn answer_request(
        &self,
        invite: &InviteId,
        state: &str,
        now: UnixTime,
    ) -> StoreResult<AnswerOutcome> {
        let (invite, state) = (invite.clone(), state.to_owned());
        self.pool
            .write(move |conn| presentations::answer(conn, &invite, &state, now))
            .await
    }

    async fn expire_due(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        self.pool
            .write(move |conn| webhooks::expire_due(conn, now, limit))
            .await
    }

    async fn claim_events(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<DueEvent>> {
        self.pool
            .write(move |conn| webhooks::claim(conn, now_ms, lease_ms, limit))
            .await
    }

    async fn finish_attempt(
        &self,
        event_id: &str,
        attempt: Attempt,
        after: AfterAttempt,
        now: UnixTime,
    ) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.pool
            .write(move |conn| webhooks::finish_attempt(conn, &event_id, &attempt, after, now))
            .await
    }

    async fn deliveries(&self, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>> {
        self.pool
            .read(move |conn| webhooks::deliveries(conn, site, limit))
            .await
    }

    async fn redeliver(&self, event_id: &str, now_ms: i64) -> StoreResult<bool> {
        let event_id = event_id.to_owned();
        self.pool
            .write(move |conn| webhooks::redeliver(conn, &event_id, now_ms))
            .await
    }

    async fn webhook_backlog(&self) -> StoreResult<u64> {
        self.pool
            .read(|conn| {
                let n: i64 = conn
                    .prepare_cached(super::BACKLOG_SQL)?
                    .query_row([], |row| row.get(0))?;
                Ok(u64::try_from(n).unwrap_or(0))
            })
            .await
    }

    async fn erase_settled(&self, before: UnixTime, limit: usize) -> StoreResult<usize> {
        self.pool
            .write(move |conn| erasure::erase_settled(conn, before, limit))
            .await
    }

    async fn drop_spent(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        self.pool
            .write(move |conn| erasure::drop_spent(conn, now, limit))
            .await
    }

    async fn begin_site_delete(&self, site: SiteId) -> StoreResult<bool> {
        self.pool
            .write(move |conn| erasure::begin_site_delete(conn, site))
            .await
    }

    async fn erase_site_invites(&self, site: SiteId, limit: Option<usize>) -> StoreResult<usize> {
        self.pool
            .write(move |conn| erasure::erase_site_invites(conn, site, limit))
            .await
    }

    async fn create_site(&self, site: NewSite) -> StoreResult<()> {
        self.pool
            .write(move |conn| sites::create(conn, &site))
            .await
    }

    async fn sites(&self) -> StoreResult<Vec<SiteRecord>> {
        self.pool.read(sites::list).await
    }

    async fn site(&self, id: SiteId) -> StoreResult<Option<SiteRecord>> {
        self.pool.read(move |conn| sites::load(conn, id)).await
    }

    async fn update_site(&self, id: SiteId, update: SiteUpdate) -> StoreResult<bool> {
        self.pool
            .write(move |conn| sites::update(conn, id, &update))
            .await
    }

    async fn add_credential(&self, site: SiteId, credential: NewCredential) -> StoreResult<bool> {
        self.pool
            .write(move |conn| sites::add_credential(conn, site, &credential))
            .await
    }

    async fn revoke_credential(
        &self,
        site: SiteId,
        username: &str,
        now: UnixTime,
    ) -> StoreResult<RevokeOutcome> {
        let username = username.to_owned();
        self.pool
            .write(move |conn| sites::revoke(conn, site, &username, now))
            .await
    }

    async fn rotate_webhook_secret(
        &self,
        site: SiteId,
        secret: WebhookSecret,
        now: UnixTime,
    ) -> StoreResult<bool> {
        self.pool
            .write(move |conn| sites::rotate_secret(conn, site, &secret, now))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::{connect, path_of, SqliteStore};
    use crate::store::Store;

    #[tokio::test]
    async fn a_health_check_commits_a_write_that_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
        let wal = dir.path().join("t.db-wal");
        let version = || -> i64 {
            let conn = connect(&path, super::Role::Reader).unwrap();
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap()
        };
        let (before, size) = (version(), std::fs::metadata(&wal).unwrap().len());
        store.ping().await.unwrap();
        assert!(
            std::fs::metadata(&wal).unwrap().len() > size,
            "a page went to the WAL"
        );
        assert_eq!(version(), before);
        assert!(before > 0, "the migrations' count is kept");
    }

    #[test]
    fn sqlite_urls_name_a_file() {
        assert_eq!(path_of("sqlite:agegate.db"), Some("agegate.db"));
        assert_eq!(path_of("sqlite://data/a.db"), Some("data/a.db"));
        assert_eq!(path_of("sqlite:///var/lib/a.db"), Some("/var/lib/a.db"));
        assert_eq!(path_of("sqlite:a.db?mode=rwc"), Some("a.db"));
        assert_eq!(path_of("postgres://x"), None);
    }
}
