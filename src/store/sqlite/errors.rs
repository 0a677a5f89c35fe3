//! What SQLite's errors mean to the rest of agegate (docs/reliability.md#database-faults): the database
//! refusing service for now is [`StoreError::Unavailable`] (HTTP 503); anything else is
//! a fault of the database itself.

use std::sync::Arc;

use crate::store::{describe, StoreError};

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            // Disk full, a read-only file, a lock held too long, a file that cannot be
            // opened, read or written (an immutable file fails writes with an I/O error),
            // no memory, a lost race for the WAL's locks: the database refuses service for
            // now (docs/reliability.md#database-faults).
            Some(
                C::DiskFull
                | C::ReadOnly
                | C::DatabaseBusy
                | C::DatabaseLocked
                | C::CannotOpen
                | C::SystemIoFailure
                | C::PermissionDenied
                | C::OutOfMemory
                | C::FileLockingProtocolFailed,
            ) => StoreError::Unavailable(describe(&e)),
            _ => StoreError::Database(Arc::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_read_only_locked_or_failing_sqlite_file_is_unavailable() {
        use rusqlite::ffi;
        let sqlite = |code| rusqlite::Error::SqliteFailure(ffi::Error::new(code), None);
        for code in [
            ffi::SQLITE_FULL,
            ffi::SQLITE_READONLY,
            ffi::SQLITE_READONLY_DBMOVED,
            ffi::SQLITE_BUSY,
            ffi::SQLITE_BUSY_SNAPSHOT,
            ffi::SQLITE_LOCKED,
            ffi::SQLITE_IOERR,
            ffi::SQLITE_IOERR_WRITE,
            ffi::SQLITE_IOERR_FSYNC,
            ffi::SQLITE_CANTOPEN,
            ffi::SQLITE_PERM,
            ffi::SQLITE_NOMEM,
            ffi::SQLITE_PROTOCOL,
        ] {
            assert!(
                matches!(StoreError::from(sqlite(code)), StoreError::Unavailable(_)),
                "SQLite code {code}"
            );
        }
        for code in [
            ffi::SQLITE_CONSTRAINT,
            ffi::SQLITE_CORRUPT,
            ffi::SQLITE_ERROR,
        ] {
            assert!(
                matches!(StoreError::from(sqlite(code)), StoreError::Database(_)),
                "SQLite code {code}"
            );
        }
    }
}
