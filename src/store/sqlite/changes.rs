//! What a change of an invite writes besides the invite: its webhook event, in the same
//! transaction, and its count for the overview (a note for the batch's hooks, `tally`).
//! Every path that verifies or expires an invite comes through here, so none can forget
//! either (the invite cache needs no call: the writer's connection evicts by trigger, see
//! `writer_conn`).

use rusqlite::{params, Connection};

use super::hooks::Tx;
use super::tally::Changed;
use crate::clock::UnixTime;
use crate::domain::webhook::{EventId, EventType};
use crate::domain::{InviteId, SiteId, WebhookFormat};
use crate::receipt::Evidence;
use crate::store::{transitions, InviteRecord, StoreResult, TallyEvent};

/// Writes the event for a change of `invite`, if its site has a webhook URL and its
/// webhook format sends such events.
fn record_event(
    conn: &Connection,
    site: SiteId,
    invite: &InviteId,
    event_type: EventType,
    now: UnixTime,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO webhook_events
             (event_id, site_id, invite_id, event_type, occurred_at, state, next_attempt_ms)
         SELECT ?1, site_id, ?2, ?3, ?4, 'pending', ?4 * 1000
         FROM sites WHERE site_id = ?5 AND webhook_url IS NOT NULL
           AND CASE webhook_format WHEN 'standard' THEN ?6 WHEN 'everprotec' THEN ?7 END",
    )?
    .execute(params![
        EventId::generate().as_str(),
        invite.as_str(),
        event_type.as_str(),
        now,
        site.to_string(),
        WebhookFormat::Standard.sends(event_type),
        WebhookFormat::Everprotec.sends(event_type)
    ])?;
    Ok(())
}

/// Stores `record` as expired (since `settled_at`), with its `invite.expired` event at `now`.
pub fn write_expired(
    tx: &mut Tx<'_>,
    record: &InviteRecord,
    settled_at: UnixTime,
    now: UnixTime,
) -> StoreResult<()> {
    tx.prepare_cached(
        "UPDATE invites SET status = 'expired', settled_at = ?2 WHERE invite_id = ?1",
    )?
    .execute(params![record.id.as_str(), settled_at])?;
    tx.note(Changed {
        event: TallyEvent::Expired,
        at: settled_at,
    });
    record_event(
        tx,
        record.site_id,
        &record.id,
        EventType::InviteExpired,
        now,
    )
}

/// Stores `record` as verified at `now`, with its receipt (signed with the current
/// receipt key) and its `invite.verified` event.
pub fn write_verified(
    tx: &mut Tx<'_>,
    record: &InviteRecord,
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<()> {
    let (key, new) = transitions::receipt_key(super::receipts::signing_key(tx)?, now)?;
    // No key signs only where there is no key at all (a first key and a rotation on an
    // empty table sign at once), so the new key is always the first.
    if let Some(new) = new {
        if !super::receipts::add_first_key(tx, &new)? {
            return Err(crate::store::StoreError::Corrupt(
                "receipt keys stored, none signing".into(),
            ));
        }
    }
    let receipt = transitions::receipt(record, evidence, now, &key);
    tx.prepare_cached(
        "UPDATE invites
         SET status = 'verified', verified_at = ?2, verified_method = ?3, settled_at = ?2,
             receipt = ?4
         WHERE invite_id = ?1",
    )?
    .execute(params![
        record.id.as_str(),
        now,
        record.method.map(|m| m.as_str()),
        receipt
    ])?;
    if let Some(method) = record.method {
        tx.note(Changed {
            event: TallyEvent::Verified(method),
            at: now,
        });
    }
    // What the receipt records of the credential's status, counted on the same day.
    if let Some(presented) = &evidence.presented {
        tx.note(Changed {
            event: TallyEvent::CredentialStatus(presented.credential_status),
            at: now,
        });
    }
    record_event(
        tx,
        record.site_id,
        &record.id,
        EventType::InviteVerified,
        now,
    )
}
