//! Withdrawing an invite (cancel, erase) and sending a webhook event again: the API, the
//! console and the command line do these alike.

use tokio::sync::Notify;

use crate::clock::Clock;
use crate::domain::webhook::EventId;
use crate::domain::{InviteId, SiteId};
use crate::store::{CancelOutcome, ConsoleStore, InviteRecord, InviteStore, Outbox, StoreError};

/// Why an invite operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    /// No such invite for this site (another site's invite is not found either).
    #[error("no such invite")]
    NoSuchInvite,
    /// A verified invite cannot be cancelled.
    #[error("the invite is verified")]
    Verified,
    #[error("no webhook event with id '{0}'")]
    NoSuchEvent(EventId),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What cancelling did; either way the invite is now expired.
#[derive(Debug)]
pub enum Cancelled {
    /// It was pending; its site is told by `invite.expired`.
    Now(InviteRecord),
    /// It had expired already; nothing changed.
    AlreadyExpired(InviteRecord),
}

/// A pending invite expires now, with its `invite.expired` event (the webhook worker is
/// woken for it); an expired one stays; a verified one is refused.
pub async fn cancel_invite(
    store: &dyn InviteStore,
    clock: &dyn Clock,
    deliveries: &Notify,
    site: SiteId,
    id: &InviteId,
) -> Result<Cancelled, InviteError> {
    match store.cancel_invite(site, id, clock.now()).await? {
        CancelOutcome::NotFound => Err(InviteError::NoSuchInvite),
        CancelOutcome::Verified => Err(InviteError::Verified),
        CancelOutcome::Cancelled(record) => {
            deliveries.notify_one();
            Ok(Cancelled::Now(record))
        }
        CancelOutcome::AlreadyExpired(record) => Ok(Cancelled::AlreadyExpired(record)),
    }
}

/// Erases the invite and everything stored about it.
pub async fn erase_invite(
    store: &dyn InviteStore,
    site: SiteId,
    id: &InviteId,
) -> Result<(), InviteError> {
    if !store.erase_invite(site, id).await? {
        return Err(InviteError::NoSuchInvite);
    }
    Ok(())
}

/// Queues an event for delivery again with a fresh retry schedule, waking this process's
/// webhook worker if it has one (another process's finds it within a few seconds).
pub async fn redeliver(
    store: &(impl Outbox + ?Sized),
    clock: &dyn Clock,
    deliveries: Option<&Notify>,
    event: &EventId,
) -> Result<(), InviteError> {
    if !store.redeliver(event, clock.now_millis()).await? {
        return Err(InviteError::NoSuchEvent(event.clone()));
    }
    if let Some(deliveries) = deliveries {
        deliveries.notify_one();
    }
    Ok(())
}

/// [`redeliver`], for an event of this invite of this site only.
pub async fn redeliver_invite_event<S>(
    store: &S,
    clock: &dyn Clock,
    deliveries: &Notify,
    site: SiteId,
    invite: &InviteId,
    event: &EventId,
) -> Result<(), InviteError>
where
    S: ConsoleStore + Outbox + ?Sized,
{
    let events = store.invite_events(site, invite).await?;
    if !events.iter().any(|e| &e.event_id == event) {
        return Err(InviteError::NoSuchEvent(event.clone()));
    }
    redeliver(store, clock, Some(deliveries), event).await
}
