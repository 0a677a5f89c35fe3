//! Running a query and reading its rows through [`Columns`], for every area's SQL.

use crate::store::rows::{unreadable, Columns};
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

/// Runs `sql` (a statement without parameters or rows) from the statement cache: the
/// writer runs these for every job, and parsing them each time is measurable.
pub(super) fn exec_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

impl Columns for rusqlite::Row<'_> {
    fn text(&self, i: usize) -> StoreResult<String> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn opt_text(&self, i: usize) -> StoreResult<Option<String>> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn int(&self, i: usize) -> StoreResult<i64> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn opt_int(&self, i: usize) -> StoreResult<Option<i64>> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn boolean(&self, i: usize) -> StoreResult<bool> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn bytes(&self, i: usize) -> StoreResult<Vec<u8>> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
    fn opt_bytes(&self, i: usize) -> StoreResult<Option<Vec<u8>>> {
        self.get(i).map_err(|e| unreadable(i, e))
    }
}
