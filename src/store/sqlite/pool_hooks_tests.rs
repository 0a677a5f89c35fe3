//! What the writer pool hands its batch hooks: the notes of the jobs kept, in the
//! batch's transaction, and whether it committed (the kit is in `pool_tests.rs`).

use super::tests::{insert, one_batch, start_recording, wal_writer, Pool, Seen, Tx};
use super::*;
use std::sync::Arc;

/// The engine hands its hooks, before the commit and in its transaction, the notes of
/// the jobs it keeps, in order; a job that fails, in a savepoint or not, takes its notes
/// back with its changes. Then it tells them the batch committed.
#[tokio::test]
async fn the_hooks_get_the_notes_of_the_jobs_kept_and_hear_of_the_commit() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE u (x TEXT PRIMARY KEY);");
    let (pool, recorder) = start_recording(writer, &path);
    let jobs = [("a", true), ("b", true), ("c", false), ("a", false)];
    let results = one_batch(&pool, jobs, |pool, (x, guarded)| async move {
        // Each notes, then inserts `x`: the second "a" fails on the key.
        let job = move |tx: &mut Tx<'_>| {
            tx.note(x);
            tx.execute("INSERT INTO u (x) VALUES (?1)", [x])?;
            Ok(())
        };
        if guarded {
            pool.write(job).await
        } else {
            pool.write_one_statement(job).await
        }
    })
    .await;
    let ok: Vec<bool> = results.iter().map(Result::is_ok).collect();
    assert_eq!(ok, [true, true, true, false]);
    assert_eq!(
        recorder.seen(),
        [
            Seen::Notes(vec![]),
            Seen::Ended(true),
            Seen::Notes(vec!["a", "b", "c"]),
            Seen::Ended(true)
        ]
    );
    let noted = |pool: Arc<Pool>| async move {
        pool.read(|conn| {
            Ok(
                conn.query_row("SELECT group_concat(note) FROM noted", [], |r| {
                    r.get::<_, Option<String>>(0)
                })?,
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(noted(pool.clone()).await.as_deref(), Some("a,b,c"));

    // A job whose savepoint is rolled back takes its notes with it.
    let failed = pool
        .write(|tx: &mut Tx<'_>| {
            tx.note("d");
            tx.execute("INSERT INTO u (x) VALUES ('d')", [])?;
            tx.execute("INSERT INTO u (x) VALUES ('d')", [])?;
            Ok(())
        })
        .await;
    assert!(failed.is_err());
    assert_eq!(recorder.seen(), [Seen::Notes(vec![]), Seen::Ended(true)]);
}

/// Hooks that fail before the commit fail the whole batch: nothing of its jobs or of
/// the hooks' own writes is stored, every job hears the error, and the hooks hear that
/// it did not commit. The next batch commits as usual.
#[tokio::test]
async fn hooks_that_fail_fail_the_batch_and_hear_it_did_not_commit() {
    let (_dir, path, writer) = wal_writer("CREATE TABLE t (x BLOB);");
    let (pool, recorder) = start_recording(writer, &path);
    let results = one_batch(&pool, ["ok", "fail"], |pool, note| async move {
        pool.write(move |tx: &mut Tx<'_>| {
            tx.note(note);
            tx.execute("INSERT INTO t (x) VALUES (1)", [])?;
            Ok(())
        })
        .await
    })
    .await;
    for result in &results {
        assert!(
            matches!(result, Err(StoreError::Unavailable(_))),
            "{result:?}"
        );
    }
    let stored = |pool: Arc<Pool>| async move {
        pool.read(|conn| {
            Ok(conn.query_row(
                "SELECT (SELECT count(*) FROM t) + (SELECT count(*) FROM noted)",
                [],
                |r| r.get::<_, i64>(0),
            )?)
        })
        .await
        .unwrap()
    };
    assert_eq!(stored(pool.clone()).await, 0);
    assert_eq!(
        recorder.seen(),
        [
            Seen::Notes(vec![]),
            Seen::Ended(true),
            Seen::Notes(vec!["ok", "fail"]),
            Seen::Ended(false)
        ]
    );
    pool.write(insert(1)).await.unwrap();
    assert_eq!(stored(pool.clone()).await, 1);
    assert_eq!(recorder.seen(), [Seen::Notes(vec![]), Seen::Ended(true)]);
}
