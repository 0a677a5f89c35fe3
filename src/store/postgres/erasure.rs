//! SQL of forgetting: erasing invites with everything stored about them, retention,
//! and deleting a site. An invite is locked before it is erased, as every change to it
//! is, so nothing adds to it meanwhile; retention takes invites `SKIP LOCKED`, so nodes
//! running it at once share the work.

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::{all, bigint, execute, invites};
use crate::clock::UnixTime;
use crate::domain::console::STREAK_SECS;
use crate::domain::idempotency::IDEMPOTENCY_WINDOW_SECS;
use crate::domain::invite::INVITE_LIFETIME_SECS;
use crate::domain::{InviteId, SiteId};
use crate::store::{StoreResult, OLD_SECRET_GRACE_SECS};

/// Erases these (locked) invites, their webhook events (delivered or not) with their
/// attempts, their presentation requests and their idempotency keys.
async fn erase_all(tx: &Transaction<'_>, ids: &[String]) -> StoreResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    // An attempt being recorded now holds its event's row: wait for it, so its row is
    // seen and erased below; one that starts later finds its event gone and records
    // nothing.
    execute(
        tx,
        "SELECT 1 FROM webhook_events WHERE invite_id = ANY($1) FOR UPDATE",
        &[&ids],
    )
    .await?;
    for sql in [
        "DELETE FROM webhook_attempts WHERE event_id IN (
             SELECT event_id FROM webhook_events WHERE invite_id = ANY($1))",
        "DELETE FROM webhook_events WHERE invite_id = ANY($1)",
        "DELETE FROM presentation_requests WHERE invite_id = ANY($1)",
        "DELETE FROM idempotency_keys WHERE invite_id = ANY($1)",
        "DELETE FROM invites WHERE invite_id = ANY($1)",
    ] {
        execute(tx, sql, &[&ids]).await?;
    }
    Ok(())
}

/// `false` when the site has no such invite.
pub async fn erase(client: &mut Object, site: SiteId, id: &InviteId) -> StoreResult<bool> {
    let tx = client.transaction().await?;
    let found = invites::locked(&tx, id).await?;
    if !found.is_some_and(|r| r.site_id == site) {
        return Ok(false);
    }
    erase_all(&tx, &[id.as_str().to_owned()]).await?;
    tx.commit().await?;
    Ok(true)
}

/// Ids of the invites `sql` selects (and locks).
async fn ids(
    tx: &Transaction<'_>,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<Vec<String>> {
    all(tx, sql, params, |row| row.text(0)).await
}

/// Up to `limit` invites settled (verified or expired) before `before`; invites another
/// node is erasing, or a request is changing, are left for the next round. An invite that
/// expired by time did so at its `expires`, whether or not a sweeper has marked it yet
/// (the servers may have been down then): those still stored as pending are found per
/// site in `invites_by_status`, as the sweeper finds them.
pub async fn erase_settled(
    client: &mut Object,
    before: UnixTime,
    limit: usize,
) -> StoreResult<usize> {
    let tx = client.transaction().await?;
    let mut found = ids(
        &tx,
        "SELECT invite_id FROM invites WHERE settled_at < $1
         ORDER BY settled_at LIMIT $2 FOR UPDATE SKIP LOCKED",
        &[&before, &bigint(limit)],
    )
    .await?;
    if found.len() < limit {
        let more = ids(
            &tx,
            "SELECT d.invite_id FROM sites s CROSS JOIN LATERAL (
                 SELECT i.invite_id FROM invites i
                 WHERE i.site_id = s.site_id AND i.status COLLATE \"C\" = 'pending'
                   AND i.created_at < $1::BIGINT - $3::BIGINT AND i.expires_at < $1
                 ORDER BY i.created_at LIMIT $2
                 FOR UPDATE OF i SKIP LOCKED) d
             LIMIT $2",
            &[&before, &bigint(limit - found.len()), &INVITE_LIFETIME_SECS],
        )
        .await?;
        found.extend(more);
    }
    erase_all(&tx, &found).await?;
    tx.commit().await?;
    Ok(found.len())
}

/// Up to `limit` idempotency keys past their window and presentation requests past
/// their life (which no answer can use any more), and every webhook secret that has
/// stopped signing (a rotation's old secret, 24 hours on).
pub async fn drop_spent(
    client: &impl GenericClient,
    now: UnixTime,
    limit: usize,
) -> StoreResult<usize> {
    let keys = execute(
        client,
        "DELETE FROM idempotency_keys WHERE (site_id, key) IN (
             SELECT site_id, key FROM idempotency_keys WHERE created_at <= $1
             LIMIT $2 FOR UPDATE SKIP LOCKED)",
        &[&(now - IDEMPOTENCY_WINDOW_SECS), &bigint(limit)],
    )
    .await?;
    let requests = execute(
        client,
        "DELETE FROM presentation_requests WHERE state IN (
             SELECT state FROM presentation_requests WHERE expires_at <= $1
             LIMIT $2 FOR UPDATE SKIP LOCKED)",
        &[&now, &bigint(limit)],
    )
    .await?;
    let secrets = execute(
        client,
        "DELETE FROM webhook_secrets WHERE retired_at <= $1",
        &[&(now - OLD_SECRET_GRACE_SECS)],
    )
    .await?;
    let console = execute(
        client,
        "DELETE FROM console_sessions WHERE expires_at <= $1",
        &[&now],
    )
    .await?
        + execute(
            client,
            "DELETE FROM console_sign_in_failures WHERE last_failure_at <= $1",
            &[&(now - STREAK_SECS)],
        )
        .await?;
    Ok(usize::try_from(keys + requests + secrets + console).unwrap_or(usize::MAX))
}

/// The first step of deleting a site: its credentials go, so no new invite can be made
/// for it (once servers' 2-second credential caches run out). `false` if there is no site.
pub async fn begin_site_delete(client: &mut Object, site: SiteId) -> StoreResult<bool> {
    let tx = client.transaction().await?;
    let site = site.to_string();
    let found = execute(
        &tx,
        "SELECT 1 FROM sites WHERE site_id = $1 FOR UPDATE",
        &[&site],
    )
    .await?;
    execute(&tx, "DELETE FROM credentials WHERE site_id = $1", &[&site]).await?;
    tx.commit().await?;
    Ok(found == 1)
}

/// Erases up to `limit` of the site's invites; with `None`, all that are left, and then
/// the site itself with its webhook secrets. Returns how many invites went.
pub async fn erase_site_invites(
    client: &mut Object,
    site: SiteId,
    limit: Option<usize>,
) -> StoreResult<usize> {
    let tx = client.transaction().await?;
    let site = site.to_string();
    if limit.is_none() {
        // A create racing with the deletion waits for this, then fails its foreign key.
        execute(
            &tx,
            "SELECT 1 FROM sites WHERE site_id = $1 FOR UPDATE",
            &[&site],
        )
        .await?;
    }
    let batch = limit.map(bigint);
    let ids = ids(
        &tx,
        "SELECT invite_id FROM invites WHERE site_id = $1 LIMIT $2 FOR UPDATE",
        &[&site, &batch],
    )
    .await?;
    erase_all(&tx, &ids).await?;
    if limit.is_none() {
        for sql in [
            "DELETE FROM credentials WHERE site_id = $1",
            "DELETE FROM webhook_secrets WHERE site_id = $1",
            "DELETE FROM sites WHERE site_id = $1",
        ] {
            execute(&tx, sql, &[&site]).await?;
        }
    }
    tx.commit().await?;
    Ok(ids.len())
}
