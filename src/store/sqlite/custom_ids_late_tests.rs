//! The entries a create logs because its id is not past the mark ([`log`]): an id made
//! before a flush and stored after it, a clock set back, and a database migrated with a
//! log of the old kind (every create logged).

use super::tests::*;
use super::*;
use crate::domain::InviteId;
use crate::store::sqlite::migrations;

/// Every entry is in one place, and a lookup of `custom_id` finds what a scan finds.
fn assert_found_once(conn: &Connection, custom_id: &str) {
    assert_each_entry_once(conn);
    assert_eq!(
        found(conn, SITE, custom_id, 50),
        expected(conn, SITE, custom_id, 50)
    );
}

/// An id made before a flush and stored after it is not past the mark: its entry goes
/// to the log, is found there, and the next flush takes it.
#[test]
fn an_invite_stored_after_a_flush_that_passed_its_id_is_logged_and_flushed() {
    let conn = database();
    let mut upkeep = upkeep();
    // Made now, stored after the flush below (as a create queued behind a batch).
    let late = InviteId::generate(1_700_000_000_000);
    for n in 1..=SMALL.flush_at as i64 {
        create(&conn, SITE, n, Some("user-1"));
    }
    batch(&conn, &mut upkeep, SMALL.flush_at);
    assert_eq!(runs(&conn).len(), 1, "the fresh invites were flushed");
    store(&conn, SITE, &late, 0, Some("user-1"));
    assert_eq!(places(&conn)[late.as_str()], ["log"]);
    assert_found_once(&conn, "user-1");
    for n in 100..100 + SMALL.flush_at as i64 {
        create(&conn, SITE, n, Some("user-2"));
    }
    batch(&conn, &mut upkeep, SMALL.flush_at);
    assert!(places(&conn)[late.as_str()][0].starts_with("run "));
    assert_found_once(&conn, "user-1");
}

/// A log that fills without fresh invites beside it (the clock set back, so that every
/// new id sorts before the mark) is flushed on its own.
#[test]
fn a_log_that_fills_on_its_own_is_flushed() {
    let conn = database();
    let mut upkeep = upkeep();
    let early: Vec<InviteId> = (0..2 * SMALL.flush_at as i64)
        .map(|n| InviteId::generate(1_600_000_000_000 + n))
        .collect();
    for n in 1..=SMALL.flush_at as i64 {
        create(&conn, SITE, n, Some("user-1"));
    }
    batch(&conn, &mut upkeep, SMALL.flush_at);
    for (n, id) in early.iter().enumerate() {
        store(&conn, SITE, id, n as i64, Some("user-3"));
    }
    batch(&conn, &mut upkeep, early.len());
    let logged = places(&conn).values().filter(|p| p[0] == "log").count();
    assert_eq!(logged, 0, "the log was flushed");
    assert_found_once(&conn, "user-3");
}

/// Migration 13 on a database whose log holds every create since the last flush (the
/// old way): the mark starts past them all, so they stay in the log, are found there
/// once, and the next flush takes them with the fresh invites after them.
#[test]
fn a_log_of_the_old_kind_is_kept_found_and_flushed_after_migration_13() {
    let mut conn = database_at(12);
    let mut old = Vec::new();
    for n in 0..5 {
        let id = InviteId::generate(1_700_000_000_000 + n);
        conn.execute(
            "INSERT INTO custom_id_log (invite_id, site_id, custom_id, created_at)
             VALUES (?1, ?2, 'user-1', ?3)",
            params![id.as_str(), SITE, 1_700_000_000 + n / 10],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
             VALUES (?1, ?2, 'user-1', 'pending', ?3, 1800000000)",
            params![id.as_str(), SITE, 1_700_000_000 + n / 10],
        )
        .unwrap();
        old.push(id.as_str().to_owned());
    }
    migrations::apply(&mut conn).unwrap();
    let at = places(&conn);
    assert!(old.iter().all(|id| at[id.as_str()] == ["log"]), "{at:?}");
    assert_found_once(&conn, "user-1");
    let mut upkeep = upkeep();
    for n in 10..10 + SMALL.flush_at as i64 {
        create(&conn, SITE, n, Some("user-1"));
    }
    batch(&conn, &mut upkeep, SMALL.flush_at);
    assert_eq!(runs(&conn), [(1, 5 + SMALL.flush_at as i64)]);
    assert_found_once(&conn, "user-1");
}
