//! Persistence behind one narrow trait. Handlers and commands speak only to [`Store`];
//! every SQL statement lives in a backend module, so another backend plugs in without
//! touching them. What backends share — row mapping ([`rows`]) and which writes follow
//! from a change ([`transitions`]) — is written once.

pub mod console;
mod database_url;
mod error;
mod events;
pub mod invite_cache;
pub mod listing;
pub mod postgres;
mod records;
pub(crate) mod rows;
pub mod sqlite;
pub mod status_lists;
pub(crate) mod transitions;
pub mod trust_lists;

pub use console::ConsoleStore;
pub use database_url::{mask_password, DatabaseUrl};
pub use error::{describe, StoreError, StoreResult};
pub use events::{
    AfterAttempt, Attempt, AttemptRecord, DueEvent, EventRecord, OLD_SECRET_GRACE_SECS,
};
pub use listing::{InvitePage, InviteSlice};
pub use records::*;
pub use status_lists::{StatusListStore, StoredStatusList};
pub use trust_lists::{StoredList, TrustListStore};

use crate::clock::{UnixMillis, UnixTime};
use crate::domain::webhook::EventId;
use crate::domain::{
    IdempotentRequest, InviteId, ListQuery, PresentationRequest, SiteId, VerifyMethod,
    WebhookSecret,
};
use crate::receipt::Evidence;
use std::sync::Arc;
use std::time::Duration;

/// The undelivered events, counted alike by both backends (the partial index on
/// pending events serves it).
pub(crate) const BACKLOG_SQL: &str = "SELECT COUNT(*) FROM webhook_events WHERE state = 'pending'";

/// The client API: credentials and a site's invites.
#[async_trait::async_trait]
pub trait InviteStore: Send + Sync + 'static {
    async fn credential(&self, username: &str) -> StoreResult<Option<CredentialRecord>>;

    /// Stores the invite, and with it `key` (in the same transaction), unless [`Repeat`]
    /// says the key was used already; answers once that is durably committed. Repeats of
    /// one key wait for each other, so they never make two invites.
    ///
    /// [`Repeat`]: crate::domain::idempotency::Repeat
    async fn create_invite(
        &self,
        invite: NewInvite,
        key: Option<IdempotentRequest>,
    ) -> StoreResult<CreateOutcome>;

    async fn invite(&self, site: SiteId, id: &InviteId) -> StoreResult<Option<InviteRecord>>;

    /// Runs each slice (see [`listing`]): the site's invites it holds, newest first.
    async fn invite_slices(
        &self,
        site: SiteId,
        slices: Vec<InviteSlice>,
    ) -> StoreResult<Vec<Vec<InviteRecord>>>;

    /// One page of the site's invites, newest first, as `query` asks at `now`.
    async fn list_invites(
        &self,
        site: SiteId,
        query: &ListQuery,
        now: UnixTime,
    ) -> StoreResult<InvitePage> {
        let found = self.invite_slices(site, listing::plan(query, now)).await?;
        Ok(listing::page(found, query.limit))
    }

    /// Applies [`crate::domain::invite::cancel`] to the site's invite as it stands at
    /// `now`; a pending one is stored expired with its `invite.expired` event.
    async fn cancel_invite(
        &self,
        site: SiteId,
        id: &InviteId,
        now: UnixTime,
    ) -> StoreResult<CancelOutcome>;

    /// Erases the site's invite with everything stored about it: its webhook events
    /// (delivered or not) and their attempts, its presentation requests and idempotency
    /// keys. `false` when the site has no such invite.
    async fn erase_invite(&self, site: SiteId, id: &InviteId) -> StoreResult<bool>;

    /// Applies [`crate::domain::invite::verify`] to the invite as it stands at `now`;
    /// a transition to verified writes its `invite.verified` event in the same transaction.
    /// The transition writes the invite's receipt too (see [`crate::receipt`]), signed
    /// with the current receipt key, from `evidence`.
    async fn verify_invite(
        &self,
        id: &InviteId,
        method: VerifyMethod,
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<VerifyOutcome>;
}

/// The gateway page and its presentation requests (docs/wallets.md#the-wallet-link, docs/dc-api.md#the-requests).
#[async_trait::async_trait]
pub trait PresentationStore: Send + Sync + 'static {
    async fn gateway_invite(&self, id: &InviteId) -> StoreResult<Option<GatewayInvite>>;

    /// The invite's live presentation request at `now`, if it has one.
    async fn live_request(
        &self,
        invite: &InviteId,
        now: UnixTime,
    ) -> StoreResult<Option<PresentationRequest>>;

    /// Stores `fresh` unless the invite has a live request at `fresh.created_at` already;
    /// returns the one that is live. A live one without DC API secrets (made by an older
    /// release) is given `fresh`'s, once: every node then shows the same.
    async fn open_request(
        &self,
        invite: &InviteId,
        fresh: PresentationRequest,
    ) -> StoreResult<PresentationRequest>;

    /// The invite's request named `state`, live or not.
    async fn request(
        &self,
        invite: &InviteId,
        state: &str,
    ) -> StoreResult<Option<PresentationRequest>>;

    /// After a presentation was verified (by any transport): in one transaction, marks
    /// the request answered (only if it is still live; its DC API secrets go) and
    /// verifies the invite by `eu-av`, as [`InviteStore::verify_invite`] does.
    async fn answer_request(
        &self,
        invite: &InviteId,
        state: &str,
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<AnswerOutcome>;
}

/// Expiry and webhook delivery: the outbox of events and its attempts.
#[async_trait::async_trait]
pub trait Outbox: Send + Sync + 'static {
    /// Marks up to `limit` pending invites whose time has come as expired, each with its
    /// `invite.expired` event; returns how many.
    async fn expire_due(&self, now: UnixTime, limit: usize) -> StoreResult<usize>;

    /// Claims up to `limit` due events for `lease`, so no other worker sends them.
    async fn claim_events(
        &self,
        now: UnixMillis,
        lease: Duration,
        limit: usize,
    ) -> StoreResult<Vec<DueEvent>>;

    /// Records an attempt and what follows it; releases the claim.
    async fn finish_attempt(
        &self,
        event: &EventId,
        attempt: Attempt,
        after: AfterAttempt,
        now: UnixTime,
    ) -> StoreResult<()>;

    /// The site's most recent events, newest first, with their attempts.
    async fn deliveries(&self, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>>;

    /// Queues an event again with a fresh retry schedule; `false` when there is no such event.
    async fn redeliver(&self, event: &EventId, now: UnixMillis) -> StoreResult<bool>;

    /// How many events are not yet delivered (pending or waiting for a retry).
    async fn webhook_backlog(&self) -> StoreResult<u64>;
}

/// Retention: what is erased or dropped once it has no further use.
#[async_trait::async_trait]
pub trait RetentionStore: Send + Sync + 'static {
    /// Erases, as [`InviteStore::erase_invite`] does, up to `limit` invites that became verified
    /// or expired before `before`; returns how many. Safe to run on several nodes at once.
    async fn erase_settled(&self, before: UnixTime, limit: usize) -> StoreResult<usize>;

    /// Drops up to `limit` each of what has no further use at `now`: idempotency keys past
    /// their window, presentation requests past their life, webhook secrets that stopped
    /// signing; and console sessions that have ended and sign-in streaks a day old.
    /// Returns how many rows went.
    async fn drop_spent(&self, now: UnixTime, limit: usize) -> StoreResult<usize>;
}

/// Administration: sites, credentials, webhook secrets, and the health check.
#[async_trait::async_trait]
pub trait AdminStore: Send + Sync + 'static {
    /// Succeeds when the database accepts a write (`/healthz`, docs/operations.md#health).
    async fn ping(&self) -> StoreResult<()>;

    async fn create_site(&self, site: NewSite) -> StoreResult<()>;

    async fn sites(&self) -> StoreResult<Vec<SiteRecord>>;

    async fn site(&self, id: SiteId) -> StoreResult<Option<SiteRecord>>;

    /// `false` when there is no such site.
    async fn update_site(&self, id: SiteId, update: SiteUpdate) -> StoreResult<bool>;

    /// `false` when there is no such site.
    async fn add_credential(&self, site: SiteId, credential: NewCredential) -> StoreResult<bool>;

    async fn revoke_credential(
        &self,
        site: SiteId,
        username: &str,
        now: UnixTime,
    ) -> StoreResult<RevokeOutcome>;

    /// Erases the site with everything it owns: credentials, webhook secrets, invites and
    /// all [`InviteStore::erase_invite`] erases with them. Returns how many invites went, or
    /// `None` when there is no such site. Credentials go first, so no invite is added
    /// meanwhile; invites go in batches, so other writes get their turn in between.
    async fn delete_site(&self, site: SiteId) -> StoreResult<Option<usize>> {
        const BATCH: usize = 1000;
        if !self.begin_site_delete(site).await? {
            return Ok(None);
        }
        let mut erased = 0;
        loop {
            let n = self.erase_site_invites(site, Some(BATCH)).await?;
            erased += n;
            if n < BATCH {
                break;
            }
        }
        Ok(Some(erased + self.erase_site_invites(site, None).await?))
    }

    /// [`AdminStore::delete_site`]'s first step: deletes the site's credentials; `false` when
    /// there is no such site.
    async fn begin_site_delete(&self, site: SiteId) -> StoreResult<bool>;

    /// [`AdminStore::delete_site`]'s next steps: erases up to `limit` of the site's invites;
    /// with `None`, all that are left and then the site. Returns how many invites went.
    async fn erase_site_invites(&self, site: SiteId, limit: Option<usize>) -> StoreResult<usize>;

    /// Makes `secret` the site's signing secret; the previous one stays valid for signing
    /// until `now` + 24 h. `false` when there is no such site.
    async fn rotate_webhook_secret(
        &self,
        site: SiteId,
        secret: WebhookSecret,
        now: UnixTime,
    ) -> StoreResult<bool>;
}

/// Verification receipts and their keys (docs/evidence.md#receipts). Receipts themselves are
/// written by the verifying calls of [`InviteStore`] and [`PresentationStore`], in the
/// same transaction as the verification.
#[async_trait::async_trait]
pub trait ReceiptStore: Send + Sync + 'static {
    /// The receipt of the site's invite.
    async fn receipt(&self, site: SiteId, id: &InviteId) -> StoreResult<ReceiptLookup>;
    /// Every receipt key, oldest first, including one published but not signing yet.
    async fn receipt_keys(&self) -> StoreResult<Vec<ReceiptKeyRecord>>;
    /// With `only_if_none`, makes `key` the current receipt key if there is no key yet
    /// (the first start). Without, a rotation: `key` is published first (listed by
    /// [`receipt_keys`](Self::receipt_keys)), and every server signs with it from
    /// [`SIGNS_AFTER`](crate::receipt::SIGNS_AFTER) after that, by the database's clock
    /// (docs/evidence.md#receipt-keys). Whether it was stored.
    async fn add_receipt_key(&self, key: ReceiptKeyRecord, only_if_none: bool)
        -> StoreResult<bool>;
}

/// Everything a server needs of its database: the capabilities above and the console's
/// ([`ConsoleStore`]), each of which the parts that need only it (the webhook worker, the
/// sweeper, retention, the command line) take alone.
pub trait Store:
    InviteStore
    + PresentationStore
    + Outbox
    + RetentionStore
    + AdminStore
    + ReceiptStore
    + ConsoleStore
    + TrustListStore
    + StatusListStore
{
}

impl<T> Store for T where
    T: InviteStore
        + PresentationStore
        + Outbox
        + RetentionStore
        + AdminStore
        + ReceiptStore
        + ConsoleStore
        + TrustListStore
        + StatusListStore
{
}

/// How a server uses its database. Both apply to PostgreSQL; the SQLite backend has one
/// writer and a fixed set of readers, and waits for the file's lock instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbOptions {
    /// Connections in the pool, at most.
    pub pool_size: usize,
    /// A statement running longer is cancelled, and its request answers 503.
    pub statement_timeout: Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            statement_timeout: Duration::from_secs(5),
        }
    }
}

/// Opens the backend a database URL names, with default [`DbOptions`], applying migrations.
pub async fn open(database_url: impl Into<DatabaseUrl>) -> StoreResult<Arc<dyn Store>> {
    open_with(&database_url.into(), &DbOptions::default()).await
}

/// Opens the backend a database URL names, applying migrations.
pub async fn open_with(
    database_url: &DatabaseUrl,
    options: &DbOptions,
) -> StoreResult<Arc<dyn Store>> {
    let raw = database_url.expose();
    if let Some(path) = sqlite::path_of(raw) {
        let store = sqlite::SqliteStore::open(path).await?;
        Ok(Arc::new(store))
    } else if postgres::is_postgres_url(raw) {
        let store = postgres::PostgresStore::open(raw, options).await?;
        Ok(Arc::new(store))
    } else {
        Err(StoreError::UnsupportedUrl(format!(
            "'{database_url}' (expected sqlite:PATH or postgres://...)"
        )))
    }
}
