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

pub fn add_key(conn: &Connection, key: &ReceiptKeyRecord, only_if_none: bool) -> StoreResult<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO receipt_keys (kid, private_key, created_at)
             SELECT ?1, ?2, ?3 WHERE NOT ?4 OR NOT EXISTS (SELECT 1 FROM receipt_keys)",
        )?
        .execute(params![
            key.kid,
            key.private_key,
            key.created_at,
            only_if_none
        ])?;
    Ok(added == 1)
}
