use super::*;
use crate::domain::invite::Status;

fn record(site: SiteId, stored: Status) -> InviteRecord {
    InviteRecord {
        id: InviteId::generate(1_700_000_000_000),
        site_id: site,
        custom_id: None,
        stored_status: stored,
        created_at: 1_700_000_000,
        expires_at: 1_700_086_400,
        method: None,
    }
}

/// A cache checked for other processes' commits at `at`.
fn checked_cache(capacity: usize, at: Instant) -> InviteCache {
    let cache = InviteCache::new(capacity);
    cache.checked(at);
    cache
}

/// Whether `cache` answers the read of `r`'s invite by `site` at `now` from memory.
fn hits(cache: &InviteCache, site: SiteId, r: &InviteRecord, now: Instant) -> bool {
    matches!(cache.lookup(site, &r.id, now), Lookup::Hit(_))
}

fn ticket(lookup: Lookup) -> Ticket {
    match lookup {
        Lookup::Miss(t) => t,
        Lookup::Hit(r) => panic!("expected a miss, got {r:?}"),
    }
}

#[test]
fn a_record_read_after_a_miss_serves_the_next_read() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let r = record(SiteId::generate(), Status::Pending);
    let t = ticket(cache.lookup(r.site_id, &r.id, now));
    cache.fill(t, r.clone());
    assert_eq!(cache.lookup(r.site_id, &r.id, now), Lookup::Hit(r));
}

#[test]
fn another_sites_read_of_a_kept_invite_misses() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let r = record(SiteId::generate(), Status::Pending);
    cache.fill(ticket(cache.lookup(r.site_id, &r.id, now)), r.clone());
    assert!(!hits(&cache, SiteId::generate(), &r, now));
}

#[test]
fn nothing_is_served_until_the_database_was_checked_for_other_processes_commits() {
    let now = Instant::now();
    let cache = InviteCache::new(8);
    let r = record(SiteId::generate(), Status::Pending);
    cache.fill(ticket(cache.lookup(r.site_id, &r.id, now)), r.clone());
    assert!(!hits(&cache, r.site_id, &r, now));
    cache.checked(now);
    assert_eq!(cache.lookup(r.site_id, &r.id, now), Lookup::Hit(r));
}

#[test]
fn entries_serve_reads_only_for_fresh_for_after_the_last_check() {
    let at = Instant::now();
    let cache = checked_cache(8, at);
    let r = record(SiteId::generate(), Status::Pending);
    cache.fill(ticket(cache.lookup(r.site_id, &r.id, at)), r.clone());
    assert!(hits(&cache, r.site_id, &r, at + FRESH_FOR));
    let late = at + FRESH_FOR + Duration::from_micros(1);
    assert!(!hits(&cache, r.site_id, &r, late));
    // An older check does not move the last one back.
    cache.checked(at - Duration::from_millis(1));
    cache.checked(late);
    assert!(hits(&cache, r.site_id, &r, late));
}

#[test]
fn a_change_removes_the_entry_at_once() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let r = record(SiteId::generate(), Status::Pending);
    cache.fill(ticket(cache.lookup(r.site_id, &r.id, now)), r.clone());
    cache.changing(&r.id);
    assert!(!hits(&cache, r.site_id, &r, now));
}

#[test]
fn a_read_that_missed_before_a_batch_changed_invites_is_not_kept() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let old = record(SiteId::generate(), Status::Pending);
    let t = ticket(cache.lookup(old.site_id, &old.id, now));
    // The read saw the old row; meanwhile a batch verified the invite and committed.
    cache.changing(&old.id);
    cache.batch_ended();
    cache.fill(t, old.clone());
    assert!(!hits(&cache, old.site_id, &old, now));
    // A read that begins after the commit is kept.
    let new = InviteRecord {
        stored_status: Status::Verified,
        ..old.clone()
    };
    cache.fill(ticket(cache.lookup(old.site_id, &old.id, now)), new.clone());
    assert_eq!(cache.lookup(old.site_id, &old.id, now), Lookup::Hit(new));
}

#[test]
fn nothing_is_kept_while_a_batch_is_changing_invites() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let changed = record(SiteId::generate(), Status::Pending);
    let other = record(SiteId::generate(), Status::Pending);
    cache.changing(&changed.id);
    // A read during the batch, of the changed invite or of any other, begun before the
    // commit: the old row of the changed one must not come back after the commit.
    let t = ticket(cache.lookup(changed.site_id, &changed.id, now));
    cache.fill(t, changed.clone());
    cache.fill(t, other.clone());
    assert!(!hits(&cache, changed.site_id, &changed, now));
    assert!(!hits(&cache, other.site_id, &other, now));
    cache.batch_ended();
    cache.fill(t, changed.clone());
    assert!(!hits(&cache, changed.site_id, &changed, now));
}

#[test]
fn batches_that_change_no_invite_leave_reads_in_flight_alone() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let r = record(SiteId::generate(), Status::Pending);
    let t = ticket(cache.lookup(r.site_id, &r.id, now));
    cache.batch_ended(); // a batch of creates only
    cache.fill(t, r.clone());
    assert_eq!(cache.lookup(r.site_id, &r.id, now), Lookup::Hit(r));
}

#[test]
fn another_processes_commit_empties_the_cache_and_voids_reads_in_flight() {
    let now = Instant::now();
    let cache = checked_cache(8, now);
    let kept = record(SiteId::generate(), Status::Pending);
    cache.fill(
        ticket(cache.lookup(kept.site_id, &kept.id, now)),
        kept.clone(),
    );
    let other = record(SiteId::generate(), Status::Pending);
    let t = ticket(cache.lookup(other.site_id, &other.id, now));
    cache.external_change();
    cache.fill(t, other.clone());
    assert!(!hits(&cache, kept.site_id, &kept, now));
    assert!(!hits(&cache, other.site_id, &other, now));
}

#[test]
fn the_least_recently_read_go_first_beyond_capacity() {
    let now = Instant::now();
    let cache = checked_cache(2, now);
    let site = SiteId::generate();
    let [a, b, c] = [0; 3].map(|_| record(site, Status::Pending));
    for r in [&a, &b] {
        cache.fill(ticket(cache.lookup(site, &r.id, now)), r.clone());
    }
    assert!(hits(&cache, site, &a, now));
    cache.fill(ticket(cache.lookup(site, &c.id, now)), c.clone());
    assert!(hits(&cache, site, &a, now));
    assert!(!hits(&cache, site, &b, now));
    assert!(hits(&cache, site, &c, now));
}

#[test]
fn entries_serve_reads_while_the_writer_holds_the_write_lock_and_fresh_for_after_it_held_it() {
    let at = Instant::now();
    let cache = checked_cache(8, at);
    let r = record(SiteId::generate(), Status::Pending);
    cache.fill(ticket(cache.lookup(r.site_id, &r.id, at)), r.clone());
    let late = at + 10 * FRESH_FOR;
    assert!(!hits(&cache, r.site_id, &r, late));
    cache.write_lock_taken();
    assert!(
        hits(&cache, r.site_id, &r, late),
        "no other process can commit"
    );
    cache.write_lock_released(Some(late));
    assert!(hits(&cache, r.site_id, &r, late + FRESH_FOR));
    assert!(!hits(&cache, r.site_id, &r, late + 2 * FRESH_FOR));
    cache.write_lock_taken();
    cache.write_lock_released(None);
    assert!(
        !hits(&cache, r.site_id, &r, late + 2 * FRESH_FOR),
        "a lock lost at an unknown instant proves nothing"
    );
}

#[test]
fn a_notified_change_drops_the_entry_and_refuses_a_fill_by_a_read_that_began_before_it() {
    let cache = InviteCache::new(8);
    let site = SiteId::generate();
    let (r, other) = (record(site, Status::Pending), record(site, Status::Pending));
    cache.fill(cache.ticket(), r.clone());
    assert_eq!(cache.peek(site, &r.id), Some(r.clone()));
    let before = cache.ticket();
    cache.changed(&r.id);
    assert_eq!(cache.peek(site, &r.id), None);
    assert!(!cache.holds(site, &r.id));
    // Any notified change refuses a read that began before it: it may have seen the old row.
    cache.fill(before, other.clone());
    assert_eq!(cache.peek(site, &other.id), None);
    cache.fill(cache.ticket(), other.clone());
    assert_eq!(cache.peek(site, &other.id), Some(other));
}

#[test]
fn peek_answers_what_is_kept_for_its_site_only_and_however_old_the_last_check() {
    // Never checked for other processes' commits: `lookup` misses, `peek` (for a caller
    // that synced itself) answers.
    let cache = InviteCache::new(8);
    let (mine, theirs) = (SiteId::generate(), SiteId::generate());
    let r = record(mine, Status::Verified);
    cache.fill(cache.ticket(), r.clone());
    assert!(!hits(&cache, mine, &r, Instant::now()));
    assert!(cache.holds(mine, &r.id));
    assert_eq!(cache.peek(mine, &r.id), Some(r.clone()));
    assert!(!cache.holds(theirs, &r.id));
    assert_eq!(cache.peek(theirs, &r.id), None);
    cache.external_change();
    assert!(!cache.holds(mine, &r.id));
}
