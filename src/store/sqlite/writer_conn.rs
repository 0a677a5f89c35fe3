//! The writer's connection as lookups share it between batches. Beginning and ending a
//! read transaction takes four `fcntl` locks (the database file's shared lock and a WAL
//! read mark, each taken and released) and SQLite's check of the WAL index: 4.7 % of a
//! GET's profile, about what the lookup's own B-tree search costs. Lookups on the
//! writer's connection therefore share one read transaction, which the writer ends
//! before its next batch (so a lookup sees every commit of this process at once) and
//! which is renewed after [`SNAPSHOT_AGE`] (so it sees another process's commits, the
//! command line's, that much later at most). Each new read transaction also checks
//! whether another process has committed, for the invite cache ([`InviteCache`]).

use super::connect::BUSY_TIMEOUT;
use super::pool::exec_cached;
use crate::store::invite_cache::InviteCache;
use crate::store::{StoreError, StoreResult};
use rusqlite::Connection;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which read transaction a lookup on the writer's connection may use.
#[derive(Clone, Copy, PartialEq)]
pub enum Snapshot {
    /// The one open, if younger than [`SNAPSHOT_AGE`].
    Shared,
    /// A new one.
    Latest,
}

/// How long lookups on the writer's connection share one read transaction at most,
/// which is how late they see a change committed by another process (the command line).
pub const SNAPSHOT_AGE: Duration = Duration::from_millis(2);

/// The writer's connection; between batches, lookups share a read transaction on it.
pub struct WriterConn {
    pub conn: Connection,
    /// When the read transaction that lookups share began, while one is open.
    snapshot: Option<Instant>,
    /// How long that transaction serves lookups: [`SNAPSHOT_AGE`] but in tests.
    max_age: Duration,
    cache: Arc<InviteCache>,
    /// SQLite's `data_version` at the last check: it changes when another connection (in
    /// this process only the writer writes, so another process) has committed.
    data_version: Option<i64>,
}

impl WriterConn {
    pub fn new(conn: Connection, cache: Arc<InviteCache>) -> Self {
        Self::with_max_age(conn, cache, SNAPSHOT_AGE)
    }

    fn with_max_age(conn: Connection, cache: Arc<InviteCache>, max_age: Duration) -> Self {
        Self {
            conn,
            snapshot: None,
            max_age,
            cache,
            data_version: None,
        }
    }

    /// Runs `f` in the shared read transaction, begun now if there is none (or an older
    /// one, or `Latest` is asked for); `None` when the read should go elsewhere: a failed
    /// batch left its transaction open (its changes may never commit), or `f` found the
    /// database unavailable.
    pub fn read<T>(
        &mut self,
        snapshot: Snapshot,
        f: &impl Fn(&Connection) -> StoreResult<T>,
    ) -> Option<StoreResult<T>> {
        let now = Instant::now();
        if self
            .snapshot
            .is_some_and(|at| snapshot == Snapshot::Latest || now.duration_since(at) > self.max_age)
        {
            self.end_snapshot();
        }
        if self.snapshot.is_none() {
            if !self.conn.is_autocommit() || self.conn.busy_timeout(Duration::ZERO).is_err() {
                return None;
            }
            self.snapshot = Some(now);
            // Deferred: the first read takes the lock, and fails at once if it would wait.
            if exec_cached(&self.conn, "BEGIN").is_err() || self.check_data_version(now).is_err() {
                self.end_snapshot();
                return None;
            }
        }
        let result = f(&self.conn);
        if result.is_err() {
            self.end_snapshot();
        }
        (!matches!(result, Err(StoreError::Unavailable(_)))).then_some(result)
    }

    /// Starts the read transaction (a pragma that reads the database header) and tells
    /// the cache whether another process has committed since the last check.
    fn check_data_version(&mut self, begun: Instant) -> rusqlite::Result<()> {
        let version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        if self.data_version != Some(version) {
            // The first check also empties it: reads before it went unchecked.
            self.cache.external_change();
            self.data_version = Some(version);
        }
        self.cache.checked(begun);
        Ok(())
    }

    /// Ends the shared read transaction, if one is open, and gives the connection its
    /// busy timeout back: before a batch, or to take a newer snapshot.
    pub fn end_snapshot(&mut self) {
        if self.snapshot.take().is_some() {
            if !self.conn.is_autocommit() {
                let _ = exec_cached(&self.conn, "COMMIT");
            }
            let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL database with a table `t`; the writer's connection and another process's.
    fn open() -> (tempfile::TempDir, WriterConn, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);")
            .unwrap();
        writer.busy_timeout(BUSY_TIMEOUT).unwrap();
        let other = Connection::open(&path).unwrap();
        (
            dir,
            WriterConn::with_max_age(
                writer,
                Arc::new(InviteCache::new(16)),
                Duration::from_secs(3600),
            ),
            other,
        )
    }

    fn count(conn: &Connection) -> StoreResult<i64> {
        Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?)
    }

    fn busy_timeout_ms(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA busy_timeout", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn lookups_share_one_snapshot_until_a_newer_one_is_asked_for() {
        let (_dir, mut writer, other) = open();
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 0);
        other.execute("INSERT INTO t VALUES (1)", []).unwrap();
        assert_eq!(
            writer.read(Snapshot::Shared, &count).unwrap().unwrap(),
            0,
            "the shared snapshot predates the other process's commit"
        );
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 1);
    }

    #[test]
    fn a_snapshot_older_than_its_age_is_renewed() {
        let (_dir, mut writer, other) = open();
        writer.max_age = Duration::from_millis(1);
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 0);
        other.execute("INSERT INTO t VALUES (1)", []).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 1);
    }

    #[test]
    fn the_writer_ends_the_snapshot_and_its_commits_are_seen_at_once() {
        let (_dir, mut writer, _other) = open();
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 0);
        assert_eq!(busy_timeout_ms(&writer.conn), 0, "lookups never wait");
        writer.end_snapshot();
        assert!(writer.conn.is_autocommit());
        assert_eq!(
            busy_timeout_ms(&writer.conn),
            BUSY_TIMEOUT.as_millis() as i64,
            "the batch waits for locks as usual"
        );
        writer
            .conn
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")
            .unwrap();
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 1);
    }

    #[test]
    fn a_transaction_left_open_by_a_failed_batch_is_not_read() {
        let (_dir, mut writer, _other) = open();
        writer
            .conn
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
            .unwrap();
        assert!(writer.read(Snapshot::Shared, &count).is_none());
        assert!(
            !writer.conn.is_autocommit(),
            "left for the writer to roll back"
        );
    }

    #[test]
    fn a_lookup_that_would_wait_goes_elsewhere_and_leaves_no_transaction() {
        let (_dir, mut writer, _other) = open();
        let unavailable = |_: &Connection| -> StoreResult<i64> {
            Err(StoreError::Unavailable("database is locked".into()))
        };
        assert!(writer.read(Snapshot::Shared, &unavailable).is_none());
        assert!(writer.conn.is_autocommit());
        assert_eq!(
            busy_timeout_ms(&writer.conn),
            BUSY_TIMEOUT.as_millis() as i64
        );
        assert_eq!(writer.read(Snapshot::Shared, &count).unwrap().unwrap(), 0);
    }

    #[test]
    fn another_processes_commit_empties_the_invite_cache_and_the_writers_own_do_not() {
        use crate::domain::invite::Status;
        use crate::domain::{InviteId, SiteId};
        use crate::store::invite_cache::Lookup;
        use crate::store::InviteRecord;
        let (_dir, mut writer, other) = open();
        let record = InviteRecord {
            id: InviteId::generate(1_700_000_000_000),
            site_id: SiteId::generate(),
            custom_id: None,
            stored_status: Status::Pending,
            created_at: 1_700_000_000,
            expires_at: 1_700_086_400,
            method: None,
        };
        let cache = writer.cache.clone();
        let kept = |cache: &InviteCache| {
            matches!(
                cache.lookup(record.site_id, &record.id, Instant::now()),
                Lookup::Hit(_)
            )
        };
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 0);
        let Lookup::Miss(ticket) = cache.lookup(record.site_id, &record.id, Instant::now()) else {
            panic!("an empty cache")
        };
        cache.fill(ticket, record.clone());
        assert!(kept(&cache));

        writer.end_snapshot();
        writer
            .conn
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")
            .unwrap();
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 1);
        assert!(
            kept(&cache),
            "the writer's own commit changes no data_version"
        );

        other.execute("INSERT INTO t VALUES (2)", []).unwrap();
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
        assert!(!kept(&cache), "another process's commit empties it");
    }
}
