//! SQL of the webhook outbox and the expiry sweep, shared out between nodes: each takes
//! rows with `FOR UPDATE SKIP LOCKED`, so no two nodes take the same one, and none waits
//! for another.

use deadpool_postgres::{GenericClient, Object};

use super::{all, bigint, changes, execute};
use crate::clock::{UnixMillis, UnixTime};
use crate::domain::{SiteId, WebhookSecret};
use crate::store::rows::{self, ATTEMPT_COLUMNS, DUE_EVENT_COLUMNS, EVENT_COLUMNS};
use crate::store::{
    AfterAttempt, Attempt, DueEvent, EventRecord, StoreResult, OLD_SECRET_GRACE_SECS,
};

/// [`changes::write_expired_due`] in a transaction of its own.
pub async fn expire_due(client: &mut Object, now: UnixTime, limit: usize) -> StoreResult<usize> {
    let tx = client.transaction().await?;
    let expired = changes::write_expired_due(&tx, now, limit).await?;
    tx.commit().await?;
    Ok(expired)
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
