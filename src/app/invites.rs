//! An invite's life: creating it, marking it verified (every way an invite becomes
//! verified ends in [`announce_verified`]), withdrawing it (cancel, erase) and sending a
//! webhook event again. The API, the gateway, the console and the command line do these
//! alike.

use tokio::sync::Notify;

use super::Services;
use crate::clock::UnixTime;
use crate::domain::webhook::EventId;
use crate::domain::ListQuery;
use crate::domain::{invite, CustomId, IdempotentRequest, InviteId, SiteId, VerifyMethod};
use crate::metrics::Metrics;
use crate::receipt::Evidence;
use crate::store::{
    CancelOutcome, CreateOutcome, EventRecord, InviteDetail, InvitePage, InviteRecord, NewInvite,
    ReceiptLookup, StoreError, VerifyOutcome,
};

/// Why an invite operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    /// No such invite for this site (another site's invite is not found either).
    #[error("no such invite")]
    NoSuchInvite,
    /// A verified invite cannot be cancelled.
    #[error("the invite is verified")]
    Verified,
    /// An expired invite cannot be verified.
    #[error("the invite has expired")]
    Expired,
    /// The `Idempotency-Key` was used in its window with another body; nothing was made.
    #[error("the idempotency key was used with another body")]
    KeyReused,
    #[error("no webhook event with id '{0}'")]
    NoSuchEvent(EventId),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a create made.
#[derive(Debug)]
pub enum Created {
    /// A new invite, durably stored.
    New { id: InviteId, expires_at: UnixTime },
    /// The invite an earlier create with the same key and body made; nothing new.
    Replayed(InviteRecord),
}

/// What marking an invite verified did.
#[derive(Debug)]
pub enum Marked {
    /// It was pending and is verified now, with its event and receipt.
    Now(InviteRecord),
    /// It was verified already; nothing changed.
    Already(InviteRecord),
}

/// What an invite is verified by when no wallet answered: the verification provider's
/// report, or a sandbox site's control.
pub struct Marking<'a> {
    pub services: &'a Services,
    pub metrics: &'a Metrics,
    /// `--public-url`: the receipts' issuer.
    pub public_url: &'a str,
}

impl Marking<'_> {
    /// Marks invite `id` verified by `method` (the provider or the sandbox control): the
    /// state change, its `invite.verified` event and its receipt in one transaction, the
    /// receipt naming the age the site asks for now (what the provider checked).
    pub async fn mark_verified(
        &self,
        id: &InviteId,
        method: VerifyMethod,
    ) -> Result<Marked, InviteError> {
        let store = &self.services.store;
        let gateway = store
            .gateway_invite(id)
            .await?
            .ok_or(InviteError::NoSuchInvite)?;
        let evidence = Evidence {
            issuer: self.public_url.to_owned(),
            min_age: gateway.min_age.get(),
            presented: None,
        };
        match store
            .verify_invite(id, method, evidence, self.services.clock.now())
            .await?
        {
            VerifyOutcome::NotFound => Err(InviteError::NoSuchInvite),
            VerifyOutcome::Expired => Err(InviteError::Expired),
            VerifyOutcome::Verified(record) => {
                announce_verified(self.metrics, &self.services.deliveries, id, method);
                Ok(Marked::Now(record))
            }
            VerifyOutcome::AlreadyVerified(record) => Ok(Marked::Already(record)),
        }
    }
}

/// After the transaction that verified invite `id`, whichever way (a wallet's answer, the
/// provider's report, the sandbox control): counted in `agegate_invites_verified_total`,
/// logged, and the webhook worker woken for its `invite.verified` event.
pub fn announce_verified(
    metrics: &Metrics,
    deliveries: &Notify,
    id: &InviteId,
    method: VerifyMethod,
) {
    metrics.verified(method);
    tracing::info!(invite_id = %id, method = method.as_str(), "invite verified");
    deliveries.notify_one();
}

/// What cancelling did; either way the invite is now expired.
#[derive(Debug)]
pub enum Cancelled {
    /// It was pending; its site is told by `invite.expired`.
    Now(InviteRecord),
    /// It had expired already; nothing changed.
    AlreadyExpired(InviteRecord),
}

/// An invite's life and its reads as the edges reach them. Every call names the site the
/// edge vouched for (the API's credentials, the console's path), and every read is of
/// that site's invites only: a site never sees another's.
pub struct Invites<'a>(&'a Services);

impl Services {
    pub fn invites(&self) -> Invites<'_> {
        Invites(self)
    }
}

/// The console's view of one invite: the times of its changes, its webhook events with
/// their attempts, and its receipt if it has one.
pub struct Detail {
    pub detail: InviteDetail,
    pub events: Vec<EventRecord>,
    pub receipt: Option<String>,
}

impl Invites<'_> {
    /// Creates an invite of `site` (docs/api.md#creating-and-reading-an-invite): its id
    /// from the clock's milliseconds and fresh randomness, expiring 24 hours after. With
    /// `key`, a repeat of an earlier create answers that create's invite. The API's
    /// hottest write: nothing here but the id, the times and the store's one call.
    pub async fn create(
        &self,
        site: SiteId,
        custom_id: Option<CustomId>,
        key: Option<IdempotentRequest>,
    ) -> Result<Created, InviteError> {
        // One reading of the clock for both, so the id's order and `created` agree.
        let now_millis = self.0.clock.now_millis();
        let now = now_millis.seconds();
        let id = InviteId::generate(now_millis.get());
        let expires_at = invite::expires_at(now);
        let new = NewInvite {
            id: id.clone(),
            site_id: site,
            custom_id,
            created_at: now,
            expires_at,
        };
        match self.0.store.create_invite(new, key).await? {
            CreateOutcome::Created => Ok(Created::New { id, expires_at }),
            CreateOutcome::Replayed(first) => Ok(Created::Replayed(first)),
            CreateOutcome::KeyConflict => Err(InviteError::KeyReused),
        }
    }

    /// One page of the site's invites, newest first, as `query` asks at `now`.
    pub async fn list(
        &self,
        site: SiteId,
        query: &ListQuery,
        now: UnixTime,
    ) -> Result<InvitePage, StoreError> {
        self.0.store.list_invites(site, query, now).await
    }

    /// The site's invite with its events and receipt; `None` when the site has no such
    /// invite.
    pub async fn detail(&self, site: SiteId, id: &InviteId) -> Result<Option<Detail>, StoreError> {
        let store = &self.0.store;
        let Some(detail) = store.invite_detail(site, id).await? else {
            return Ok(None);
        };
        let events = store.invite_events(site, id).await?;
        let receipt = match store.receipt(site, id).await? {
            ReceiptLookup::Found(jws) => Some(jws),
            _ => None,
        };
        Ok(Some(Detail {
            detail,
            events,
            receipt,
        }))
    }

    /// A pending invite expires now, with its `invite.expired` event (the webhook worker
    /// is woken for it); an expired one stays; a verified one is refused.
    pub async fn cancel(&self, site: SiteId, id: &InviteId) -> Result<Cancelled, InviteError> {
        let now = self.0.clock.now();
        match self.0.store.cancel_invite(site, id, now).await? {
            CancelOutcome::NotFound => Err(InviteError::NoSuchInvite),
            CancelOutcome::Verified => Err(InviteError::Verified),
            CancelOutcome::Cancelled(record) => {
                self.0.deliveries.notify_one();
                Ok(Cancelled::Now(record))
            }
            CancelOutcome::AlreadyExpired(record) => Ok(Cancelled::AlreadyExpired(record)),
        }
    }

    /// Erases the invite and everything stored about it.
    pub async fn erase(&self, site: SiteId, id: &InviteId) -> Result<(), InviteError> {
        if !self.0.store.erase_invite(site, id).await? {
            return Err(InviteError::NoSuchInvite);
        }
        Ok(())
    }

    /// Queues any site's event for delivery again with a fresh retry schedule (the
    /// operator's command line), waking this process's webhook worker if it has one
    /// (another process's finds it within a few seconds).
    pub async fn redeliver(&self, event: &EventId) -> Result<(), InviteError> {
        if !self
            .0
            .store
            .redeliver(event, self.0.clock.now_millis())
            .await?
        {
            return Err(InviteError::NoSuchEvent(event.clone()));
        }
        self.0.deliveries.notify_one();
        Ok(())
    }

    /// [`Invites::redeliver`], for an event of this invite of this site only.
    pub async fn redeliver_event(
        &self,
        site: SiteId,
        invite: &InviteId,
        event: &EventId,
    ) -> Result<(), InviteError> {
        let events = self.0.store.invite_events(site, invite).await?;
        if !events.iter().any(|e| &e.event_id == event) {
            return Err(InviteError::NoSuchEvent(event.clone()));
        }
        self.redeliver(event).await
    }
}
