//! Reading PostgreSQL's rows through the shared [`Columns`] mapping.

use crate::store::rows::{unreadable, Columns};
use crate::store::StoreResult;

/// The PostgreSQL schema stores every integer as BIGINT, so `int` reads `i64` alone; text
/// that may hold U+0000 (which TEXT cannot) is stored as its UTF-8 bytes in BYTEA.
impl Columns for tokio_postgres::Row {
    fn text(&self, i: usize) -> StoreResult<String> {
        self.opt_text(i)?.ok_or_else(|| unreadable(i, "NULL"))
    }
    fn opt_text(&self, i: usize) -> StoreResult<Option<String>> {
        let bytea = self
            .columns()
            .get(i)
            .is_some_and(|c| *c.type_() == tokio_postgres::types::Type::BYTEA);
        if !bytea {
            return self.try_get(i).map_err(|e| unreadable(i, e));
        }
        let bytes: Option<Vec<u8>> = self.try_get(i).map_err(|e| unreadable(i, e))?;
        bytes
            .map(|b| String::from_utf8(b).map_err(|e| unreadable(i, e)))
            .transpose()
    }
    fn int(&self, i: usize) -> StoreResult<i64> {
        self.try_get(i).map_err(|e| unreadable(i, e))
    }
    fn opt_int(&self, i: usize) -> StoreResult<Option<i64>> {
        self.try_get(i).map_err(|e| unreadable(i, e))
    }
    fn boolean(&self, i: usize) -> StoreResult<bool> {
        self.try_get(i).map_err(|e| unreadable(i, e))
    }
    fn bytes(&self, i: usize) -> StoreResult<Vec<u8>> {
        self.try_get(i).map_err(|e| unreadable(i, e))
    }
    fn opt_bytes(&self, i: usize) -> StoreResult<Option<Vec<u8>>> {
        self.try_get(i).map_err(|e| unreadable(i, e))
    }
}
