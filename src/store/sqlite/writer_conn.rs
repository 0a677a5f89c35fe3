//! The writer's connection as lookups share it between batches. Beginning and ending a
//! read transaction takes four `fcntl` locks (the database file's shared lock and a WAL
//! read mark, each taken and released) and SQLite's check of the WAL index: 4.7 % of a
//! GET's profile, about what the lookup's own B-tree search costs. Lookups on the
//! writer's connection therefore share one read transaction, which the writer ends
//! before its next batch (so a lookup sees every commit of this process at once) and
//! which is renewed after [`SNAPSHOT_AGE`] (so it sees another process's commits, the
//! command line's, that much later at most). Its life is bounded whether or not reads
//! come: beginning one nudges the writer thread, which ends it once it is that old
//! ([`WriterConn::end_stale_snapshot`]); an open read transaction would otherwise keep
//! checkpoints from restarting the WAL. Each new read transaction also checks whether
//! another process has changed an invite, for the invite cache ([`InviteCache`]).
//!
//! Every change to an invite on this connection evicts it from the cache by
//! construction: temporary triggers call back into the cache from inside the statement
//! that changes the row, so no write path can forget to.

use super::connect::BUSY_TIMEOUT;
use super::query::exec_cached;
use crate::domain::InviteId;
use crate::store::invite_cache::InviteCache;
use crate::store::{StoreError, StoreResult};
use rusqlite::functions::FunctionFlags;
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
/// which is how late they see a change committed by another process (the command line):
/// the same bound as the invite cache's, one constant for both.
pub const SNAPSHOT_AGE: Duration = crate::store::invite_cache::FRESH_FOR;

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
    /// `invite_changes.generation` at the last check: it changes when any connection has
    /// changed or erased an invite (persistent triggers, migration 7). Another process's
    /// commits that leave invites alone (creates, the health check) keep the cache.
    generation: Option<i64>,
    /// Tells the writer thread that a read transaction has begun.
    nudge: Box<dyn Fn() + Send>,
}

impl WriterConn {
    /// Takes the writer's connection; from now on every change of an invite on it evicts
    /// the invite from `cache`.
    pub fn new(
        conn: Connection,
        cache: Arc<InviteCache>,
        nudge: Box<dyn Fn() + Send>,
    ) -> rusqlite::Result<Self> {
        Self::with_max_age(conn, cache, nudge, SNAPSHOT_AGE)
    }

    fn with_max_age(
        conn: Connection,
        cache: Arc<InviteCache>,
        nudge: Box<dyn Fn() + Send>,
        max_age: Duration,
    ) -> rusqlite::Result<Self> {
        evict_on_change(&conn, cache.clone())?;
        Ok(Self {
            conn,
            snapshot: None,
            max_age,
            cache,
            data_version: None,
            generation: None,
            nudge,
        })
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
            (self.nudge)();
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
            self.data_version = Some(version);
            let generation: Option<i64> = self
                .conn
                .prepare_cached("SELECT generation FROM invite_changes")?
                .query_row([], |r| r.get(0))
                .ok();
            // The first check also empties it: reads before it went unchecked. So does a
            // database without the table (only tests open one).
            if generation.is_none() || self.generation != generation {
                self.cache.external_change();
                self.generation = generation;
            }
        }
        self.cache.checked(begun);
        Ok(())
    }

    /// Ends the shared read transaction if it is older than its age; while one younger
    /// stays open, how long until it is not.
    pub fn end_stale_snapshot(&mut self) -> Option<Duration> {
        let age = self.snapshot?.elapsed();
        if age >= self.max_age {
            self.end_snapshot();
            None
        } else {
            Some(self.max_age - age)
        }
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

/// Temporary triggers (this connection only) that tell `cache` of every invite updated
/// or deleted, inside the statement that does it.
fn evict_on_change(conn: &Connection, cache: Arc<InviteCache>) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "agegate_invite_changing",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY,
        move |ctx| {
            match ctx.get_raw(0).as_str().ok().and_then(InviteId::parse) {
                Some(id) => cache.changing(&id),
                // Not an id this process would make: forget everything rather than guess.
                None => cache.external_change(),
            }
            Ok(0)
        },
    )?;
    conn.execute_batch(
        "CREATE TEMP TRIGGER IF NOT EXISTS evict_updated_invite AFTER UPDATE ON main.invites
         BEGIN SELECT agegate_invite_changing(OLD.invite_id); END;
         CREATE TEMP TRIGGER IF NOT EXISTS evict_deleted_invite AFTER DELETE ON main.invites
         BEGIN SELECT agegate_invite_changing(OLD.invite_id); END;",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL database with a table `t`; the writer's connection and another process's.
    fn open() -> (tempfile::TempDir, WriterConn, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let mut writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);")
            .unwrap();
        super::super::migrations::apply(&mut writer).unwrap();
        writer.busy_timeout(BUSY_TIMEOUT).unwrap();
        let other = Connection::open(&path).unwrap();
        let writer = WriterConn::with_max_age(
            writer,
            Arc::new(InviteCache::new(16)),
            Box::new(|| {}),
            Duration::from_secs(3600),
        )
        .unwrap();
        (dir, writer, other)
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

    /// A pending invite `id` of a new site `s`, committed by `conn`.
    fn store_invite(conn: &Connection, id: &str, site: &str) {
        conn.execute_batch(&format!(
            "INSERT INTO sites (site_id, name, created_at) VALUES ('{site}', 'n', 1);
             INSERT INTO invites (invite_id, site_id, status, created_at, expires_at)
             VALUES ('{id}', '{site}', 'pending', 1, 86401);"
        ))
        .unwrap();
    }

    #[test]
    fn another_processes_change_of_an_invite_empties_the_invite_cache_and_nothing_else_does() {
        use crate::domain::invite::Status;
        use crate::domain::{InviteId, SiteId};
        use crate::store::invite_cache::Lookup;
        use crate::store::InviteRecord;
        let (_dir, mut writer, other) = open();
        let site = SiteId::generate();
        let record = InviteRecord {
            id: InviteId::generate(1_700_000_000_000),
            site_id: site,
            custom_id: None,
            stored_status: Status::Pending,
            created_at: 1,
            expires_at: 86_401,
            method: None,
        };
        store_invite(&other, record.id.as_str(), &site.to_string());
        let cache = writer.cache.clone();
        let kept = |cache: &InviteCache| {
            matches!(
                cache.lookup(record.site_id, &record.id, Instant::now()),
                Lookup::Hit(_)
            )
        };
        let fill = |cache: &InviteCache| {
            let Lookup::Miss(ticket) = cache.lookup(site, &record.id, Instant::now()) else {
                panic!("not kept")
            };
            cache.fill(ticket, record.clone());
            assert!(kept(cache));
        };
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 0);
        fill(&cache);

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
        other.execute("PRAGMA user_version = 7", []).unwrap();
        store_invite(&other, "another", &SiteId::generate().to_string());
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
        assert!(
            kept(&cache),
            "another process's commits that change no invite keep it"
        );

        other
            .execute(
                "UPDATE invites SET status = 'verified' WHERE invite_id = 'another'",
                [],
            )
            .unwrap();
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
        assert!(
            !kept(&cache),
            "another process's change of an invite empties it"
        );
        fill(&cache);
        other
            .execute("DELETE FROM invites WHERE invite_id = 'another'", [])
            .unwrap();
        assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
        assert!(!kept(&cache), "and so does an erasure");
    }

    #[test]
    fn every_change_of_an_invite_on_the_writers_connection_evicts_it() {
        use crate::domain::InviteId;
        use crate::store::invite_cache::Lookup;
        let (_dir, mut writer, _other) = open();
        let site = crate::domain::SiteId::generate();
        let id = InviteId::generate(1_700_000_000_000);
        store_invite(&writer.conn, id.as_str(), &site.to_string());
        let cache = writer.cache.clone();
        let read = |writer: &mut WriterConn| {
            writer.read(Snapshot::Latest, &count).unwrap().unwrap();
        };
        for sql in [
            "UPDATE invites SET status = 'expired' WHERE invite_id = ?1",
            "DELETE FROM invites WHERE invite_id = ?1",
        ] {
            read(&mut writer);
            let Lookup::Miss(ticket) = cache.lookup(site, &id, Instant::now()) else {
                panic!("not kept yet")
            };
            cache.fill(
                ticket,
                crate::store::InviteRecord {
                    id: id.clone(),
                    site_id: site,
                    custom_id: None,
                    stored_status: crate::domain::Status::Pending,
                    created_at: 1,
                    expires_at: 86_401,
                    method: None,
                },
            );
            assert!(matches!(
                cache.lookup(site, &id, Instant::now()),
                Lookup::Hit(_)
            ));
            writer.end_snapshot();
            writer.conn.execute(sql, [id.as_str()]).unwrap();
            cache.batch_ended();
            assert!(
                matches!(cache.lookup(site, &id, Instant::now()), Lookup::Miss(_)),
                "{sql}"
            );
        }
    }

    #[test]
    fn a_snapshot_is_ended_once_it_is_older_than_its_age() {
        let (_dir, mut writer, _other) = open();
        writer.max_age = Duration::from_millis(20);
        assert_eq!(writer.end_stale_snapshot(), None, "none open");
        writer.read(Snapshot::Shared, &count).unwrap().unwrap();
        let left = writer.end_stale_snapshot().expect("still young");
        assert!(left <= Duration::from_millis(20));
        assert!(!writer.conn.is_autocommit(), "kept open");
        std::thread::sleep(left);
        assert_eq!(writer.end_stale_snapshot(), None);
        assert!(writer.conn.is_autocommit(), "ended");
    }
}
