//! The store's capabilities on SQLite: each call runs its area's SQL on the pool, writes
//! on the single writer (group commit), lookups by key on the caller's thread.

use super::*;
use crate::clock::UnixMillis;
use crate::domain::webhook::EventId;
use crate::receipt::Evidence;
use crate::store::{ReceiptKeyRecord, ReceiptLookup, ReceiptStore};
use std::time::Duration;

#[async_trait::async_trait]
impl InviteStore for SqliteStore {
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
            // Without a key, a create needs no savepoint (see `invites::insert`).
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
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<VerifyOutcome> {
        let id = id.clone();
        self.pool
            .write(move |conn| invites::verify(conn, &id, method, &evidence, now))
            .await
    }
}

#[async_trait::async_trait]
impl PresentationStore for SqliteStore {
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
        evidence: Evidence,
        now: UnixTime,
    ) -> StoreResult<AnswerOutcome> {
        let (invite, state) = (invite.clone(), state.to_owned());
        self.pool
            .write(move |conn| presentations::answer(conn, &invite, &state, &evidence, now))
            .await
    }
}

#[async_trait::async_trait]
impl Outbox for SqliteStore {
    async fn expire_due(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        self.pool
            .write(move |conn| webhooks::expire_due(conn, now, limit))
            .await
    }

    async fn claim_events(
        &self,
        now: UnixMillis,
        lease: Duration,
        limit: usize,
    ) -> StoreResult<Vec<DueEvent>> {
        self.pool
            .write(move |conn| webhooks::claim(conn, now, now.after(lease), limit))
            .await
    }

    async fn finish_attempt(
        &self,
        event: &EventId,
        attempt: Attempt,
        after: AfterAttempt,
        now: UnixTime,
    ) -> StoreResult<()> {
        let event_id = event.as_str().to_owned();
        self.pool
            .write(move |conn| webhooks::finish_attempt(conn, &event_id, &attempt, after, now))
            .await
    }

    async fn deliveries(&self, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>> {
        self.pool
            .read(move |conn| webhooks::deliveries(conn, site, limit))
            .await
    }

    async fn redeliver(&self, event: &EventId, now: UnixMillis) -> StoreResult<bool> {
        let event_id = event.as_str().to_owned();
        self.pool
            .write(move |conn| webhooks::redeliver(conn, &event_id, now.get()))
            .await
    }

    async fn webhook_backlog(&self) -> StoreResult<u64> {
        self.pool
            .read(|conn| {
                let n: i64 = conn
                    .prepare_cached(crate::store::BACKLOG_SQL)?
                    .query_row([], |row| row.get(0))?;
                Ok(u64::try_from(n).unwrap_or(0))
            })
            .await
    }
}

#[async_trait::async_trait]
impl RetentionStore for SqliteStore {
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
}

#[async_trait::async_trait]
impl AdminStore for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        self.pool.write(|tx| health::probe(tx)).await
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

#[async_trait::async_trait]
impl ReceiptStore for SqliteStore {
    async fn receipt(&self, site: SiteId, id: &InviteId) -> StoreResult<ReceiptLookup> {
        let id = id.clone();
        self.pool
            .read_now(Snapshot::Latest, move |conn| {
                receipts::lookup(conn, site, &id)
            })
            .await
    }

    async fn receipt_keys(&self) -> StoreResult<Vec<ReceiptKeyRecord>> {
        self.pool.read(receipts::keys).await
    }

    async fn add_receipt_key(
        &self,
        key: ReceiptKeyRecord,
        only_if_none: bool,
    ) -> StoreResult<bool> {
        if only_if_none {
            return self
                .pool
                .write(move |conn| receipts::add_first_key(conn, &key))
                .await;
        }
        // Two transactions: the key is published (committed) before its signing time is
        // set, by a clock read after that commit.
        self.pool
            .write(move |conn| receipts::publish_key(conn, &key))
            .await?;
        let after = crate::receipt::SIGNS_AFTER.as_secs_f64();
        self.pool
            .write(move |conn| receipts::schedule_published_keys(conn, after))
            .await?;
        Ok(true)
    }
}
