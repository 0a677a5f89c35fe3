//! The writer's connection: shared snapshots, their bounds, and what its hooks hear (with
//! hooks that only record; the store's own are tested in `status_coherence`).

use super::*;
use std::sync::{Arc, Mutex};

/// What [`Recorder`] heard.
#[derive(Debug, PartialEq)]
enum Heard {
    Attached,
    /// A transaction began; whether another process had committed.
    Checked(bool),
    LockTaken,
    /// A batch ended; whether the instant the lock was last held is known.
    Ended(bool),
}

/// Connection hooks that know nothing of agegate: they record what they hear.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Heard>>>);

impl Recorder {
    fn heard(&self) -> Vec<Heard> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    fn push(&self, heard: Heard) {
        self.0.lock().unwrap().push(heard);
    }
}

impl ConnHooks for Recorder {
    fn attach(&mut self, _: &Connection) -> rusqlite::Result<()> {
        self.push(Heard::Attached);
        Ok(())
    }
    fn checked(&mut self, conn: &Connection, _: Instant, others: bool) -> rusqlite::Result<()> {
        assert!(!conn.is_autocommit(), "in the transaction begun");
        self.push(Heard::Checked(others));
        Ok(())
    }
    fn write_lock_taken(&self) {
        self.push(Heard::LockTaken);
    }
    fn batch_ended(&self, held_at: Option<Instant>) {
        self.push(Heard::Ended(held_at.is_some()));
    }
}

/// A WAL database with a table `t`; the writer's connection and another process's.
fn open() -> (tempfile::TempDir, WriterConn, Connection) {
    open_with(Box::new(Recorder::default()))
}

/// [`open`], the writer's connection with `hooks`.
fn open_with(hooks: Box<dyn ConnHooks>) -> (tempfile::TempDir, WriterConn, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let writer = Connection::open(&path).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);")
        .unwrap();
    writer.busy_timeout(BUSY_TIMEOUT).unwrap();
    let other = Connection::open(&path).unwrap();
    let writer =
        WriterConn::with_max_age(writer, hooks, Box::new(|| {}), Duration::from_secs(3600))
            .unwrap();
    (dir, writer, other)
}

/// [`open`], with the recorder its hooks are.
fn open_recorded() -> (tempfile::TempDir, WriterConn, Connection, Recorder) {
    let recorder = Recorder::default();
    let (dir, writer, other) = open_with(Box::new(recorder.clone()));
    (dir, writer, other, recorder)
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

#[test]
fn the_hooks_hear_of_every_transaction_begun_whether_others_committed_and_every_batch() {
    let (_dir, mut writer, other, recorder) = open_recorded();
    writer.read(Snapshot::Shared, &count).unwrap().unwrap();
    writer.read(Snapshot::Shared, &count).unwrap().unwrap();
    assert_eq!(
        recorder.heard(),
        [Heard::Attached, Heard::Checked(true)],
        "once per transaction; the first counts as another's commit"
    );

    let begin = |conn: &Connection| -> StoreResult<()> {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    };
    writer.end_snapshot();
    writer.begin_batch(begin).unwrap();
    writer
        .conn
        .execute_batch("INSERT INTO t VALUES (1)")
        .unwrap();
    let held_at = Instant::now();
    writer.conn.execute_batch("COMMIT").unwrap();
    writer.end_batch(Some(held_at));
    writer.read(Snapshot::Latest, &count).unwrap().unwrap();
    assert_eq!(
        recorder.heard(),
        [
            Heard::Checked(false),
            Heard::LockTaken,
            Heard::Ended(true),
            Heard::Checked(false),
        ],
        "the writer's own commit is no other's"
    );

    other.execute("INSERT INTO t VALUES (2)", []).unwrap();
    writer.end_snapshot();
    writer.begin_batch(begin).unwrap();
    writer.conn.execute_batch("ROLLBACK").unwrap();
    writer.end_batch(None);
    assert_eq!(
        recorder.heard(),
        [Heard::Checked(true), Heard::LockTaken, Heard::Ended(false)]
    );
}
