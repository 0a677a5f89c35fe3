//! Threads that own SQLite connections. One writer commits many requests per
//! transaction (group commit): it takes every job that is waiting (`queue` decides when),
//! runs each in its own savepoint, commits once (an fsync), and only then answers each
//! job. Lookups by key run on the caller's thread ([`Pool::read_now`]), preferably on the
//! writer's own connection while it is idle; a few reader threads answer the other
//! queries concurrently from the WAL. Checkpoints run on a thread of their own
//! (`checkpoint`).
//!
//! The engine knows nothing of what the jobs store: what a batch adds to its transaction
//! comes from the [`BatchHooks`] it is started with (`jobs`).

use super::background;
use super::checkpoint::{self, Committed};
use super::jobs::{run_job, Finish, Job, WriteJob};
pub use super::jobs::{BatchHooks, WriteTx};
use super::queue::{Pushed, Queue, Taken, WakeOnDrop};
pub use super::writer_conn::ConnHooks;
use super::writer_conn::{Snapshot, WriterConn, SNAPSHOT_AGE};
use crate::store::{StoreError, StoreResult};
use crossbeam_channel::Sender;
use rusqlite::Connection;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::oneshot;

/// Jobs taken into one transaction at most; bounds the latency one batch adds.
const MAX_BATCH: usize = 512;

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;
/// The connections a [`Pool`] runs on.
pub struct Connections {
    pub writer: Connection,
    /// One reader thread each.
    pub readers: Vec<Connection>,
    /// For [`Pool::read_now`]; they must not wait for locks (no busy timeout).
    pub inline: Vec<Connection>,
    pub checkpointer: Connection,
}

pub struct Pool<H: BatchHooks> {
    writer: Arc<Queue<Box<dyn WriteJob<H::Note>>>>,
    /// The writer's connection; the writer thread holds it for the length of a batch.
    write_conn: Arc<Mutex<WriterConn>>,
    readers: Sender<ReadJob>,
    inline: Mutex<Vec<Connection>>,
}

impl<H: BatchHooks> Pool<H> {
    /// Starts the writer, one reader thread per reader connection, and the checkpointer.
    /// `conn_hooks` are attached to the writer's connection and hear of its transactions
    /// ([`ConnHooks`]); `hooks` hear of every batch.
    pub fn start(
        connections: Connections,
        conn_hooks: impl ConnHooks + 'static,
        hooks: H,
    ) -> std::io::Result<Self> {
        let Connections {
            writer,
            readers,
            inline,
            checkpointer,
        } = connections;
        let committed = checkpoint::start(checkpointer)?;
        let queue = Arc::new(Queue::new());
        let jobs = queue.clone();
        let nudged = queue.clone();
        let write_conn = WriterConn::new(
            writer,
            Box::new(conn_hooks),
            Box::new(move || nudged.nudge()),
        )
        .map_err(std::io::Error::other)?;
        let write_conn = Arc::new(Mutex::new(write_conn));
        let conn = write_conn.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                background::yield_to_requests();
                let _stopped = FailOnPanic(&jobs);
                write_loop(&conn, &jobs, committed, hooks);
            })?;
        let (rtx, rrx) = crossbeam_channel::unbounded::<ReadJob>();
        for (i, conn) in readers.into_iter().enumerate() {
            let rrx = rrx.clone();
            std::thread::Builder::new()
                .name(format!("sqlite-reader-{i}"))
                .spawn(move || {
                    for job in rrx {
                        job(&conn);
                    }
                })?;
        }
        Ok(Self {
            writer: queue,
            write_conn,
            readers: rtx,
            inline: Mutex::new(inline),
        })
    }

    /// Runs `f`, a short read such as a lookup by key, on the calling thread: a
    /// primary-key read costs a few microseconds, less than the hop to a reader thread and
    /// back (two context switches). It runs on the writer's connection when no batch
    /// holds it: SQLite drops a connection's whole page cache when another connection has
    /// committed, so with writes going on every read elsewhere copies its pages in again,
    /// while the writer's cache survives its own commits. There, lookups share one read
    /// transaction ([`WriterConn`]): this process's commits are seen at once, another
    /// process's within [`SNAPSHOT_AGE`](super::writer_conn::SNAPSHOT_AGE). Otherwise
    /// it runs on a free inline connection. A read that would wait for a lock fails at
    /// once on either (no busy timeout) and, like any read that finds the database
    /// unavailable or no connection free, goes to the reader threads, which wait as long
    /// as the busy timeout allows. [`Snapshot::Latest`] also sees every change another
    /// process committed before the read: for what the command line changes, such as a
    /// new site's credentials.
    pub async fn read_now<T, F>(&self, snapshot: Snapshot, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: Fn(&Connection) -> StoreResult<T> + Send + 'static,
    {
        if let Ok(mut writer) = self.write_conn.try_lock() {
            if let Some(result) = writer.read(snapshot, &f) {
                return result;
            }
        }
        let taken = self
            .inline
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        if let Some(conn) = taken {
            let result = f(&conn);
            self.inline
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(conn);
            if !matches!(result, Err(StoreError::Unavailable(_))) {
                return result;
            }
        }
        self.read(f).await
    }

    pub async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = tx.send(f(conn));
        });
        self.readers.send(job).map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Runs `f` in the writer's transaction; answers after the transaction commits.
    /// An `Err` from `f` rolls back only `f`'s own changes, and its notes.
    pub async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_, H::Note>) -> StoreResult<T> + Send + 'static,
    {
        self.submit(f, true).await
    }

    /// [`Self::write`] for a job that writes with one statement: SQLite undoes a failed
    /// statement by itself, so the job needs no savepoint (two statements fewer, and no
    /// copies of the pages it touches into the statement journal).
    pub async fn write_one_statement<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_, H::Note>) -> StoreResult<T> + Send + 'static,
    {
        self.submit(f, false).await
    }

    async fn submit<T, F>(&self, f: F, guarded: bool) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteTx<'_, H::Note>) -> StoreResult<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job: Box<dyn WriteJob<H::Note>> = Box::new(Job { f, guarded, reply });
        match self.writer.push(job) {
            Pushed::Lead => {
                let _wake = WakeOnDrop(&self.writer);
                tokio::task::yield_now().await;
            }
            Pushed::Joined => {}
            Pushed::Closed(_) => return Err(StoreError::Closed),
        }
        rx.await.map_err(|_| StoreError::Closed)?
    }
}

fn write_loop<H: BatchHooks>(
    conn: &Mutex<WriterConn>,
    jobs: &Queue<Box<dyn WriteJob<H::Note>>>,
    committed: Committed,
    mut hooks: H,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut finishes: Vec<Finish> = Vec::with_capacity(MAX_BATCH);
    // The notes of the batch's jobs, for the hooks; kept between batches for its capacity.
    let mut notes: Vec<H::Note> = Vec::new();
    // While lookups share a read transaction, the writer wakes to end it at its age.
    let mut idle_limit = None;
    loop {
        match jobs.take(&mut batch, MAX_BATCH, idle_limit) {
            Taken::Closed => return,
            Taken::Idle => {
                idle_limit = match conn.try_lock() {
                    Ok(mut writer) => writer.end_stale_snapshot(),
                    Err(_) => Some(SNAPSHOT_AGE),
                };
                continue;
            }
            Taken::Jobs => idle_limit = None,
        }
        let mut writer = conn.lock().unwrap_or_else(PoisonError::into_inner);
        writer.end_snapshot();
        let begun = writer.begin_batch(|conn| {
            end_stale_transaction(conn)?;
            conn.execute_batch("BEGIN IMMEDIATE")?;
            Ok(())
        });
        let conn = &writer.conn;
        if let Err(e) = begun {
            tracing::error!(error = %e, "could not begin a write transaction");
            for job in batch.drain(..) {
                job.fail(e.clone());
            }
            continue;
        }
        notes.clear();
        for job in batch.drain(..) {
            if conn.is_autocommit() {
                // SQLite rolled the whole transaction back itself (it may, after a full
                // disk or an I/O error mid-statement): nothing of the batch is stored, and a
                // job run now would commit on its own. Fail the rest. The lock and the
                // batch's changes are gone too: the cache counts on neither.
                writer.end_batch(None);
                job.fail(rolled_back());
                continue;
            }
            finishes.push(run_job(&mut WriteTx::new(conn, &mut notes), job));
        }
        // Still under the write lock, unless SQLite rolled the batch back.
        let held_at = (!conn.is_autocommit()).then(Instant::now);
        let commit = if held_at.is_none() {
            Err(rolled_back())
        } else {
            hooks
                .before_commit(conn, &notes)
                .and_then(|()| conn.execute_batch("COMMIT").map_err(StoreError::from))
        };
        if let Err(e) = &commit {
            tracing::error!(error = %e, "group commit failed");
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
        hooks.after_commit(commit.is_ok());
        // Committed or not, the batch is over.
        writer.end_batch(held_at);
        drop(writer);
        if commit.is_ok() {
            committed.notify();
        }
        for finish in finishes.drain(..) {
            finish(commit.clone());
        }
    }
}

/// Stops the writer for good if its thread panics: the queue is closed, so every job
/// waiting and every later write fails at once ([`StoreError::Closed`], a 503, and so does
/// `/healthz`) instead of waiting for a writer that is gone. The jobs of the batch it was
/// running are answered the same way as their replies drop; nothing of it was committed.
struct FailOnPanic<'a, N>(&'a Queue<Box<dyn WriteJob<N>>>);

impl<N> Drop for FailOnPanic<'_, N> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            tracing::error!("the database writer stopped after a panic; writes fail until restart");
            for job in self.0.close_and_drain() {
                job.fail(StoreError::Closed);
            }
        }
    }
}

/// What a job of a batch that SQLite rolled back on its own is answered: the cause (a
/// full disk, an I/O error) has passed to the job that met it; all are worth a retry.
fn rolled_back() -> StoreError {
    StoreError::Unavailable("the database rolled back the write transaction".into())
}

/// Ends a transaction a failed batch left open (a `ROLLBACK` that itself failed), so one
/// fault does not make every later `BEGIN` fail after the database is back.
fn end_stale_transaction(conn: &Connection) -> StoreResult<()> {
    if conn.is_autocommit() {
        return Ok(());
    }
    conn.execute_batch("ROLLBACK")?;
    Ok(())
}

impl<H: BatchHooks> Drop for Pool<H> {
    fn drop(&mut self) {
        self.writer.close();
    }
}

#[cfg(test)]
#[path = "pool_hooks_tests.rs"]
mod hooks_tests;
#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
