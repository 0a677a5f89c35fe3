//! Checkpoints off the writer's path. SQLite's automatic checkpoint runs inside the
//! connection that commits, so every few hundred commits one batch of requests would
//! wait while pages are copied from the WAL into the database file and that file is
//! fsynced. Here a thread of its own does that copying (PASSIVE: it never blocks the
//! writer or readers) shortly after commits; the writer keeps an automatic checkpoint
//! at a larger size only as the backstop that lets the WAL start over under sustained
//! load (a passive checkpoint that races new commits never reaches the end of the WAL).

use crossbeam_channel::{Receiver, Sender};
use rusqlite::Connection;
use std::time::Duration;

/// The most often the thread checkpoints. Each checkpoint ends with an fsync of the
/// database file, which shares the disk with the commits' fsyncs of the WAL: the pages of
/// 10 ms flush in about a millisecond, while those of 100 ms (copied once however often
/// written) held commits up for 3–9 ms and set the p99 of creates (BENCHMARKS.md).
const INTERVAL: Duration = Duration::from_millis(10);
/// WAL pages at which the writer checkpoints itself (SQLite's default is 1000).
pub const WRITER_AUTOCHECKPOINT_PAGES: u32 = 8000;

/// The writer's side: says that something was committed.
#[derive(Clone)]
pub struct Committed(Sender<()>);

impl Committed {
    pub fn notify(&self) {
        // A full channel already holds a wake-up; a closed one means shutdown.
        let _ = self.0.try_send(());
    }
}

/// Starts the checkpoint thread on `conn`; it ends once every [`Committed`] is dropped.
pub fn start(conn: Connection) -> std::io::Result<Committed> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new()
        .name("sqlite-checkpoint".into())
        .spawn(move || run(conn, rx))?;
    Ok(Committed(tx))
}

fn run(conn: Connection, commits: Receiver<()>) {
    super::background::yield_to_requests();
    while commits.recv().is_ok() {
        // Failures (a full disk, a file that cannot be written) leave the pages in the
        // WAL, where readers still find them; the next commit tries again.
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::debug!(error = %e, "background checkpoint failed");
        }
        std::thread::sleep(INTERVAL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_are_copied_into_the_database_without_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
                 CREATE TABLE t (x BLOB);",
            )
            .unwrap();
        let committed = start(Connection::open(&path).unwrap()).unwrap();
        for _ in 0..50 {
            writer
                .execute("INSERT INTO t VALUES (zeroblob(3000))", [])
                .unwrap();
            committed.notify();
        }
        // The thread wakes for the first commit and again after its pause; the writer
        // never checkpoints, so a growing database file is the thread's doing.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let size = std::fs::metadata(&path).unwrap().len();
            if size > 50 * 3000 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "nothing was checkpointed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(committed);
    }
}
