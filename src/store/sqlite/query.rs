//! Running a query and reading its rows through [`Columns`], for every area's SQL.

use crate::store::rows::Columns;
use crate::store::StoreResult;
use rusqlite::{Connection, Params};

/// The first row `sql` yields, read by `map`.
pub(super) fn one<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    map: impl FnOnce(&dyn Columns) -> StoreResult<T>,
) -> StoreResult<Option<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    match rows.next()? {
        Some(row) => map(row).map(Some),
        None => Ok(None),
    }
}

/// Every row `sql` yields, each read by `map`.
pub(super) fn all<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    mut map: impl FnMut(&dyn Columns) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(map(row)?);
    }
    Ok(out)
}
