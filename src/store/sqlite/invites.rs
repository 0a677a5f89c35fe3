//! SQL of invites: creating, reading and verifying them. Every function runs inside the
//! caller's transaction (or, for reads, on a reader's connection).

use rusqlite::{params, Connection};

use super::{one, webhooks};
use crate::clock::UnixTime;
use crate::domain::webhook::EventType;
use crate::domain::{InviteId, SiteId, VerifyMethod};
use crate::store::rows::{self, GATEWAY_COLUMNS, INVITE_COLUMNS};
use crate::store::transitions::{self, VerifyStep};
use crate::store::{GatewayInvite, InviteRecord, NewInvite, StoreResult, VerifyOutcome};

pub fn insert(conn: &Connection, invite: &NewInvite) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5)",
    )?
    .execute(params![
        invite.id.as_str(),
        invite.site_id.to_string(),
        invite.custom_id.as_ref().map(|c| c.as_str()),
        invite.created_at,
        invite.expires_at
    ])?;
    Ok(())
}

/// The invite `id`, of any site.
pub fn by_id(conn: &Connection, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ?1");
    one(conn, &sql, [id.as_str()], |row| rows::invite(row, 0))
}

/// The invite `id` if it belongs to `site`.
pub fn of_site(
    conn: &Connection,
    site: SiteId,
    id: &InviteId,
) -> StoreResult<Option<InviteRecord>> {
    let sql =
        format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ?1 AND i.site_id = ?2");
    one(conn, &sql, params![id.as_str(), site.to_string()], |row| {
        rows::invite(row, 0)
    })
}

pub fn gateway(conn: &Connection, id: &InviteId) -> StoreResult<Option<GatewayInvite>> {
    let sql = format!(
        "SELECT {GATEWAY_COLUMNS} FROM invites i JOIN sites s ON s.site_id = i.site_id
         WHERE i.invite_id = ?1"
    );
    one(conn, &sql, [id.as_str()], rows::gateway_invite)
}

/// [`transitions::verify`] applied inside the caller's (write) transaction.
pub fn verify(
    conn: &Connection,
    id: &InviteId,
    method: VerifyMethod,
    now: UnixTime,
) -> StoreResult<VerifyOutcome> {
    match transitions::verify(by_id(conn, id)?, method, now) {
        VerifyStep::Done(outcome) => Ok(outcome),
        VerifyStep::Verify(record) => {
            write_verified(conn, &record, now)?;
            Ok(VerifyOutcome::Verified(record))
        }
    }
}

/// Stores `record` as verified at `now`, with its `invite.verified` event.
pub fn write_verified(conn: &Connection, record: &InviteRecord, now: UnixTime) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE invites SET status = 'verified', verified_at = ?2, verified_method = ?3
         WHERE invite_id = ?1",
    )?
    .execute(params![
        record.id.as_str(),
        now,
        record.method.map(|m| m.as_str())
    ])?;
    webhooks::record_event(
        conn,
        record.site_id,
        &record.id,
        EventType::InviteVerified,
        now,
    )
}
