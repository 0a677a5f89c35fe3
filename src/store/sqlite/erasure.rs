//! SQL of forgetting: erasing invites with everything stored about them, retention,
//! and deleting a site. Every function runs inside the caller's (write) transaction; the
//! single writer means nothing can add to an invite while it is being erased.

use rusqlite::{params, Connection};

use super::{all, invites, one};
use crate::clock::UnixTime;
use crate::domain::console::STREAK_SECS;
use crate::domain::idempotency::IDEMPOTENCY_WINDOW_SECS;
use crate::domain::invite::INVITE_LIFETIME_SECS;
use crate::domain::{InviteId, SiteId};
use crate::store::rows;
use crate::store::{StoreResult, OLD_SECRET_GRACE_SECS};

/// Erases these invites, their webhook events (delivered or not) with their attempts,
/// their presentation requests and their idempotency keys.
fn erase_all(conn: &Connection, ids: &[InviteId]) -> StoreResult<()> {
    const STATEMENTS: [&str; 5] = [
        "DELETE FROM webhook_attempts
         WHERE event_id IN (SELECT event_id FROM webhook_events WHERE invite_id = ?1)",
        "DELETE FROM webhook_events WHERE invite_id = ?1",
        "DELETE FROM presentation_requests WHERE invite_id = ?1",
        "DELETE FROM idempotency_keys WHERE invite_id = ?1",
        "DELETE FROM invites WHERE invite_id = ?1",
    ];
    for id in ids {
        for sql in STATEMENTS {
            conn.prepare_cached(sql)?.execute([id.as_str()])?;
        }
    }
    Ok(())
}

/// `false` when the site has no such invite.
pub fn erase(conn: &Connection, site: SiteId, id: &InviteId) -> StoreResult<bool> {
    let Some(found) = invites::of_site(conn, site, id)? else {
        return Ok(false);
    };
    erase_all(conn, &[found.id])?;
    Ok(true)
}

/// Up to `limit` invites settled (verified or expired) before `before`. An invite that
/// expired by time did so at its `expires`, whether or not the sweeper has marked it yet
/// (the server may have been down then): those still stored as pending are found per site
/// in `invites_by_status`, as the sweeper finds them.
pub fn erase_settled(conn: &Connection, before: UnixTime, limit: usize) -> StoreResult<usize> {
    let mut ids = all(
        conn,
        "SELECT invite_id FROM invites WHERE settled_at < ?1 ORDER BY settled_at LIMIT ?2",
        params![before, bigint(limit)],
        rows::invite_id_only,
    )?;
    if ids.len() < limit {
        ids.extend(all(
            conn,
            "SELECT i.invite_id FROM sites s
             CROSS JOIN invites i INDEXED BY invites_by_status
             WHERE i.site_id = s.site_id AND i.status = 'pending'
               AND i.created_at < ?1 - ?3 AND i.expires_at < ?1
             LIMIT ?2",
            params![before, bigint(limit - ids.len()), INVITE_LIFETIME_SECS],
            rows::invite_id_only,
        )?);
    }
    erase_all(conn, &ids)?;
    Ok(ids.len())
}

/// Up to `limit` idempotency keys past their window and presentation requests past
/// their life (which no answer can use any more), and every webhook secret that has
/// stopped signing (a rotation's old secret, 24 hours on).
pub fn drop_spent(conn: &Connection, now: UnixTime, limit: usize) -> StoreResult<usize> {
    let keys = conn
        .prepare_cached(
            "DELETE FROM idempotency_keys WHERE (site_id, key) IN (
                 SELECT site_id, key FROM idempotency_keys WHERE created_at <= ?1 LIMIT ?2)",
        )?
        .execute(params![now - IDEMPOTENCY_WINDOW_SECS, bigint(limit)])?;
    let requests = conn
        .prepare_cached(
            "DELETE FROM presentation_requests WHERE state IN (
                 SELECT state FROM presentation_requests WHERE expires_at <= ?1 LIMIT ?2)",
        )?
        .execute(params![now, bigint(limit)])?;
    let secrets = conn
        .prepare_cached("DELETE FROM webhook_secrets WHERE retired_at <= ?1")?
        .execute([now - OLD_SECRET_GRACE_SECS])?;
    let console = conn
        .prepare_cached("DELETE FROM console_sessions WHERE expires_at <= ?1")?
        .execute([now])?
        + conn
            .prepare_cached("DELETE FROM console_sign_in_failures WHERE last_failure_at <= ?1")?
            .execute([now - STREAK_SECS])?;
    Ok(keys + requests + secrets + console)
}

/// The first step of deleting a site: its credentials go, so no new invite can be made
/// for it (once servers' 2-second credential caches run out). `false` if there is no site.
pub fn begin_site_delete(conn: &Connection, site: SiteId) -> StoreResult<bool> {
    let exists = one(
        conn,
        "SELECT 1 FROM sites WHERE site_id = ?1",
        [site.to_string()],
        |_| Ok(()),
    )?;
    conn.prepare_cached("DELETE FROM credentials WHERE site_id = ?1")?
        .execute([site.to_string()])?;
    Ok(exists.is_some())
}

/// Erases up to `limit` of the site's invites; with `None`, all that are left, and then
/// the site itself with its webhook secrets. Returns how many invites went.
pub fn erase_site_invites(
    conn: &Connection,
    site: SiteId,
    limit: Option<usize>,
) -> StoreResult<usize> {
    let batch = limit.map_or(-1, bigint);
    let ids = all(
        conn,
        "SELECT invite_id FROM invites WHERE site_id = ?1 LIMIT ?2",
        params![site.to_string(), batch],
        rows::invite_id_only,
    )?;
    erase_all(conn, &ids)?;
    if limit.is_none() {
        for sql in [
            "DELETE FROM credentials WHERE site_id = ?1",
            "DELETE FROM webhook_secrets WHERE site_id = ?1",
            "DELETE FROM sites WHERE site_id = ?1",
        ] {
            conn.prepare_cached(sql)?.execute([site.to_string()])?;
        }
    }
    Ok(ids.len())
}

fn bigint(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
