//! `/healthz`'s write on SQLite (docs/operations.md#health): it must fail whenever a create
//! would. On a full disk a write fails only when the WAL must grow past the room the
//! file already has, and a refused create leaves part of its frames written, so a small
//! probe (one page) may fit where the create did not. The probe therefore commits more
//! pages than a create does, through the writer's own batches: from the same point of the
//! WAL it needs more new room than any create, so it fails whenever one would.

use rusqlite::{params, Connection};

use crate::store::StoreResult;

/// Pages the probe's blob spans. A create commits 3 pages as a rule and at most 20 in
/// 1,500 measured (half with a customId, b-tree splits included); the probe commits
/// about 35, some 140 KiB, where a create commits 12 to 80 KiB.
pub const PROBE_PAGES: usize = 32;

/// SQLite's page size, as agegate leaves it.
const PAGE: usize = 4096;

/// Replaces the probe's one row: a blob of [`PROBE_PAGES`] pages, written anew (SQLite
/// writes every page it changes), in the pages the old one frees, so the file stays the
/// same size from one check to the next.
pub fn probe(conn: &Connection) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO health_probe (id, filler) VALUES (1, zeroblob(?1))",
    )?
    .execute(params![PROBE_PAGES * PAGE])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::PROBE_PAGES;
    use crate::store::sqlite::SqliteStore;
    use crate::store::AdminStore;

    #[tokio::test]
    async fn a_probe_commits_more_pages_than_a_create_and_the_file_does_not_grow() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = SqliteStore::open(path.to_str().unwrap()).await.unwrap();
        // A reader's snapshot keeps the WAL from starting over, so its size counts frames.
        let reader = rusqlite::Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM sites;")
            .unwrap();
        let wal = || {
            std::fs::metadata(dir.path().join("t.db-wal"))
                .unwrap()
                .len()
        };
        let pages = || -> i64 {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.query_row("PRAGMA page_count", [], |r| r.get(0))
                .unwrap()
        };
        for _ in 0..3 {
            let before = wal();
            store.ping().await.unwrap();
            let frames = (wal() - before) / (4096 + 24);
            assert!(frames >= PROBE_PAGES as u64, "{frames} frames");
        }
        reader.execute_batch("COMMIT").unwrap();
        let checkpointed = || {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
        };
        checkpointed();
        let size = pages();
        for _ in 0..10 {
            store.ping().await.unwrap();
        }
        checkpointed();
        assert_eq!(pages(), size, "the checks reuse their pages");
    }
}
