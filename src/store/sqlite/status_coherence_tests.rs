//! The status cache's coherence with the writer's connection: eviction by trigger and
//! other processes' changes found by `invite_changes.generation`.

use super::super::connect::BUSY_TIMEOUT;
use super::super::writer_conn::{Snapshot, WriterConn};
use super::*;
use crate::store::StoreResult;
use std::time::Duration;

/// A WAL database with agegate's schema and a table `t`; the writer's connection with the
/// status cache's hooks, another process's connection, and the cache.
fn open() -> (tempfile::TempDir, WriterConn, Connection, Arc<InviteCache>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let mut writer = Connection::open(&path).unwrap();
    writer
        .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);")
        .unwrap();
    super::super::migrations::apply(&mut writer).unwrap();
    writer.busy_timeout(BUSY_TIMEOUT).unwrap();
    let other = Connection::open(&path).unwrap();
    let cache = Arc::new(InviteCache::new(16));
    let writer = WriterConn::with_max_age(
        writer,
        Box::new(StatusCoherence::new(cache.clone())),
        Box::new(|| {}),
        Duration::from_secs(3600),
    )
    .unwrap();
    (dir, writer, other, cache)
}

fn count(conn: &Connection) -> StoreResult<i64> {
    Ok(conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?)
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

/// A pending invite of a new site, committed by `conn`: the site and the invite's record.
fn stored_invite(conn: &Connection) -> (crate::domain::SiteId, crate::store::InviteRecord) {
    use crate::domain::invite::Status;
    use crate::domain::{InviteId, SiteId};
    let site = SiteId::generate();
    let record = crate::store::InviteRecord {
        id: InviteId::generate(1_700_000_000_000),
        site_id: site,
        custom_id: None,
        stored_status: Status::Pending,
        created_at: 1,
        expires_at: 86_401,
        method: None,
    };
    store_invite(conn, record.id.as_str(), &site.to_string());
    (site, record)
}

#[test]
fn another_processes_change_of_an_invite_empties_the_invite_cache_and_nothing_else_does() {
    use crate::domain::SiteId;
    use crate::store::invite_cache::Lookup;
    let (_dir, mut writer, other, cache) = open();
    let (site, record) = stored_invite(&other);
    // Looked up at `at`, the instant before the writer's last read: that read's check
    // came after it, so the cache counts as fresh however slow the machine is, and only
    // an eviction makes a miss.
    let kept = |cache: &InviteCache, at: Instant| {
        matches!(cache.lookup(record.site_id, &record.id, at), Lookup::Hit(_))
    };
    let fill = |cache: &InviteCache, at: Instant| {
        let Lookup::Miss(ticket) = cache.lookup(site, &record.id, at) else {
            panic!("not kept")
        };
        cache.fill(ticket, record.clone());
        assert!(kept(cache, at));
    };
    let mut at = Instant::now();
    assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 0);
    fill(&cache, at);

    writer.end_snapshot();
    writer
        .conn
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); COMMIT;")
        .unwrap();
    at = Instant::now();
    assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 1);
    assert!(
        kept(&cache, at),
        "the writer's own commit changes no data_version"
    );

    other.execute("INSERT INTO t VALUES (2)", []).unwrap();
    other.execute("PRAGMA user_version = 7", []).unwrap();
    store_invite(&other, "another", &SiteId::generate().to_string());
    at = Instant::now();
    assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
    assert!(
        kept(&cache, at),
        "another process's commits that change no invite keep it"
    );

    other
        .execute(
            "UPDATE invites SET status = 'verified' WHERE invite_id = 'another'",
            [],
        )
        .unwrap();
    at = Instant::now();
    assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
    assert!(
        !kept(&cache, at),
        "another process's change of an invite empties it"
    );
    fill(&cache, at);
    other
        .execute("DELETE FROM invites WHERE invite_id = 'another'", [])
        .unwrap();
    at = Instant::now();
    assert_eq!(writer.read(Snapshot::Latest, &count).unwrap().unwrap(), 2);
    assert!(!kept(&cache, at), "and so does an erasure");
}

#[test]
fn every_change_of_an_invite_on_the_writers_connection_evicts_it() {
    use crate::domain::InviteId;
    use crate::store::invite_cache::Lookup;
    let (_dir, mut writer, _other, cache) = open();
    let site = crate::domain::SiteId::generate();
    let id = InviteId::generate(1_700_000_000_000);
    store_invite(&writer.conn, id.as_str(), &site.to_string());
    let read = |writer: &mut WriterConn| {
        writer.read(Snapshot::Latest, &count).unwrap().unwrap();
    };
    for sql in [
        "UPDATE invites SET status = 'expired' WHERE invite_id = ?1",
        "DELETE FROM invites WHERE invite_id = ?1",
    ] {
        let at = Instant::now();
        read(&mut writer);
        let Lookup::Miss(ticket) = cache.lookup(site, &id, at) else {
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
        assert!(matches!(cache.lookup(site, &id, at), Lookup::Hit(_)));
        writer.end_snapshot();
        writer.conn.execute(sql, [id.as_str()]).unwrap();
        cache.batch_ended();
        assert!(
            matches!(cache.lookup(site, &id, at), Lookup::Miss(_)),
            "{sql}"
        );
    }
}

#[test]
fn a_batch_checks_for_other_processes_commits_when_it_takes_the_write_lock_and_the_cache_serves_reads_until_it_lets_go(
) {
    use crate::store::invite_cache::{Lookup, FRESH_FOR};
    let (_dir, mut writer, other, cache) = open();
    let (site, record) = stored_invite(&other);
    let kept_at = |at: Instant| matches!(cache.lookup(site, &record.id, at), Lookup::Hit(_));
    let begin = |conn: &Connection| -> StoreResult<()> {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    };
    writer.begin_batch(begin).unwrap();
    writer.conn.execute_batch("ROLLBACK").unwrap();
    writer.end_batch(Some(Instant::now()));
    let Lookup::Miss(ticket) = cache.lookup(site, &record.id, Instant::now()) else {
        panic!("kept before it was read")
    };
    cache.fill(ticket, record.clone());

    // Another process changes an invite; the next batch's check finds it.
    other
        .execute("UPDATE invites SET status = 'verified'", [])
        .unwrap();
    writer.begin_batch(begin).unwrap();
    assert!(
        !kept_at(Instant::now()),
        "the batch's check emptied the cache"
    );
    let Lookup::Miss(ticket) = cache.lookup(site, &record.id, Instant::now()) else {
        unreachable!()
    };
    cache.fill(ticket, record.clone());
    // While the batch holds the lock no other process can commit: entries serve reads
    // however long it takes, and for FRESH_FOR after the instant it last held it.
    assert!(kept_at(Instant::now() + 100 * FRESH_FOR));
    let held_at = Instant::now();
    writer.conn.execute_batch("COMMIT").unwrap();
    writer.end_batch(Some(held_at));
    assert!(kept_at(held_at + FRESH_FOR));
    assert!(!kept_at(held_at + 2 * FRESH_FOR));

    // A batch SQLite rolled back on its own lost the lock at an unknown instant.
    writer.begin_batch(begin).unwrap();
    writer.conn.execute_batch("ROLLBACK").unwrap();
    writer.end_batch(None);
    assert!(!kept_at(held_at + 2 * FRESH_FOR));
}
