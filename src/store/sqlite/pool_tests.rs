//! The writer pool under faults and mixed batches, with hooks that only record; the kit
//! of these tests and of `pool_hooks_tests.rs` (what the hooks are handed).

use super::*;
use std::sync::Arc;
use std::time::Duration;

/// What [`Recorder`] saw of one batch.
#[derive(Debug, PartialEq)]
pub(super) enum Seen {
    /// Before the commit: the notes handed over.
    Notes(Vec<&'static str>),
    /// After it: whether it committed.
    Ended(bool),
}

/// Hooks that know nothing of agegate: they record what the engine hands them, write
/// each note into `noted` in the batch's transaction, and fail the batch on a note
/// `"fail"` (after writing).
#[derive(Clone, Default)]
pub(super) struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    pub(super) fn seen(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl BatchHooks for Recorder {
    type Note = &'static str;

    fn before_commit(&mut self, conn: &Connection, notes: &[&'static str]) -> StoreResult<()> {
        self.0.lock().unwrap().push(Seen::Notes(notes.to_vec()));
        for note in notes {
            conn.execute("INSERT INTO noted (note) VALUES (?1)", [note])?;
        }
        if notes.contains(&"fail") {
            return Err(StoreError::Unavailable("the hook failed".into()));
        }
        Ok(())
    }

    fn after_commit(&mut self, committed: bool) {
        self.0.lock().unwrap().push(Seen::Ended(committed));
    }
}

/// Connection hooks that keep nothing coherent (those are tested in `writer_conn`).
struct Quiet;

impl ConnHooks for Quiet {
    fn attach(&mut self, _: &Connection) -> rusqlite::Result<()> {
        Ok(())
    }
    fn checked(&mut self, _: &Connection, _: Instant, _: bool) -> rusqlite::Result<()> {
        Ok(())
    }
    fn write_lock_taken(&self) {}
    fn batch_ended(&self, _: Option<Instant>) {}
}

pub(super) type Pool = super::Pool<Recorder>;
pub(super) type Tx<'a> = WriteTx<'a, &'static str>;

/// A pool whose writer is `writer`, its other connections on `path`.
fn start(writer: Connection, path: &std::path::Path) -> Arc<Pool> {
    start_recording(writer, path).0
}

/// [`start`], and what its hooks saw.
pub(super) fn start_recording(writer: Connection, path: &std::path::Path) -> (Arc<Pool>, Recorder) {
    let open = || Connection::open(path).unwrap();
    let recorder = Recorder::default();
    let pool = Pool::start(
        Connections {
            writer,
            readers: vec![open()],
            inline: vec![open()],
            checkpointer: open(),
        },
        Quiet,
        recorder.clone(),
    )
    .unwrap();
    (Arc::new(pool), recorder)
}

/// A WAL database in a temporary directory, with `schema` applied: its directory, path
/// and the writer's connection.
pub(super) fn wal_writer(schema: &str) -> (tempfile::TempDir, std::path::PathBuf, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let writer = Connection::open(&path).unwrap();
    writer.pragma_update(None, "journal_mode", "WAL").unwrap();
    writer.execute_batch(schema).unwrap();
    writer
        .execute_batch("CREATE TABLE noted (note TEXT);")
        .unwrap();
    (dir, path, writer)
}

/// An injected fault: a job that panics on the writer's thread. The writer stops for
/// good; the jobs waiting behind it and every later write fail at once (503 at the edge)
/// instead of waiting for ever, and nothing of the panicking batch is committed.
#[tokio::test]
async fn a_panic_in_the_writer_fails_queued_and_later_writes_instead_of_hanging() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE t (x INTEGER);");
    let pool = start(writer, &path);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let panicking = tokio::spawn({
        let pool = pool.clone();
        async move {
            pool.write(move |conn| -> StoreResult<()> {
                conn.execute("INSERT INTO t VALUES (1)", [])?;
                let _ = started_tx.send(());
                let _ = go_rx.recv();
                panic!("injected fault");
            })
            .await
        }
    });
    started_rx.await.unwrap();
    let queued_job = tokio::spawn({
        let pool = pool.clone();
        async move {
            pool.write(|conn| Ok(conn.execute("INSERT INTO t VALUES (2)", [])?))
                .await
        }
    });
    queued(&pool, 1).await;
    go_tx.send(()).unwrap();
    let within = Duration::from_secs(5);
    let panicked = tokio::time::timeout(within, panicking)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(panicked, Err(StoreError::Closed)), "{panicked:?}");
    let waited = tokio::time::timeout(within, queued_job)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(waited, Err(StoreError::Closed)), "{waited:?}");
    let later = tokio::time::timeout(within, pool.write(|_| Ok(())))
        .await
        .unwrap();
    assert!(matches!(later, Err(StoreError::Closed)), "{later:?}");
    let other = Connection::open(&path).unwrap();
    let rows: i64 = other
        .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0, "nothing of the batch was committed");
}

/// Submits one job per input through `submit`, all in one batch of the writer, in this
/// order (the writer is held busy until every job is queued); their results, in order.
pub(super) async fn one_batch<I, F, Fut, const N: usize>(
    pool: &Arc<Pool>,
    inputs: [I; N],
    submit: F,
) -> Vec<StoreResult<()>>
where
    I: Send + 'static,
    F: Fn(Arc<Pool>, I) -> Fut,
    Fut: std::future::Future<Output = StoreResult<()>> + Send + 'static,
{
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let hold = tokio::spawn({
        let pool = pool.clone();
        async move {
            pool.write(move |_| {
                let _ = started_tx.send(());
                let _ = go_rx.recv();
                Ok(())
            })
            .await
        }
    });
    started_rx.await.unwrap();
    let mut jobs = Vec::new();
    for (i, input) in inputs.into_iter().enumerate() {
        jobs.push(tokio::spawn(submit(pool.clone(), input)));
        queued(pool, i + 1).await;
    }
    go_tx.send(()).unwrap();
    hold.await.unwrap().unwrap();
    let mut results = Vec::new();
    for job in jobs {
        results.push(job.await.unwrap());
    }
    results
}

/// Waits until `n` jobs wait for the writer.
async fn queued(pool: &Pool, n: usize) {
    for _ in 0..500 {
        if pool.writer.len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{n} jobs did not reach the writer");
}

pub(super) fn insert(blob_len: usize) -> impl FnOnce(&mut Tx<'_>) -> StoreResult<()> + Send {
    move |conn: &mut Tx<'_>| {
        conn.execute("INSERT INTO t (x) VALUES (zeroblob(?1))", [blob_len])?;
        Ok(())
    }
}

#[tokio::test]
async fn a_batch_sqlite_rolls_back_itself_is_unavailable_stores_nothing_and_the_writer_recovers() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE t (x BLOB);");
    // A full disk, for this connection: a statement that needs more pages fails with
    // SQLITE_FULL, and SQLite then rolls back the whole transaction.
    let pages: i64 = writer
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    writer
        .pragma_update(None, "max_page_count", pages + 4)
        .unwrap();
    let pool = start(writer, &path);

    let results = one_batch(&pool, [10, 100_000, 10], |pool, len| async move {
        pool.write(insert(len)).await
    })
    .await;
    for result in results {
        assert!(
            matches!(result, Err(StoreError::Unavailable(_))),
            "{result:?}"
        );
    }
    let count = |pool: Arc<Pool>| async move {
        pool.read(|conn| Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0))?))
            .await
            .unwrap()
    };
    assert_eq!(
        count(pool.clone()).await,
        0,
        "nothing of the batch is stored"
    );

    // The disk has room again: the writer carries on.
    pool.write(|conn| {
        conn.pragma_update(None, "max_page_count", 1_000_000)?;
        Ok(())
    })
    .await
    .unwrap();
    pool.write(insert(100_000)).await.unwrap();
    assert_eq!(count(pool.clone()).await, 1);
}

/// A job without a savepoint that fails (here: a constraint) undoes only its own
/// statement; the other jobs of its batch are stored.
#[tokio::test]
async fn a_failed_one_statement_job_leaves_its_batch_intact() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE u (x INTEGER PRIMARY KEY);");
    let pool = start(writer, &path);
    let results = one_batch(&pool, [1, 1, 2], |pool, x| async move {
        pool.write_one_statement(move |conn| {
            conn.execute("INSERT INTO u (x) VALUES (?1)", [x])?;
            Ok(())
        })
        .await
    })
    .await;
    let results: Vec<bool> = results.iter().map(Result::is_ok).collect();
    assert_eq!(results, [true, false, true]);
    let stored = pool
        .read(|conn| {
            Ok(conn.query_row("SELECT group_concat(x) FROM u", [], |r| {
                r.get::<_, String>(0)
            })?)
        })
        .await
        .unwrap();
    assert_eq!(stored, "1,2");
}

/// Lookups share a read transaction on the writer's connection between batches; a
/// write answered by the pool is seen by the next lookup, however recent the snapshot.
#[tokio::test]
async fn a_lookup_sees_every_write_the_pool_has_answered() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE t (x BLOB);");
    let pool = start(writer, &path);
    let count = |conn: &Connection| {
        Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0))?)
    };
    for stored in 0..20 {
        assert_eq!(
            pool.read_now(Snapshot::Shared, count).await.unwrap(),
            stored
        );
        pool.write(insert(1)).await.unwrap();
    }
    assert_eq!(pool.read_now(Snapshot::Shared, count).await.unwrap(), 20);
}
