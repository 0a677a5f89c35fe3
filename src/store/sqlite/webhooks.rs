//! SQL of the webhook outbox and the expiry sweep. Every function runs inside the
//! caller's transaction.

use crate::domain::invite::INVITE_LIFETIME_SECS;
use rusqlite::{params, Connection};

use super::hooks::Tx;
use super::{all, changes};
use crate::clock::{UnixMillis, UnixTime};
use crate::domain::{SiteId, Status, WebhookSecret};
use crate::store::rows::{self, ATTEMPT_COLUMNS, DUE_EVENT_COLUMNS, EVENT_COLUMNS};
use crate::store::{
    AfterAttempt, Attempt, DueEvent, EventRecord, StoreResult, OLD_SECRET_GRACE_SECS,
};

/// `?1` now, `?2` limit, `?3` the invite lifetime. Per site, a range of invites_by_status:
/// pending, created at least a lifetime ago (an invite expires exactly one lifetime after
/// its creation; `expires_at` is checked as well). No index serves the sweeper alone, so
/// inserts maintain one B-tree less. CROSS JOIN keeps sites the outer loop whatever the
/// statistics say.
pub(super) fn sweep_sql() -> String {
    format!(
        "SELECT {} FROM sites s
         CROSS JOIN invites i INDEXED BY invites_by_status
         WHERE i.site_id = s.site_id AND i.status = 'pending' AND i.created_at <= ?1 - ?3
           AND i.expires_at <= ?1
         LIMIT ?2",
        rows::INVITE_COLUMNS
    )
}

/// Pending invites whose time has come (by [`Status::at`]: at `expires_at` exactly)
/// become expired, each with its `invite.expired` event.
pub fn expire_due(tx: &mut Tx<'_>, now: UnixTime, limit: usize) -> StoreResult<usize> {
    let sql = sweep_sql();
    let due = all(
        tx,
        &sql,
        params![now, limit as i64, INVITE_LIFETIME_SECS],
        |row| rows::invite(row, 0),
    )?;
    for invite in &due {
        debug_assert_eq!(invite.status_at(now), Status::Expired);
        changes::write_expired(tx, invite, invite.expires_at, now)?;
    }
    Ok(due.len())
}

/// The single writer makes the select and the lease one step: no other worker can
/// claim in between.
pub fn claim(
    conn: &Connection,
    now: UnixMillis,
    lease_until: UnixMillis,
    limit: usize,
) -> StoreResult<Vec<DueEvent>> {
    let sql = format!(
        "SELECT {DUE_EVENT_COLUMNS}
         FROM webhook_events e
         JOIN invites i ON i.invite_id = e.invite_id
         JOIN sites s ON s.site_id = e.site_id
         WHERE e.state = 'pending' AND e.next_attempt_ms <= ?1
           AND (e.lease_until_ms IS NULL OR e.lease_until_ms <= ?1)
         ORDER BY e.next_attempt_ms LIMIT ?2"
    );
    let mut due = all(
        conn,
        &sql,
        params![now.get(), limit as i64],
        rows::due_event,
    )?;
    for event in &mut due {
        conn.prepare_cached("UPDATE webhook_events SET lease_until_ms = ?2 WHERE event_id = ?1")?
            .execute(params![event.event_id.as_str(), lease_until.get()])?;
        event.secrets = secrets(conn, event.invite.site_id, now.seconds())?;
    }
    Ok(due)
}

/// Every secret that signs at `now`: the current one, then the others newest first.
fn secrets(conn: &Connection, site: SiteId, now: UnixTime) -> StoreResult<Vec<WebhookSecret>> {
    all(
        conn,
        "SELECT secret FROM webhook_secrets
         WHERE site_id = ?1 AND (retired_at IS NULL OR retired_at + ?2 > ?3)
         ORDER BY retired_at IS NULL DESC, created_at DESC",
        params![site.to_string(), OLD_SECRET_GRACE_SECS, now],
        rows::secret,
    )
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
        attempt.started.get(),
        attempt.duration_ms,
        attempt.http_status,
        attempt.error
    ])?;
    let (state, next, finished) = after.columns(now);
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
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM webhook_events WHERE site_id = ?1
         ORDER BY occurred_at DESC, event_id LIMIT ?2"
    );
    let mut events = all(
        conn,
        &sql,
        params![site.to_string(), limit as i64],
        rows::event,
    )?;
    let sql = format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = ?1 ORDER BY attempt"
    );
    for event in &mut events {
        event.attempts = all(conn, &sql, [event.event_id.as_str()], rows::attempt)?;
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
