//! What a change of an invite writes besides the invite: its webhook event, in the same
//! transaction (its count for the overview is added by statement-level triggers,
//! migration 6). Every path that verifies or expires an invite comes through here, as on
//! SQLite (`sqlite/changes.rs`), so none can forget the event: the event's statement is
//! private to this file.

use deadpool_postgres::Transaction;

use super::{all, bigint, execute};
use crate::clock::UnixTime;
use crate::domain::invite::INVITE_LIFETIME_SECS;
use crate::domain::webhook::{EventId, EventType};
use crate::domain::WebhookFormat;
use crate::receipt::Evidence;
use crate::store::{transitions, InviteRecord, StoreResult};

/// Writes one event per invite in `invites` for a change to it, if its site has a
/// webhook URL and its webhook format sends such events; in one statement however many
/// there are.
async fn record_events(
    tx: &Transaction<'_>,
    invites: &[&str],
    event_type: EventType,
    now: UnixTime,
) -> StoreResult<()> {
    let ids: Vec<String> = invites
        .iter()
        .map(|_| EventId::generate().as_str().to_owned())
        .collect();
    execute(
        tx,
        "INSERT INTO webhook_events
             (event_id, site_id, invite_id, event_type, occurred_at, state, next_attempt_ms)
         SELECT e.event_id, s.site_id, i.invite_id, $3::TEXT, $4::BIGINT, 'pending',
                $4::BIGINT * 1000
         FROM UNNEST($1::TEXT[], $2::TEXT[]) AS e (event_id, invite_id)
         JOIN invites i ON i.invite_id = e.invite_id
         JOIN sites s ON s.site_id = i.site_id
         WHERE s.webhook_url IS NOT NULL
           AND CASE s.webhook_format WHEN 'standard' THEN $5::BOOLEAN
                                     WHEN 'everprotec' THEN $6::BOOLEAN END",
        &[
            &ids,
            &invites,
            &event_type.as_str(),
            &now,
            &WebhookFormat::Standard.sends(event_type),
            &WebhookFormat::Everprotec.sends(event_type),
        ],
    )
    .await?;
    Ok(())
}

/// Stores `record` (locked) as expired since `settled_at`, with its `invite.expired`
/// event at `now`.
pub async fn write_expired(
    tx: &Transaction<'_>,
    record: &InviteRecord,
    settled_at: UnixTime,
    now: UnixTime,
) -> StoreResult<()> {
    execute(
        tx,
        "UPDATE invites SET status = 'expired', settled_at = $2 WHERE invite_id = $1",
        &[&record.id.as_str(), &settled_at],
    )
    .await?;
    record_events(tx, &[record.id.as_str()], EventType::InviteExpired, now).await
}

/// The sweep: up to `limit` pending invites whose time has come (by
/// [`crate::domain::Status::at`]: at `expires_at` exactly) stored as expired since then,
/// each with its `invite.expired` event at `now`, in one statement each. Rows another
/// node is sweeping, or a request is verifying, are skipped, not waited for. Answers how
/// many expired.
pub async fn write_expired_due(
    tx: &Transaction<'_>,
    now: UnixTime,
    limit: usize,
) -> StoreResult<usize> {
    let expired = all(
        tx,
        // Per site, a range of invites_by_status: pending, created a lifetime ago or
        // earlier (LATERAL keeps the planner on that index, as SQLite's CROSS JOIN does).
        "WITH due AS (
             SELECT d.invite_id FROM sites s CROSS JOIN LATERAL (
                 SELECT i.invite_id FROM invites i
                 WHERE i.site_id = s.site_id AND i.status COLLATE \"C\" = 'pending'
                   AND i.created_at <= $1::BIGINT - $3::BIGINT AND i.expires_at <= $1
                 ORDER BY i.created_at LIMIT $2
                 FOR UPDATE OF i SKIP LOCKED) d
             LIMIT $2)
         UPDATE invites i SET status = 'expired', settled_at = i.expires_at FROM due
         WHERE i.invite_id = due.invite_id
         RETURNING i.invite_id",
        &[&now, &bigint(limit), &INVITE_LIFETIME_SECS],
        |row| row.text(0),
    )
    .await?;
    if !expired.is_empty() {
        let ids: Vec<&str> = expired.iter().map(String::as_str).collect();
        record_events(tx, &ids, EventType::InviteExpired, now).await?;
    }
    Ok(expired.len())
}

/// Stores `record` (locked) as verified at `now`, with its receipt (signed with the
/// current receipt key) and its `invite.verified` event.
pub async fn write_verified(
    tx: &Transaction<'_>,
    record: &InviteRecord,
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<()> {
    let (key, new) = transitions::receipt_key(super::receipts::signing_key(tx).await?, now)?;
    if let Some(new) = new {
        super::receipts::insert_key(tx, &new).await?;
    }
    let receipt = transitions::receipt(record, evidence, now, &key);
    execute(
        tx,
        "UPDATE invites
         SET status = 'verified', verified_at = $2, verified_method = $3, settled_at = $2,
             receipt = $4, credential_status = $5
         WHERE invite_id = $1",
        &[
            &record.id.as_str(),
            &now,
            &record.method.map(|m| m.as_str()),
            &receipt,
            // Counted by the tally trigger (migration 14), as the receipt records it.
            &evidence
                .presented
                .as_ref()
                .map(|p| p.credential_status.as_str()),
        ],
    )
    .await?;
    record_events(tx, &[record.id.as_str()], EventType::InviteVerified, now).await
}
