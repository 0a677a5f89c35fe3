//! Opening a connection for one of the pool's roles: WAL mode, commits synced to disk,
//! foreign keys on, and what each role needs besides.

use super::checkpoint;
use crate::store::StoreResult;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

/// How long a connection waits for another process's lock (the CLI, a second server).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// The writer connection's page cache (SQLite's default is 2 MiB).
const WRITER_CACHE_KIB: i64 = 8 * 1024;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Writer,
    Reader,
    /// Reads on the async runtime's threads: never waits for a lock.
    Inline,
    Checkpointer,
}

pub fn connect(path: &Path, role: Role) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(if role == Role::Inline {
        Duration::ZERO
    } else {
        BUSY_TIMEOUT
    })?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;
         PRAGMA temp_store = MEMORY;",
    )?;
    match role {
        Role::Reader | Role::Inline => conn.execute_batch("PRAGMA query_only = ON;")?,
        Role::Writer => {
            conn.pragma_update(
                None,
                "wal_autocheckpoint",
                checkpoint::WRITER_AUTOCHECKPOINT_PAGES,
            )?;
            // Lookups by key run here too while no batch holds the connection
            // (`Pool::read_now`): room for the invites' interior pages at a million rows
            // (about 2 MB) beside the pages the writes use, and for both sets of statements.
            conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
            conn.set_prepared_statement_cache_capacity(64);
        }
        Role::Checkpointer => {}
    }
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_wal_and_fsync_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let conn = connect(&dir.path().join("t.db"), Role::Writer).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        // 2 = FULL: in WAL mode NORMAL would skip the fsync at commit.
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2);
    }
}
