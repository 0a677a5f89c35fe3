//! SQL of the webhook outbox and the expiry sweep, shared out between nodes: each takes
//! rows with `FOR UPDATE SKIP LOCKED`, so no two nodes take the same one, and none waits
//! for another.

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::{all, bigint, execute};
use crate::clock::{UnixMillis, UnixTime};
use crate::domain::invite::INVITE_LIFETIME_SECS;
use crate::domain::webhook::{EventId, EventType};
use crate::domain::{SiteId, WebhookFormat, WebhookSecret};
use crate::store::rows::{self, ATTEMPT_COLUMNS, DUE_EVENT_COLUMNS, EVENT_COLUMNS};
use crate::store::{
    AfterAttempt, Attempt, DueEvent, EventRecord, StoreResult, OLD_SECRET_GRACE_SECS,
};

/// Writes one event per invite in `invites` for a change to it, if its site has a
/// webhook URL and its webhook format sends such events; in one statement however many
/// there are.
pub async fn record_events(
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

/// Pending invites whose time has come (by [`crate::domain::Status::at`]: at
/// `expires_at` exactly) become expired, each with its `invite.expired` event. Rows
/// another node is sweeping, or a request is verifying, are skipped, not waited for.
pub async fn expire_due(client: &mut Object, now: UnixTime, limit: usize) -> StoreResult<usize> {
    let tx = client.transaction().await?;
    let expired = all(
        &tx,
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
        record_events(&tx, &ids, EventType::InviteExpired, now).await?;
    }
    tx.commit().await?;
    Ok(expired.len())
}

/// Leases up to `limit` due events in one statement. An event leased by a node that died
/// is due again once its lease ends; one a claim on another node holds right now is
/// skipped.
pub async fn claim(
    client: &impl GenericClient,
    now: UnixMillis,
    lease_until: UnixMillis,
    limit: usize,
) -> StoreResult<Vec<DueEvent>> {
    let sql = format!(
        "WITH e AS (
             UPDATE webhook_events SET lease_until_ms = $2
             WHERE event_id IN (
                 SELECT event_id FROM webhook_events
                 WHERE state = 'pending' AND next_attempt_ms <= $1
                   AND (lease_until_ms IS NULL OR lease_until_ms <= $1)
                 ORDER BY next_attempt_ms LIMIT $3
                 FOR UPDATE SKIP LOCKED)
             RETURNING *)
         SELECT {DUE_EVENT_COLUMNS}
         FROM e
         JOIN invites i ON i.invite_id = e.invite_id
         JOIN sites s ON s.site_id = e.site_id
         ORDER BY e.next_attempt_ms"
    );
    let mut due = all(
        client,
        &sql,
        &[&now.get(), &lease_until.get(), &bigint(limit)],
        rows::due_event,
    )
    .await?;
    for event in &mut due {
        event.secrets = secrets(client, event.invite.site_id, now.seconds()).await?;
    }
    Ok(due)
}

/// Every secret that signs at `now`: the current one, then the others newest first.
async fn secrets(
    client: &impl GenericClient,
    site: SiteId,
    now: UnixTime,
) -> StoreResult<Vec<WebhookSecret>> {
    all(
        client,
        "SELECT secret FROM webhook_secrets
         WHERE site_id = $1 AND (retired_at IS NULL OR retired_at + $2 > $3)
         ORDER BY retired_at IS NULL DESC, created_at DESC",
        &[&site.to_string(), &OLD_SECRET_GRACE_SECS, &now],
        rows::secret,
    )
    .await
}

/// One statement: the attempt's number is the event's count after this update, which
/// holds the event's row lock, so two nodes finishing at once cannot take one number.
pub async fn finish_attempt(
    client: &impl GenericClient,
    event_id: &str,
    attempt: &Attempt,
    after: AfterAttempt,
    now: UnixTime,
) -> StoreResult<()> {
    let (state, next, finished) = after.columns(now);
    let status = attempt.http_status.map(i64::from);
    execute(
        client,
        "WITH e AS (
             UPDATE webhook_events
             SET attempts = attempts + 1, last_status = $2, last_error = $3,
                 lease_until_ms = NULL, state = $4, next_attempt_ms = $5, finished_at = $6
             WHERE event_id = $1
             RETURNING event_id, attempts)
         INSERT INTO webhook_attempts
             (event_id, attempt, started_ms, duration_ms, http_status, error)
         SELECT event_id, attempts, $7::BIGINT, $8::BIGINT, $2, $3 FROM e",
        &[
            &event_id,
            &status,
            &attempt.error,
            &state.as_str(),
            &next,
            &finished,
            &attempt.started.get(),
            &attempt.duration_ms,
        ],
    )
    .await?;
    Ok(())
}

pub async fn deliveries(
    client: &impl GenericClient,
    site: SiteId,
    limit: usize,
) -> StoreResult<Vec<EventRecord>> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM webhook_events WHERE site_id = $1
         ORDER BY occurred_at DESC, event_id COLLATE \"C\" LIMIT $2"
    );
    let mut events = all(
        client,
        &sql,
        &[&site.to_string(), &bigint(limit)],
        rows::event,
    )
    .await?;
    let sql = format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt"
    );
    for event in &mut events {
        event.attempts = all(client, &sql, &[&event.event_id.as_str()], rows::attempt).await?;
    }
    Ok(events)
}

pub async fn redeliver(
    client: &impl GenericClient,
    event_id: &str,
    now_ms: i64,
) -> StoreResult<bool> {
    let changed = execute(
        client,
        "UPDATE webhook_events
         SET state = 'pending', round_start = attempts, next_attempt_ms = $2,
             lease_until_ms = NULL, finished_at = NULL
         WHERE event_id = $1",
        &[&event_id, &now_ms],
    )
    .await?;
    Ok(changed == 1)
}
