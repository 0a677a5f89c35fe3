//! Threads that own SQLite connections. One writer commits many requests per
//! transaction (group commit): it takes every job that is waiting, runs each in its own
//! savepoint, commits once (an fsync), and only then answers each job. A few readers
//! answer queries concurrently from the WAL.

use crate::store::{StoreError, StoreResult};
use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;
use tokio::sync::oneshot;

/// Jobs taken into one transaction at most; bounds the latency one batch adds.
const MAX_BATCH: usize = 512;

type ReadJob = Box<dyn FnOnce(&Connection) + Send>;
type Finish = Box<dyn FnOnce(StoreResult<()>) + Send>;

/// A write waiting for the writer thread.
trait WriteJob: Send {
    /// Runs inside the batch's transaction; says whether to keep its changes and
    /// returns what answers the caller once the commit's outcome is known.
    fn run(self: Box<Self>, conn: &Connection) -> (bool, Finish);
    /// Answers the caller without running.
    fn fail(self: Box<Self>, error: StoreError);
}

struct Job<F, T> {
    f: F,
    reply: oneshot::Sender<StoreResult<T>>,
}

impl<F, T> WriteJob for Job<F, T>
where
    T: Send + 'static,
    F: FnOnce(&Connection) -> StoreResult<T> + Send,
{
    fn run(self: Box<Self>, conn: &Connection) -> (bool, Finish) {
        let Job { f, reply } = *self;
        let result = f(conn);
        let keep = result.is_ok();
        (
            keep,
            Box::new(move |commit| {
                let _ = reply.send(commit.and(result));
            }),
        )
    }

    fn fail(self: Box<Self>, error: StoreError) {
        let _ = self.reply.send(Err(error));
    }
}

pub struct Pool {
    writer: Sender<Box<dyn WriteJob>>,
    readers: Sender<ReadJob>,
}

impl Pool {
    /// Starts the writer on `writer` and one reader thread per connection in `readers`.
    pub fn start(writer: Connection, readers: Vec<Connection>) -> std::io::Result<Self> {
        let (wtx, wrx) = crossbeam_channel::unbounded::<Box<dyn WriteJob>>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || write_loop(writer, wrx))?;
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
            writer: wtx,
            readers: rtx,
        })
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
    /// An `Err` from `f` rolls back only `f`'s own changes.
    pub async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job: Box<dyn WriteJob> = Box::new(Job { f, reply });
        self.writer.send(job).map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }
}

fn write_loop(conn: Connection, jobs: Receiver<Box<dyn WriteJob>>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut finishes: Vec<Finish> = Vec::with_capacity(MAX_BATCH);
    while let Ok(first) = jobs.recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            tracing::error!(error = %e, "could not begin a write transaction");
            let e = StoreError::from(e);
            for job in batch.drain(..) {
                job.fail(e.clone());
            }
            continue;
        }
        for job in batch.drain(..) {
            finishes.push(run_in_savepoint(&conn, job));
        }
        let commit = conn.execute_batch("COMMIT").map_err(StoreError::from);
        if let Err(e) = &commit {
            tracing::error!(error = %e, "group commit failed");
            let _ = conn.execute_batch("ROLLBACK");
        }
        for finish in finishes.drain(..) {
            finish(commit.clone());
        }
    }
}

fn run_in_savepoint(conn: &Connection, job: Box<dyn WriteJob>) -> Finish {
    if let Err(e) = conn.execute_batch("SAVEPOINT job") {
        job.fail(e.into());
        return Box::new(|_| {});
    }
    let (keep, finish) = job.run(conn);
    let end = if keep {
        "RELEASE job"
    } else {
        "ROLLBACK TO job; RELEASE job"
    };
    match conn.execute_batch(end) {
        Ok(()) => finish,
        Err(e) => {
            let e = StoreError::from(e);
            Box::new(move |_| finish(Err(e)))
        }
    }
}
