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
//! checkpoints from restarting the WAL.
//!
//! What is kept coherent with the connection (the store's status cache) is no business of
//! the engine's: the [`ConnHooks`] it is given are attached to the connection once, and
//! hear of every transaction begun (and whether another process has committed since the
//! last), of the write lock taken and of every batch's end.

use super::connect::BUSY_TIMEOUT;
use super::query::exec_cached;
use crate::store::{StoreError, StoreResult};
use rusqlite::Connection;
use std::time::{Duration, Instant};

/// What keeps itself coherent with the writer's connection, such as a cache of its rows.
pub trait ConnHooks: Send {
    /// Once, when the writer takes the connection (temporary triggers, functions).
    fn attach(&mut self, conn: &Connection) -> rusqlite::Result<()>;
    /// A read transaction or a batch has begun, at an instant no later than `begun`;
    /// `others_committed` when another connection (another process) has committed since
    /// the last one, and on the first. It may read in that transaction.
    fn checked(
        &mut self,
        conn: &Connection,
        begun: Instant,
        others_committed: bool,
    ) -> rusqlite::Result<()>;
    /// A batch holds the write lock: no other process can commit until it ends.
    fn write_lock_taken(&self);
    /// The batch is over and has let go of the write lock: `held_at` is an instant before
    /// its `COMMIT` or `ROLLBACK` began, `None` if SQLite rolled the transaction back
    /// itself (when is not known).
    fn batch_ended(&self, held_at: Option<Instant>);
}

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
/// the same bound as the status cache's, one constant for both.
pub const SNAPSHOT_AGE: Duration = crate::store::invite_cache::FRESH_FOR;

/// The writer's connection; between batches, lookups share a read transaction on it.
pub struct WriterConn {
    pub conn: Connection,
    /// When the read transaction that lookups share began, while one is open.
    snapshot: Option<Instant>,
    /// How long that transaction serves lookups: [`SNAPSHOT_AGE`] but in tests.
    max_age: Duration,
    hooks: Box<dyn ConnHooks>,
    /// SQLite's `data_version` at the last check: it changes when another connection (in
    /// this process only the writer writes, so another process) has committed.
    data_version: Option<i64>,
    /// Tells the writer thread that a read transaction has begun.
    nudge: Box<dyn Fn() + Send>,
}

impl WriterConn {
    /// Takes the writer's connection and attaches `hooks` to it.
    pub fn new(
        conn: Connection,
        hooks: Box<dyn ConnHooks>,
        nudge: Box<dyn Fn() + Send>,
    ) -> rusqlite::Result<Self> {
        Self::with_max_age(conn, hooks, nudge, SNAPSHOT_AGE)
    }

    pub(super) fn with_max_age(
        conn: Connection,
        mut hooks: Box<dyn ConnHooks>,
        nudge: Box<dyn Fn() + Send>,
        max_age: Duration,
    ) -> rusqlite::Result<Self> {
        hooks.attach(&conn)?;
        Ok(Self {
            conn,
            snapshot: None,
            max_age,
            hooks,
            data_version: None,
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

    /// Begins a batch: `begin` takes the write lock (`BEGIN IMMEDIATE`), then the
    /// database is checked for other processes' commits, as a read transaction of lookups
    /// is; then the hooks hear that the lock is held ([`ConnHooks::write_lock_taken`]).
    /// The writer says when it lets go ([`Self::end_batch`]).
    pub fn begin_batch(
        &mut self,
        begin: impl FnOnce(&Connection) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let at = Instant::now();
        begin(&self.conn)?;
        self.check_data_version(at)?;
        self.hooks.write_lock_taken();
        Ok(())
    }

    /// The batch is over and has let go of the write lock: `held_at` is an instant
    /// before its `COMMIT` or `ROLLBACK` began, `None` if SQLite rolled the transaction
    /// back itself (when is not known). The hooks hear of it ([`ConnHooks::batch_ended`]).
    pub fn end_batch(&self, held_at: Option<Instant>) {
        self.hooks.batch_ended(held_at);
    }

    /// Starts the read transaction (a pragma that reads the database header) and tells
    /// the hooks whether another process has committed since the last check.
    fn check_data_version(&mut self, begun: Instant) -> rusqlite::Result<()> {
        let version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        let others_committed = self.data_version != Some(version);
        self.data_version = Some(version);
        self.hooks.checked(&self.conn, begun, others_committed)
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

#[cfg(test)]
#[path = "writer_conn_tests.rs"]
mod tests;
