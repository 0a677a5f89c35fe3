//! SQL of receipts and receipt keys (docs/evidence.md#receipts). Receipts are written with the
//! verification (`changes::write_verified`); here they are only read.

use rusqlite::{params, Connection};

use super::{all, one};
use crate::domain::{InviteId, SiteId};
use crate::store::rows;
use crate::store::{ReceiptKeyRecord, ReceiptLookup, StoreResult};

pub fn lookup(conn: &Connection, site: SiteId, id: &InviteId) -> StoreResult<ReceiptLookup> {
    let found = one(
        conn,
        "SELECT status, receipt FROM invites WHERE invite_id = ?1 AND site_id = ?2",
        params![id.as_str(), site.to_string()],
        rows::receipt_lookup,
    )?;
    Ok(found.unwrap_or(ReceiptLookup::NotFound))
}

pub fn keys(conn: &Connection) -> StoreResult<Vec<ReceiptKeyRecord>> {
    all(
        conn,
        &format!(
            "SELECT {} FROM receipt_keys ORDER BY seq",
            rows::RECEIPT_KEY_COLUMNS
        ),
        [],
        rows::receipt_key,
    )
}

/// Stores `key`, current at once, if there is no key yet (the first start, or the first
/// verification where the start could not write). Whether it was stored.
pub fn add_first_key(conn: &Connection, key: &ReceiptKeyRecord) -> StoreResult<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO receipt_keys (kid, private_key, created_at)
             SELECT ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM receipt_keys)",
        )?
        .execute(params![key.kid, key.private_key, key.created_at])?;
    Ok(added == 1)
}

/// A rotation's first step: `key` is listed with the others but signs nothing yet (on an
/// empty table it is the first key, and signs at once: no server has listed a key yet).
pub fn publish_key(conn: &Connection, key: &ReceiptKeyRecord) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO receipt_keys (kid, private_key, created_at, signs_from)
         SELECT ?1, ?2, ?3,
                CASE WHEN EXISTS (SELECT 1 FROM receipt_keys) THEN NULL ELSE 0 END",
    )?
    .execute(params![key.kid, key.private_key, key.created_at])?;
    Ok(())
}

/// A rotation's second step, in a transaction after the first committed: every published
/// key signs from `after` seconds on, by the clock of this machine (every process on the
/// file reads the same one).
pub fn schedule_published_keys(conn: &Connection, after: f64) -> StoreResult<()> {
    conn.prepare_cached(
        "UPDATE receipt_keys SET signs_from = unixepoch('subsec') + ?1 WHERE signs_from IS NULL",
    )?
    .execute(params![after])?;
    Ok(())
}

/// The key that signs a verification now: the newest whose time has come.
pub fn signing_key(conn: &Connection) -> StoreResult<Option<Vec<u8>>> {
    one(
        conn,
        "SELECT private_key FROM receipt_keys WHERE signs_from <= unixepoch('subsec')
         ORDER BY seq DESC LIMIT 1",
        [],
        |row| row.bytes(0),
    )
}
