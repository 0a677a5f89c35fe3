//! PostgreSQL, for several stateless nodes on one database. Same observable behaviour as
//! the SQLite backend; what SQLite gets from its single writer, this gets from row locks:
//! a change reads its rows `FOR UPDATE` inside a transaction (always the invite first, so
//! two changes never wait on each other in a cycle), and work that nodes share out —
//! webhook claims, the expiry sweep — takes rows `FOR UPDATE SKIP LOCKED`, so each row
//! goes to one node. Reads and the hot paths are single prepared statements.
//!
//! Connections are plain TCP (`NoTls`): run it on a trusted network or a local socket
//! proxy; a URL that demands TLS (`sslmode=require`) is refused when connecting.

mod batch;
mod changes;
mod connect;
mod console;
mod erasure;
mod errors;
mod invites;
mod migrations;
mod presentations;
mod receipts;
mod rows;
mod shared;
mod sites;
mod status_lists;
mod status_sync;
mod trust_lists;
mod webhooks;

use crate::domain::webhook::EventId;
use crate::receipt::Evidence;
use std::time::Duration;

use deadpool_postgres::{GenericClient, Object, Pool};
use tokio_postgres::types::ToSql;

use super::rows::Columns;
use super::{
    AdminStore, AfterAttempt, AnswerOutcome, Attempt, CancelOutcome, CreateOutcome,
    CredentialRecord, DbOptions, DueEvent, EventRecord, GatewayInvite, InviteRecord, InviteSlice,
    InviteStore, NewCredential, NewInvite, NewSite, Outbox, PresentationStore, RetentionStore,
    RevokeOutcome, SiteRecord, SiteUpdate, StoreResult, VerifyOutcome,
};
use crate::clock::{UnixMillis, UnixTime};
use crate::domain::{
    IdempotentRequest, InviteId, PresentationRequest, SiteId, VerifyMethod, WebhookSecret,
};

pub fn is_postgres_url(database_url: &str) -> bool {
    database_url.starts_with("postgres://") || database_url.starts_with("postgresql://")
}

pub struct PostgresStore {
    pool: Pool,
    /// Pipelined connections for the hot single-statement reads.
    shared: shared::Shared,
    /// Group commit of creates without a key.
    inserts: batch::Batcher<invites::InsertBatch>,
    /// The status API's reads, batched.
    reads: batch::Batcher<invites::ReadBatch>,
    /// Status reads already made, answered from memory after a sync.
    status: status_sync::StatusSync,
}

impl PostgresStore {
    /// Connects (failing within a few seconds if PostgreSQL does not answer) and migrates.
    pub async fn open(database_url: &str, options: &DbOptions) -> StoreResult<Self> {
        let config = connect::config(database_url)?;
        let pool = connect::pool(config.clone(), options)?;
        let store = Self {
            status: status_sync::StatusSync::new(config),
            shared: shared::Shared::new(pool.clone()),
            inserts: batch::Batcher::start(pool.clone()),
            reads: batch::Batcher::start(pool.clone()),
            pool,
        };
        let mut client = store.client().await?;
        migrations::apply(&mut client).await?;
        Ok(store)
    }

    async fn client(&self) -> StoreResult<Object> {
        Ok(self.pool.get().await?)
    }
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The first row `sql` yields, read by `map`.
async fn one<T>(
    client: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
    map: impl FnOnce(&dyn Columns) -> StoreResult<T>,
) -> StoreResult<Option<T>> {
    let statement = client.prepare_cached(sql).await?;
    match client.query_opt(&statement, params).await? {
        Some(row) => map(&row).map(Some),
        None => Ok(None),
    }
}

/// Every row `sql` yields, each read by `map`.
async fn all<T>(
    client: &impl GenericClient,
    sql: &str,
    params: Params<'_>,
    map: impl FnMut(&dyn Columns) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let statement = client.prepare_cached(sql).await?;
    let rows = client.query(&statement, params).await?;
    rows.iter()
        .map(|row| row as &dyn Columns)
        .map(map)
        .collect()
}

/// Runs `sql`; returns how many rows it changed.
async fn execute(client: &impl GenericClient, sql: &str, params: Params<'_>) -> StoreResult<u64> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.execute(&statement, params).await?)
}

/// Whether `key` may name a stored TEXT value. TEXT cannot hold U+0000, and a query with
/// it fails; a key from outside (a username, a `state`) that holds one names nothing.
fn may_be_stored(key: &str) -> bool {
    !key.contains('\0')
}

/// A count or limit as PostgreSQL's BIGINT.
fn bigint(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl InviteStore for PostgresStore {
    async fn credential(&self, username: &str) -> StoreResult<Option<CredentialRecord>> {
        sites::credential(&*self.shared.client().await?, username).await
    }

    async fn create_invite(
        &self,
        invite: NewInvite,
        key: Option<IdempotentRequest>,
    ) -> StoreResult<CreateOutcome> {
        match key {
            None => {
                self.inserts.call(invite).await?;
                Ok(CreateOutcome::Created)
            }
            Some(key) => invites::create(&mut self.client().await?, &invite, &key).await,
        }
    }

    async fn invite_slices(
        &self,
        site: SiteId,
        slices: Vec<InviteSlice>,
    ) -> StoreResult<Vec<Vec<InviteRecord>>> {
        invites::slices(&self.client().await?, site, &slices).await
    }

    async fn cancel_invite(
        &self,
        site: SiteId,
        id: &InviteId,
        now: UnixTime,
    ) -> StoreResult<CancelOutcome> {
        invites::cancel(&mut self.client().await?, site, id, now).await
    }

    async fn erase_invite(&self, site: SiteId, id: &InviteId) -> StoreResult<bool> {
        erasure::erase(&mut self.client().await?, site, id).await
    }

    async fn invite(&self, site: SiteId, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
        // Status polls: from memory when the invite was read before, once the node has
        // synced with the change notifications (`status_sync`).
        if let Some(record) = self.status.cached(site, id).await {
            return Ok(Some(record));
        }
        let ticket = self.status.ticket();
        let found = self.reads.call((site, id.clone())).await?;
        if let Some(record) = &found {
            self.status.fill(ticket, record.clone());
        }
        Ok(found)
    }

    async fn verify_invite(
        &self,
        id: &InviteId,
        method: VerifyMethod,
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<VerifyOutcome> {
        invites::verify(&mut self.client().await?, id, method, &evidence, now).await
    }
}

#[async_trait::async_trait]
impl PresentationStore for PostgresStore {
    async fn gateway_invite(&self, id: &InviteId) -> StoreResult<Option<GatewayInvite>> {
        invites::gateway(&*self.shared.client().await?, id).await
    }

    async fn live_request(
        &self,
        invite: &InviteId,
        now: UnixTime,
    ) -> StoreResult<Option<PresentationRequest>> {
        presentations::live(&self.client().await?, invite, now).await
    }

    async fn open_request(
        &self,
        invite: &InviteId,
        fresh: PresentationRequest,
    ) -> StoreResult<PresentationRequest> {
        presentations::open(&mut self.client().await?, invite, fresh).await
    }

    async fn request(
        &self,
        invite: &InviteId,
        state: &str,
    ) -> StoreResult<Option<PresentationRequest>> {
        presentations::by_state(&self.client().await?, invite, state).await
    }

    async fn answer_request(
        &self,
        invite: &InviteId,
        state: &str,
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<AnswerOutcome> {
        presentations::answer(&mut self.client().await?, invite, state, &evidence, now).await
    }
}

#[async_trait::async_trait]
impl Outbox for PostgresStore {
    async fn expire_due(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        webhooks::expire_due(&mut self.client().await?, now, limit).await
    }

    async fn claim_events(
        &self,
        now: UnixMillis,
        lease: Duration,
        limit: usize,
    ) -> StoreResult<Vec<DueEvent>> {
        webhooks::claim(&self.client().await?, now, now.after(lease), limit).await
    }

    async fn finish_attempt(
        &self,
        event: &EventId,
        attempt: Attempt,
        after: AfterAttempt,
        now: UnixTime,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        webhooks::finish_attempt(&client, event.as_str(), &attempt, after, now).await
    }

    async fn deliveries(&self, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>> {
        webhooks::deliveries(&self.client().await?, site, limit).await
    }

    async fn redeliver(&self, event: &EventId, now: UnixMillis) -> StoreResult<bool> {
        webhooks::redeliver(&self.client().await?, event.as_str(), now.get()).await
    }

    async fn webhook_backlog(&self) -> StoreResult<u64> {
        let n = one(&self.client().await?, super::BACKLOG_SQL, &[], |row| {
            row.int(0)
        })
        .await?;
        Ok(n.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
    }
}

#[async_trait::async_trait]
impl RetentionStore for PostgresStore {
    async fn erase_settled(&self, before: UnixTime, limit: usize) -> StoreResult<usize> {
        erasure::erase_settled(&mut self.client().await?, before, limit).await
    }

    async fn drop_spent(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        erasure::drop_spent(&self.client().await?, now, limit).await
    }
}

#[async_trait::async_trait]
impl AdminStore for PostgresStore {
    async fn ping(&self) -> StoreResult<()> {
        // `/healthz` checks that the database makes a write durable (docs/operations.md#health): a
        // committed write that needs a new page, as creates do (migration 4 says why), so
        // a full disk answers 503 here as it does to creates. A standby or a read-only
        // server refuses it as well. Probes of several nodes take turns on the table's
        // lock, for a few milliseconds each.
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.batch_execute("TRUNCATE health_probe").await?;
        let now = crate::clock::Clock::now(&crate::clock::SystemClock);
        tx.execute("INSERT INTO health_probe (checked_at) VALUES ($1)", &[&now])
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn begin_site_delete(&self, site: SiteId) -> StoreResult<bool> {
        erasure::begin_site_delete(&mut self.client().await?, site).await
    }

    async fn erase_site_invites(&self, site: SiteId, limit: Option<usize>) -> StoreResult<usize> {
        erasure::erase_site_invites(&mut self.client().await?, site, limit).await
    }

    async fn create_site(&self, site: NewSite) -> StoreResult<()> {
        sites::create(&mut self.client().await?, &site).await
    }

    async fn sites(&self) -> StoreResult<Vec<SiteRecord>> {
        sites::list(&self.client().await?).await
    }

    async fn site(&self, id: SiteId) -> StoreResult<Option<SiteRecord>> {
        sites::load(&self.client().await?, id).await
    }

    async fn update_site(&self, id: SiteId, update: SiteUpdate) -> StoreResult<bool> {
        sites::update(&self.client().await?, id, &update).await
    }

    async fn add_credential(&self, site: SiteId, credential: NewCredential) -> StoreResult<bool> {
        sites::add_credential(&self.client().await?, site, &credential).await
    }

    async fn revoke_credential(
        &self,
        site: SiteId,
        username: &str,
        now: UnixTime,
    ) -> StoreResult<RevokeOutcome> {
        sites::revoke(&mut self.client().await?, site, username, now).await
    }

    async fn rotate_webhook_secret(
        &self,
        site: SiteId,
        secret: WebhookSecret,
        now: UnixTime,
    ) -> StoreResult<bool> {
        sites::rotate_secret(&mut self.client().await?, site, &secret, now).await
    }
}
