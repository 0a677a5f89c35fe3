//! SQL of the webhook outbox and the expiry sweep. Every function runs inside the
//! caller's transaction.

use rusqlite::{params, Connection, Row};

use super::{invite_row, site_id_column, INVITE_COLUMNS};
use crate::clock::UnixTime;
use crate::domain::webhook::{new_event_id, DeliveryState, EventType};
use crate::domain::{InviteId, SiteId, WebhookSecret};
use crate::store::{
    AfterAttempt, Attempt, AttemptRecord, DueEvent, EventRecord, StoreError, StoreResult,
};

/// How long a rotated-out secret keeps signing.
const OLD_SECRET_GRACE_SECS: i64 = 24 * 60 * 60;

fn conversion_error(idx: usize, what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, what.into())
}

fn event_type_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<EventType> {
    let s: String = row.get(idx)?;
    EventType::parse(&s).ok_or_else(|| conversion_error(idx, format!("unknown event type {s}")))
}

/// Writes the event for a change of `invite`, if its site has a webhook URL.
pub fn record_event(
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
         FROM sites WHERE site_id = ?5 AND webhook_url IS NOT NULL",
    )?
    .execute(params![
        new_event_id(),
        invite.as_str(),
        event_type.as_str(),
        now,
        site.to_string()
    ])?;
    Ok(())
}

pub fn expire_due(conn: &Connection, now: UnixTime, limit: usize) -> StoreResult<usize> {
    let due = conn
        .prepare_cached(
            "SELECT invite_id, site_id FROM invites
             WHERE status = 'pending' AND expires_at <= ?1
             ORDER BY expires_at LIMIT ?2",
        )?
        .query_map(params![now, limit as i64], |row| {
            let id: String = row.get(0)?;
            Ok((id, site_id_column(row, 1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (id, site) in &due {
        conn.prepare_cached("UPDATE invites SET status = 'expired' WHERE invite_id = ?1")?
            .execute([id])?;
        let id = InviteId::parse(id).ok_or_else(|| StoreError::Corrupt("invite id".into()))?;
        record_event(conn, *site, &id, EventType::InviteExpired, now)?;
    }
    Ok(due.len())
}

pub fn claim(
    conn: &Connection,
    now_ms: i64,
    lease_ms: i64,
    limit: usize,
) -> StoreResult<Vec<DueEvent>> {
    let claimed = conn
        .prepare_cached(
            "UPDATE webhook_events SET lease_until_ms = ?1 + ?2
             WHERE event_id IN (
                 SELECT event_id FROM webhook_events
                 WHERE state = 'pending' AND next_attempt_ms <= ?1
                   AND (lease_until_ms IS NULL OR lease_until_ms <= ?1)
                 ORDER BY next_attempt_ms LIMIT ?3)
             RETURNING event_id, site_id, invite_id, event_type, occurred_at, attempts, round_start",
        )?
        .query_map(params![now_ms, lease_ms, limit as i64], |row| {
            Ok((
                row.get::<_, String>(0)?,
                site_id_column(row, 1)?,
                row.get::<_, String>(2)?,
                event_type_column(row, 3)?,
                row.get::<_, i64>(4)?,
                row.get::<_, i64>(5)?,
                row.get::<_, i64>(6)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let now = now_ms.div_euclid(1000);
    let mut due = Vec::with_capacity(claimed.len());
    for (event_id, site, invite_id, event_type, occurred_at, attempts, round_start) in claimed {
        let invite = conn
            .prepare_cached(&format!(
                "SELECT {INVITE_COLUMNS} FROM invites WHERE invite_id = ?1"
            ))?
            .query_row([&invite_id], invite_row)?;
        let webhook_url: Option<String> = conn
            .prepare_cached("SELECT webhook_url FROM sites WHERE site_id = ?1")?
            .query_row([site.to_string()], |row| row.get(0))?;
        let secrets = conn
            .prepare_cached(
                "SELECT secret FROM webhook_secrets
                 WHERE site_id = ?1 AND (retired_at IS NULL OR retired_at + ?2 > ?3)
                 ORDER BY created_at DESC",
            )?
            .query_map(
                params![site.to_string(), OLD_SECRET_GRACE_SECS, now],
                |row| Ok(WebhookSecret::from_stored(row.get(0)?)),
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        due.push(DueEvent {
            event_id,
            event_type,
            occurred_at,
            attempts_in_round: (attempts - round_start) as usize,
            attempts: attempts as usize,
            invite,
            webhook_url,
            secrets,
        });
    }
    Ok(due)
}

pub fn finish_attempt(
    conn: &Connection,
    event_id: &str,
    attempt: &Attempt,
    after: AfterAttempt,
    now: UnixTime,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO webhook_attempts (event_id, attempt, started_ms, duration_ms, http_status, error)
         SELECT event_id, attempts + 1, ?2, ?3, ?4, ?5 FROM webhook_events WHERE event_id = ?1",
    )?
    .execute(params![
        event_id,
        attempt.started_ms,
        attempt.duration_ms,
        attempt.http_status,
        attempt.error
    ])?;
    let (state, next, finished) = match after {
        AfterAttempt::Delivered => (DeliveryState::Delivered, None, Some(now)),
        AfterAttempt::Failed => (DeliveryState::Failed, None, Some(now)),
        AfterAttempt::RetryAt(ms) => (DeliveryState::Pending, Some(ms), None),
    };
    conn.prepare_cached(
        "UPDATE webhook_events
         SET attempts = attempts + 1, last_status = ?2, last_error = ?3, lease_until_ms = NULL,
             state = ?4, next_attempt_ms = ?5, finished_at = ?6
         WHERE event_id = ?1",
    )?
    .execute(params![
        event_id,
        attempt.http_status,
        attempt.error,
        state.as_str(),
        next,
        finished
    ])?;
    Ok(())
}

pub fn deliveries(conn: &Connection, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>> {
    let mut events = conn
        .prepare_cached(
            "SELECT event_id, event_type, invite_id, occurred_at, state, next_attempt_ms,
                    last_status, last_error
             FROM webhook_events WHERE site_id = ?1
             ORDER BY occurred_at DESC, event_id LIMIT ?2",
        )?
        .query_map(params![site.to_string(), limit as i64], |row| {
            let state: String = row.get(4)?;
            Ok(EventRecord {
                event_id: row.get(0)?,
                event_type: event_type_column(row, 1)?,
                invite_id: row.get(2)?,
                occurred_at: row.get(3)?,
                state: DeliveryState::parse(&state)
                    .ok_or_else(|| conversion_error(4, format!("unknown state {state}")))?,
                next_attempt_ms: row.get(5)?,
                last_status: row.get(6)?,
                last_error: row.get(7)?,
                attempts: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT attempt, started_ms, duration_ms, http_status, error
         FROM webhook_attempts WHERE event_id = ?1 ORDER BY attempt",
    )?;
    for event in &mut events {
        event.attempts = stmt
            .query_map([&event.event_id], |row| {
                Ok(AttemptRecord {
                    attempt: row.get::<_, i64>(0)? as usize,
                    started_ms: row.get(1)?,
                    duration_ms: row.get(2)?,
                    http_status: row.get(3)?,
                    error: row.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
    }
    Ok(events)
}

pub fn redeliver(conn: &Connection, event_id: &str, now_ms: i64) -> StoreResult<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE webhook_events
             SET state = 'pending', round_start = attempts, next_attempt_ms = ?2,
                 lease_until_ms = NULL, finished_at = NULL
             WHERE event_id = ?1",
        )?
        .execute(params![event_id, now_ms])?;
    Ok(changed == 1)
}
