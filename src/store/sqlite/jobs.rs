//! A write job of the group commit (`pool`), and what a batch hands its hooks. A job
//! notes what it wrote through its [`WriteTx`]; the engine keeps the notes of the jobs
//! whose changes it keeps (a job that fails takes its notes back with its changes) and
//! hands them to the [`BatchHooks`] just before the commit, in the batch's transaction;
//! the hooks hear afterwards whether it committed. The engine knows nothing of what the
//! notes mean: the store's product layer (`hooks`) does.

use super::query::exec_cached;
use crate::store::{StoreError, StoreResult};
use rusqlite::Connection;
use std::ops::Deref;
use tokio::sync::oneshot;

pub type Finish = Box<dyn FnOnce(StoreResult<()>) + Send>;

/// What a batch adds to its transaction besides its jobs, and learns of its end.
pub trait BatchHooks: Send + 'static {
    /// What a job notes of what it wrote ([`WriteTx::note`]).
    type Note: Send + 'static;
    /// Runs in the batch's transaction after its last job, with the notes of the jobs
    /// whose changes the transaction holds, in the order noted. An `Err` fails the batch:
    /// nothing of it commits, and every job is answered with the error.
    fn before_commit(&mut self, conn: &Connection, notes: &[Self::Note]) -> StoreResult<()>;
    /// The batch is over: `committed` says whether what it wrote (and what
    /// [`Self::before_commit`] wrote) is stored. Not called for a batch that could not
    /// begin (nothing of it ran).
    fn after_commit(&mut self, committed: bool);
}

/// A job's part of the batch's transaction: the connection (by `Deref`), and where the
/// job notes what it wrote for the [`BatchHooks`].
pub struct WriteTx<'a, N> {
    conn: &'a Connection,
    notes: &'a mut Vec<N>,
}

impl<'a, N> WriteTx<'a, N> {
    /// A job's part of the transaction on `conn`, noting into `notes`.
    pub fn new(conn: &'a Connection, notes: &'a mut Vec<N>) -> Self {
        Self { conn, notes }
    }

    /// Hands `note` to the hooks before the commit, if this job's changes are kept.
    pub fn note(&mut self, note: N) {
        self.notes.push(note);
    }
}

impl<N> Deref for WriteTx<'_, N> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

/// A write waiting for the writer thread.
pub trait WriteJob<N>: Send {
    /// Runs inside the batch's transaction; says whether to keep its changes and
    /// returns what answers the caller once the commit's outcome is known.
    fn run(self: Box<Self>, tx: &mut WriteTx<'_, N>) -> (bool, Finish);
    /// Whether the job runs in a savepoint of its own, so that its failure undoes its
    /// earlier statements without undoing the other jobs of the batch.
    fn guarded(&self) -> bool;
    /// Answers the caller without running.
    fn fail(self: Box<Self>, error: StoreError);
}

pub struct Job<F, T> {
    pub f: F,
    pub guarded: bool,
    pub reply: oneshot::Sender<StoreResult<T>>,
}

impl<F, T, N> WriteJob<N> for Job<F, T>
where
    T: Send + 'static,
    F: FnOnce(&mut WriteTx<'_, N>) -> StoreResult<T> + Send,
{
    fn run(self: Box<Self>, tx: &mut WriteTx<'_, N>) -> (bool, Finish) {
        let Job { f, reply, .. } = *self;
        let result = f(tx);
        let keep = result.is_ok();
        (
            keep,
            Box::new(move |commit| {
                let _ = reply.send(commit.and(result));
            }),
        )
    }

    fn guarded(&self) -> bool {
        self.guarded
    }

    fn fail(self: Box<Self>, error: StoreError) {
        let _ = self.reply.send(Err(error));
    }
}

/// Runs `job`, in a savepoint of its own if it is guarded; its notes go if its changes do.
pub fn run_job<N>(tx: &mut WriteTx<'_, N>, job: Box<dyn WriteJob<N>>) -> Finish {
    let conn = tx.conn;
    let guarded = job.guarded();
    if guarded {
        if let Err(e) = exec_cached(conn, "SAVEPOINT job") {
            job.fail(e.into());
            return Box::new(|_| {});
        }
    }
    let noted = tx.notes.len();
    let (keep, finish) = job.run(tx);
    if !keep {
        tx.notes.truncate(noted);
    }
    // Unguarded, a failed statement undid itself. Or the job met an error after which
    // SQLite rolled back the whole transaction; the savepoint is gone with it, and the
    // commit answers the job.
    if !guarded || conn.is_autocommit() {
        return finish;
    }
    let end = if keep {
        exec_cached(conn, "RELEASE job")
    } else {
        exec_cached(conn, "ROLLBACK TO job").and_then(|()| exec_cached(conn, "RELEASE job"))
    };
    match end {
        Ok(()) => finish,
        Err(e) => {
            let e = StoreError::from(e);
            Box::new(move |_| finish(Err(e)))
        }
    }
}
