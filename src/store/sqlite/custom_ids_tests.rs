use super::*;
use crate::domain::{CustomId, InviteId, Status};
use crate::store::sqlite::custom_ids::{log, runs as listed_runs, slice};
use crate::store::sqlite::migrations;
use crate::store::InviteSlice;
use proptest::prelude::*;
use std::collections::BTreeMap;

pub(super) const SITE: &str = "6f1c2a4e-0000-4000-8000-000000000001";
const OTHER_SITE: &str = "6f1c2a4e-0000-4000-8000-000000000002";

pub(super) fn database() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    migrations::apply(&mut conn).unwrap();
    for site in [SITE, OTHER_SITE] {
        conn.execute(
            "INSERT INTO sites (site_id, name, created_at) VALUES (?1, 'n', 1)",
            [site],
        )
        .unwrap();
    }
    conn
}

/// A database as its first `applied` migrations left it, with [`SITE`]; the test
/// applies the rest.
pub(super) fn database_at(applied: usize) -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    let tx = conn.transaction().unwrap();
    for sql in &migrations::MIGRATIONS[..applied] {
        tx.execute_batch(sql).unwrap();
    }
    tx.pragma_update(None, "user_version", applied).unwrap();
    tx.commit().unwrap();
    conn.execute(
        "INSERT INTO sites (site_id, name, created_at) VALUES (?1, 'n', 1)",
        [SITE],
    )
    .unwrap();
    conn
}

/// Small runs and small steps, so that a few hundred invites go through every step and
/// merges take many batches.
pub(super) const SMALL: Sizes = Sizes {
    flush_at: 8,
    fanout: 3,
    moves_per_job: 1,
    step: 3,
};

pub(super) fn upkeep() -> Upkeep {
    Upkeep::with_sizes(SMALL)
}

/// Creates invite number `n` (ids in creation order), with a customId unless `None`.
pub(super) fn create(conn: &Connection, site: &str, n: i64, custom_id: Option<&str>) -> String {
    let invite = InviteId::generate(1_700_000_000_000 + n);
    store(conn, site, &invite, n, custom_id);
    invite.as_str().to_owned()
}

/// Stores invite `invite` as the writer does: its log entry (if it is not past the
/// mark), then its row.
pub(super) fn store(
    conn: &Connection,
    site: &str,
    invite: &InviteId,
    n: i64,
    custom_id: Option<&str>,
) {
    if let Some(c) = custom_id {
        let c = CustomId::parse(c.to_owned()).unwrap();
        log(conn, invite, site, &c, 1_700_000_000 + n / 10).unwrap();
    }
    conn.execute(
        "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5)",
        params![
            invite.as_str(),
            site,
            custom_id,
            1_700_000_000 + n / 10,
            1_800_000_000
        ],
    )
    .unwrap();
}

/// One group commit's worth of upkeep, committed.
pub(super) fn batch(conn: &Connection, upkeep: &mut Upkeep, jobs: usize) {
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    upkeep.run(conn, jobs);
    conn.execute_batch("COMMIT").unwrap();
}

/// Where each invite's entry is: (invite id → places it appears), over the fresh
/// invites, the log and the runs.
pub(super) fn places(conn: &Connection) -> BTreeMap<String, Vec<String>> {
    let mut at: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT invite_id, 'log' FROM custom_id_log
                 UNION ALL SELECT invite_id, 'run ' || run FROM custom_id_runs
                 UNION ALL SELECT invite_id, 'fresh' FROM invites i
                 WHERE {} AND custom_id IS NOT NULL",
            crate::store::sqlite::custom_ids::fresh("i.invite_id")
        ))
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap();
    for row in rows {
        let (id, place) = row.unwrap();
        at.entry(id).or_default().push(place);
    }
    at
}

fn with_custom_id(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT invite_id FROM invites WHERE custom_id IS NOT NULL ORDER BY 1")
        .unwrap();
    let ids = stmt.query_map([], |r| r.get(0)).unwrap();
    ids.map(Result::unwrap).collect()
}

/// Every invite with a customId has its entry in exactly one place, and nothing else has.
pub(super) fn assert_each_entry_once(conn: &Connection) {
    let at = places(conn);
    for (id, places) in &at {
        assert_eq!(places.len(), 1, "{id} is in {places:?}");
    }
    assert_eq!(at.keys().cloned().collect::<Vec<_>>(), with_custom_id(conn));
    // Every run holding entries is listed, so lookups read it.
    let unlisted: i64 = conn
        .query_row(
            "SELECT count(*) FROM custom_id_runs WHERE run NOT IN (SELECT run FROM custom_id_run_list)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unlisted, 0);
}

pub(super) fn runs(conn: &Connection) -> Vec<(i64, i64)> {
    let mut stmt = conn
        .prepare(
            "SELECT l.run, (SELECT count(*) FROM custom_id_runs r WHERE r.run = l.run)
             FROM custom_id_run_list l ORDER BY l.run",
        )
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

/// What a slice of `custom_id` must find, straight from `invites`.
pub(super) fn expected(
    conn: &Connection,
    site: &str,
    custom_id: &str,
    limit: usize,
) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT invite_id FROM invites WHERE site_id = ?1 AND custom_id = ?2
             ORDER BY created_at DESC, invite_id DESC LIMIT ?3",
        )
        .unwrap();
    let ids = stmt
        .query_map(params![site, custom_id, limit as i64], |r| r.get(0))
        .unwrap();
    ids.map(Result::unwrap).collect()
}

pub(super) fn found(conn: &Connection, site: &str, custom_id: &str, limit: usize) -> Vec<String> {
    let s = InviteSlice {
        stored: Status::Pending,
        custom_id: Some(CustomId::parse(custom_id.to_owned()).unwrap()),
        expires: 0..i64::MAX,
        created_from: 0,
        before: (i64::MAX, String::new()),
        limit,
    };
    slice(conn, &listed_runs(conn).unwrap(), site, &s, custom_id)
        .unwrap()
        .into_iter()
        .map(|r| r.id.as_str().to_owned())
        .collect()
}

#[test]
fn a_create_writes_nothing_but_its_invite_and_is_found_past_the_mark() {
    let conn = database();
    let a = create(&conn, SITE, 1, Some("user-1"));
    create(&conn, SITE, 2, None);
    assert_eq!(
        places(&conn).into_iter().collect::<Vec<_>>(),
        [(a.clone(), vec!["fresh".to_owned()])]
    );
    assert_eq!(found(&conn, SITE, "user-1", 5), [a]);
}

#[test]
fn fresh_invites_move_into_sorted_runs_and_runs_of_a_tier_merge_into_one() {
    let conn = database();
    let mut upkeep = upkeep();
    for n in 0..400 {
        create(&conn, SITE, n, Some(&format!("user-{}", (n * 7919) % 97)));
        if n % 5 == 4 {
            batch(&conn, &mut upkeep, 5);
            assert_each_entry_once(&conn);
        }
    }
    // Batches without creates finish the merges under way, a few entries each.
    for _ in 0..2000 {
        batch(&conn, &mut upkeep, 1);
    }
    assert_each_entry_once(&conn);
    let runs = runs(&conn);
    // Flushes of 8 merged by threes: fewer than three runs per tier are left.
    let mut per_tier = BTreeMap::new();
    for (_, entries) in &runs {
        *per_tier.entry(SMALL.tier(*entries)).or_insert(0) += 1;
    }
    assert!(per_tier.values().all(|n| *n < 3), "{runs:?}");
    assert!(
        runs.iter().any(|(_, n)| *n >= 72),
        "nothing merged twice: {runs:?}"
    );
    // Within a run, entries were written in its key order: the run's rows are its key
    // range, so reading a run in key order is reading it in the order it was written.
    for custom_id in ["user-0", "user-5", "user-96"] {
        assert_eq!(
            found(&conn, SITE, custom_id, 500),
            expected(&conn, SITE, custom_id, 500)
        );
    }
}

#[test]
fn an_erased_invite_leaves_no_entry_wherever_it_was() {
    let conn = database();
    let mut upkeep = upkeep();
    let mut ids = Vec::new();
    for n in 0..300 {
        ids.push(create(&conn, SITE, n, Some(&format!("user-{}", n % 13))));
        if n % 3 == 0 {
            batch(&conn, &mut upkeep, 3);
        }
        // Erase an older one now and then, wherever upkeep has taken it.
        if n % 7 == 6 {
            let victim = &ids[(n as usize * 31) % ids.len()];
            conn.execute("DELETE FROM invites WHERE invite_id = ?1", [victim])
                .unwrap();
            assert!(!places(&conn).contains_key(victim.as_str()));
        }
        assert_each_entry_once(&conn);
    }
}

#[test]
fn forgetting_the_work_under_way_loses_and_duplicates_nothing() {
    let conn = database();
    let mut upkeep = upkeep();
    for n in 0..300 {
        create(&conn, SITE, n, Some(&format!("user-{}", n % 11)));
        batch(&conn, &mut upkeep, 1);
        if n % 17 == 0 {
            // As after a restart or a failed commit: the half-written run stays a run.
            upkeep.forget();
        }
        assert_each_entry_once(&conn);
    }
    // A batch that rolls back after its upkeep ran: the writer forgets, nothing is lost.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    upkeep.run(&conn, 50);
    conn.execute_batch("ROLLBACK").unwrap();
    upkeep.forget();
    for _ in 0..100 {
        batch(&conn, &mut upkeep, 2);
        assert_each_entry_once(&conn);
    }
    assert_eq!(
        found(&conn, SITE, "user-3", 100),
        expected(&conn, SITE, "user-3", 100)
    );
}

#[test]
fn a_lookup_sees_only_its_site() {
    let conn = database();
    let mut upkeep = upkeep();
    for n in 0..100 {
        create(
            &conn,
            if n % 2 == 0 { SITE } else { OTHER_SITE },
            n,
            Some("same"),
        );
        batch(&conn, &mut upkeep, 1);
    }
    let mine = found(&conn, SITE, "same", 500);
    assert_eq!(mine.len(), 50);
    assert_eq!(mine, expected(&conn, SITE, "same", 500));
}

#[test]
fn the_invites_stored_before_become_the_first_run_in_order() {
    let mut conn = database_at(11);
    for n in 0..20 {
        let custom_id = (n % 3 != 0).then(|| format!("user-{}", 20 - n));
        conn.execute(
            "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
             VALUES (?1, ?2, ?3, 'pending', ?4, 1800000000)",
            params![InviteId::generate(n).as_str(), SITE, custom_id, n],
        )
        .unwrap();
    }
    migrations::apply(&mut conn).unwrap();
    assert_eq!(runs(&conn), [(1, 13)]);
    assert_each_entry_once(&conn);
    let in_run: Vec<(String, String)> = conn
        .prepare("SELECT custom_id, invite_id FROM custom_id_runs WHERE run = 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut sorted = in_run.clone();
    sorted.sort();
    assert_eq!(in_run, sorted);
    assert_eq!(
        found(&conn, SITE, "user-19", 9),
        expected(&conn, SITE, "user-19", 9)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the order of creates, erasures and upkeep, a customId's slice is what a
    /// scan of `invites` finds, page limit included.
    #[test]
    fn a_slice_finds_what_a_scan_of_the_invites_finds(
        ops in proptest::collection::vec((0u8..12, 0u8..6, 1usize..12), 1..160),
    ) {
        let conn = database();
        let mut upkeep = upkeep();
        let mut ids = Vec::new();
        // Ids made and not yet stored, as creates queued behind a batch: some are
        // stored after a flush has passed them.
        let mut held = Vec::new();
        for (n, (op, user, k)) in ops.into_iter().enumerate() {
            let custom_id = format!("user-{user}");
            match op {
                0..=5 => ids.push(create(&conn, SITE, n as i64, Some(&custom_id))),
                10 => held.push(InviteId::generate(1_700_000_000_000 + n as i64)),
                11 if !held.is_empty() => {
                    let id = held.remove(0);
                    store(&conn, SITE, &id, n as i64, Some(&custom_id));
                    ids.push(id.as_str().to_owned());
                }
                6 | 7 => batch(&conn, &mut upkeep, k),
                8 if !ids.is_empty() => {
                    let victim = ids.remove(k % ids.len());
                    conn.execute("DELETE FROM invites WHERE invite_id = ?1", [victim]).unwrap();
                }
                _ => upkeep.forget(),
            }
            prop_assert_eq!(found(&conn, SITE, &custom_id, k), expected(&conn, SITE, &custom_id, k));
        }
        assert_each_entry_once(&conn);
    }
}

#[test]
fn tiers_grow_by_the_fanout() {
    let s = Sizes::default();
    assert_eq!(s.tier(0), 0);
    assert_eq!(s.tier((FLUSH_AT * FANOUT) as i64 - 1), 0);
    assert_eq!(s.tier((FLUSH_AT * FANOUT) as i64), 1);
    assert_eq!(s.tier((FLUSH_AT * FANOUT * FANOUT) as i64), 2);
    assert_eq!(s.tier(i64::MAX), 16);
}

/// Runs of one customId's creates hold different ranges of it: a merge step still moves
/// a whole budget (from the oldest run), not a share of it per run.
#[test]
fn a_merge_of_runs_holding_different_ranges_moves_a_budget_per_step() {
    let conn = database();
    let mut upkeep = Upkeep::with_sizes(Sizes {
        flush_at: 100,
        fanout: 3,
        moves_per_job: 1,
        step: 1_000_000,
    });
    for n in 0..300 {
        create(&conn, SITE, n, Some("same"));
        if n % 100 == 99 {
            batch(&conn, &mut upkeep, 100);
        }
    }
    // Three flushed runs, and the merge's target (chosen, not yet moved into).
    assert_eq!(
        runs(&conn).iter().map(|r| r.1).collect::<Vec<_>>(),
        [100, 100, 100, 0]
    );
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert_eq!(merge_step(&conn, &mut upkeep.merges[0], 30).unwrap(), 30);
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(
        runs(&conn).iter().map(|r| r.1).collect::<Vec<_>>(),
        [70, 100, 100, 30]
    );
    assert_each_entry_once(&conn);
}
