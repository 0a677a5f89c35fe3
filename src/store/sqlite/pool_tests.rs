//! The writer pool under faults and mixed batches.

use super::*;
use std::sync::Arc;
use std::time::Duration;

/// A pool whose writer is `writer`, its other connections on `path`.
fn start(writer: Connection, path: &std::path::Path) -> Arc<Pool> {
    let open = || Connection::open(path).unwrap();
    Arc::new(
        Pool::start(Connections {
            writer,
            readers: vec![open()],
            inline: vec![open()],
            checkpointer: open(),
        })
        .unwrap(),
    )
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

fn insert(blob_len: usize) -> impl FnOnce(&Connection) -> StoreResult<()> + Send {
    move |conn| {
        conn.execute("INSERT INTO t (x) VALUES (zeroblob(?1))", [blob_len])?;
        Ok(())
    }
}

#[tokio::test]
async fn a_batch_sqlite_rolls_back_itself_is_unavailable_stores_nothing_and_the_writer_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let writer = Connection::open(&path).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x BLOB);")
        .unwrap();
    // A full disk, for this connection: a statement that needs more pages fails with
    // SQLITE_FULL, and SQLite then rolls back the whole transaction.
    let pages: i64 = writer
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    writer
        .pragma_update(None, "max_page_count", pages + 4)
        .unwrap();
    let pool = start(writer, &path);

    // Hold the writer so that the next three jobs form one batch, in this order.
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
    for (i, len) in [10, 100_000, 10].into_iter().enumerate() {
        let writing = pool.clone();
        jobs.push(tokio::spawn(
            async move { writing.write(insert(len)).await },
        ));
        queued(&pool, i + 1).await;
    }
    go_tx.send(()).unwrap();
    hold.await.unwrap().unwrap();
    for job in jobs {
        let result = job.await.unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let writer = Connection::open(&path).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE u (x INTEGER PRIMARY KEY);")
        .unwrap();
    let pool = start(writer, &path);
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
    for (i, x) in [1, 1, 2].into_iter().enumerate() {
        let writing = pool.clone();
        jobs.push(tokio::spawn(async move {
            writing
                .write_one_statement(move |conn| {
                    conn.execute("INSERT INTO u (x) VALUES (?1)", [x])?;
                    Ok(())
                })
                .await
        }));
        queued(&pool, i + 1).await;
    }
    go_tx.send(()).unwrap();
    hold.await.unwrap().unwrap();
    let results: Vec<bool> = futures_join(jobs).await;
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

async fn futures_join(jobs: Vec<tokio::task::JoinHandle<StoreResult<()>>>) -> Vec<bool> {
    let mut out = Vec::new();
    for job in jobs {
        out.push(job.await.unwrap().is_ok());
    }
    out
}
