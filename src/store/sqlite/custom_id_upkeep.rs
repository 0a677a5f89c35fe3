//! The writer's upkeep of the customId runs ([`super::custom_ids`]), a share per group
//! commit, inside the batch's transaction (so it costs no fsync of its own):
//!
//! - a *flush* moves the log's oldest [`FLUSH_AT`] entries, sorted, into a new run;
//! - a *merge* drains the [`FANOUT`] oldest runs of one size tier into one new run, a
//!   bounded number of entries per batch, smallest first.
//!
//! Each step moves entries with one `INSERT … SELECT` and one `DELETE` in the writer's
//! transaction, so every commit (and every crash) leaves each entry in exactly one place,
//! and the statements do the sorting and copying in SQLite, not row by row here. What a
//! merge has left to do lives in memory only: after a restart or a failed commit it is
//! forgotten, and a half-written run is just a smaller run, merged like any other.

use rusqlite::{params, Connection};

use super::query::exec_cached;
use super::{all, one};
use crate::store::StoreResult;

/// Log entries that make a run: the log a lookup scans stays about this long, and a
/// flush (one batch's extra work) moves this many at once.
pub const FLUSH_AT: usize = 1024;
/// Runs of one tier merged into one, so a run of tier t holds about
/// `FLUSH_AT · FANOUT^t` entries and a lookup reads fewer than `FANOUT` runs per tier.
/// 16 rather than 8: an entry passes one tier fewer at a hundred thousand entries, which
/// cut the storage's CPU per create by a sixth (BENCHMARKS.md); a lookup reads at most
/// 15 runs per tier, two or three tiers.
pub const FANOUT: usize = 16;
/// Entries the merges may move per job committed: a create costs one move per tier its
/// entry is merged through (two or three), so this keeps up with any rate.
const MOVES_PER_JOB: usize = 8;
/// The fewest entries a merge step moves: the moves a batch earns are saved up to this,
/// so that a step's fixed cost (two statements per source, 35 or so in all) is spread
/// over many entries. 1,024 rather than 256 cut the storage's CPU per create by about
/// a seventh (BENCHMARKS.md) without a worse create p99.
const STEP: usize = 1024;

/// How large runs grow and how much a batch moves: the constants above but in tests.
#[derive(Clone, Copy)]
pub(super) struct Sizes {
    pub flush_at: usize,
    pub fanout: usize,
    pub moves_per_job: usize,
    pub step: usize,
}

impl Default for Sizes {
    fn default() -> Self {
        Self {
            flush_at: FLUSH_AT,
            fanout: FANOUT,
            moves_per_job: MOVES_PER_JOB,
            step: STEP,
        }
    }
}

impl Sizes {
    /// A run's size tier: 0 below `flush_at · fanout` entries, then one per factor of
    /// `fanout`.
    pub fn tier(self, entries: i64) -> u32 {
        let mut t = 0;
        let mut bound = (self.flush_at * self.fanout) as i64;
        while entries >= bound && t < 16 {
            t += 1;
            bound = bound.saturating_mul(self.fanout as i64);
        }
        t
    }
}

/// A merge under way: runs still to drain into `target`.
struct Merge {
    tier: u32,
    target: i64,
    sources: Vec<i64>,
}

/// What the writer keeps of the upkeep between batches.
#[derive(Default)]
pub struct Upkeep {
    sizes: Sizes,
    /// Log entries by estimate (every job of a batch may have logged one); the log's
    /// count decides once this reaches a flush.
    logged: usize,
    /// Entries the merges may move, earned by the jobs committed.
    moves: usize,
    merges: Vec<Merge>,
    /// The run list has changed since merges were last chosen (and at start).
    choose: bool,
    /// Whether the database has the tables (`None` until looked at; only tests open a
    /// database without them).
    tables: Option<bool>,
}

impl Upkeep {
    pub fn new() -> Self {
        Self::with_sizes(Sizes::default())
    }

    pub(super) fn with_sizes(sizes: Sizes) -> Self {
        Self {
            sizes,
            logged: sizes.flush_at,
            choose: true,
            ..Self::default()
        }
    }

    /// One batch's share, in the batch's transaction, after its `jobs`. On an error
    /// nothing of it stays and the merges under way are forgotten, as after a failed
    /// commit ([`Self::forget`]).
    pub fn run(&mut self, conn: &Connection, jobs: usize) {
        if !*self.tables.get_or_insert_with(|| has_tables(conn)) {
            return;
        }
        self.logged = self.logged.saturating_add(jobs);
        let step = self.sizes.step;
        self.moves = (self.moves + self.sizes.moves_per_job * jobs).min(4 * step);
        let merging = !self.merges.is_empty() && self.moves >= step;
        if self.logged < self.sizes.flush_at && !merging && !self.choose {
            return;
        }
        let done = exec_cached(conn, "SAVEPOINT custom_ids")
            .map_err(Into::into)
            .and_then(|()| self.steps(conn));
        let ended = match done {
            Ok(()) => exec_cached(conn, "RELEASE custom_ids"),
            Err(ref e) => {
                tracing::warn!(error = %e, "customId upkeep failed; retried later");
                self.forget();
                conn.execute_batch("ROLLBACK TO custom_ids; RELEASE custom_ids")
            }
        };
        if let Err(e) = ended {
            tracing::warn!(error = %e, "customId upkeep could not end its savepoint");
        }
    }

    /// Forgets the merges under way, whose last steps were not committed.
    pub fn forget(&mut self) {
        *self = Self {
            tables: self.tables,
            ..Self::with_sizes(self.sizes)
        };
    }

    fn steps(&mut self, conn: &Connection) -> StoreResult<()> {
        if self.logged >= self.sizes.flush_at {
            self.flush(conn)?;
        }
        if self.choose {
            self.choose = false;
            self.choose_merges(conn)?;
        }
        if self.moves < self.sizes.step {
            return Ok(());
        }
        let mut i = 0;
        while i < self.merges.len() && self.moves > 0 {
            let moved = merge_step(conn, &mut self.merges[i], self.moves)?;
            self.moves = self.moves.saturating_sub(moved);
            if self.merges[i].sources.is_empty() {
                self.merges.remove(i);
                self.choose = true;
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// Moves the log's oldest [`Sizes::flush_at`] entries into a new run, if it has that
    /// many.
    fn flush(&mut self, conn: &Connection) -> StoreResult<()> {
        let flush_at = self.sizes.flush_at;
        // The estimate counts every job; the log's own count decides.
        let logged: i64 = conn
            .prepare_cached("SELECT count(*) FROM custom_id_log")?
            .query_row([], |r| r.get(0))?;
        self.logged = usize::try_from(logged).unwrap_or(0);
        if self.logged < flush_at {
            return Ok(());
        }
        // Invite ids grow with time: the oldest entries are the log's first.
        let last: String = conn
            .prepare_cached(
                "SELECT invite_id FROM custom_id_log ORDER BY invite_id LIMIT 1 OFFSET ?1",
            )?
            .query_row([flush_at as i64 - 1], |r| r.get(0))?;
        let run = new_run(conn)?;
        let moved = conn
            .prepare_cached(
                "INSERT INTO custom_id_runs (run, site_id, custom_id, created_at, invite_id)
                 SELECT ?1, site_id, custom_id, created_at, invite_id FROM custom_id_log
                 WHERE invite_id <= ?2 ORDER BY site_id, custom_id, created_at, invite_id",
            )?
            .execute(params![run, last])?;
        conn.prepare_cached("DELETE FROM custom_id_log WHERE invite_id <= ?1")?
            .execute([&last])?;
        add_entries(conn, run, moved as i64)?;
        self.logged -= moved;
        self.choose = true;
        Ok(())
    }

    /// Starts a merge in every size tier that has [`Sizes::fanout`] runs and none under
    /// way, of its oldest runs (none a merge's already).
    fn choose_merges(&mut self, conn: &Connection) -> StoreResult<()> {
        let listed = all(
            conn,
            "SELECT run, entries FROM custom_id_run_list ORDER BY run",
            [],
            |r| Ok((r.int(0)?, r.int(1)?)),
        )?;
        let busy = |run: i64| {
            self.merges
                .iter()
                .any(|m| m.target == run || m.sources.contains(&run))
        };
        let mut tiers: Vec<(u32, Vec<i64>)> = Vec::new();
        for (run, entries) in listed.into_iter().filter(|(run, _)| !busy(*run)) {
            let t = self.sizes.tier(entries);
            match tiers.iter_mut().find(|(tt, _)| *tt == t) {
                Some((_, runs)) => runs.push(run),
                None => tiers.push((t, vec![run])),
            }
        }
        for (tier, mut runs) in tiers {
            if runs.len() < self.sizes.fanout || self.merges.iter().any(|m| m.tier == tier) {
                continue;
            }
            runs.truncate(self.sizes.fanout.min(MAX_SOURCES));
            let target = new_run(conn)?;
            self.merges.push(Merge {
                tier,
                target,
                sources: runs,
            });
        }
        // Small merges first: they finish soon and each leaves fewer runs to read.
        self.merges.sort_by_key(|m| m.tier);
        Ok(())
    }
}

fn has_tables(conn: &Connection) -> bool {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'custom_id_run_list'",
        [],
        |_| Ok(()),
    )
    .is_ok()
}

/// Lists a new, empty run, numbered after every listed one (so it sorts after them and
/// is written at the end of the table).
fn new_run(conn: &Connection) -> StoreResult<i64> {
    let run: i64 = conn
        .prepare_cached("SELECT IFNULL(MAX(run), 0) + 1 FROM custom_id_run_list")?
        .query_row([], |r| r.get(0))?;
    conn.prepare_cached("INSERT INTO custom_id_run_list (run, entries) VALUES (?1, 0)")?
        .execute([run])?;
    Ok(run)
}

fn add_entries(conn: &Connection, run: i64, n: i64) -> StoreResult<()> {
    if n != 0 {
        conn.prepare_cached("UPDATE custom_id_run_list SET entries = entries + ?2 WHERE run = ?1")?
            .execute([run, n])?;
    }
    Ok(())
}

/// The most runs one merge drains ([`merge_sql`]'s parameters).
const MAX_SOURCES: usize = 16;
const _: () = assert!(FANOUT <= MAX_SOURCES);

/// An entry's key, as the runs order it.
type Key = (String, String, i64, String);

const KEY: &str = "site_id, custom_id, created_at, invite_id";

/// `?1` the target, `?2`… the [`MAX_SOURCES`] sources (unused ones 0, never a run), and
/// for a bounded step the next four the largest key it moves.
fn merge_sql(verb: &str, bounded: bool) -> String {
    let sources: Vec<String> = (2..2 + MAX_SOURCES).map(|i| format!("?{i}")).collect();
    let sources = sources.join(", ");
    let b = 2 + MAX_SOURCES;
    let bound = if bounded {
        format!(
            "AND (site_id, custom_id, created_at, invite_id) <= (?{}, ?{}, ?{}, ?{})",
            b,
            b + 1,
            b + 2,
            b + 3
        )
    } else {
        String::new()
    };
    let order = if verb.starts_with("INSERT") {
        "ORDER BY site_id, custom_id, created_at, invite_id"
    } else {
        ""
    };
    format!("{verb} FROM custom_id_runs WHERE run IN ({sources}) {bound} {order}")
}

/// Moves about `budget` of the smallest entries of the merge's sources to its target, in
/// order; answers how many. A step moves every entry up to a bound key: the smallest of
/// the sources' share-th keys (at most a budget in all), which moves about a budget when
/// the sources interleave, as distinct customIds do. When it moves less than half of that
/// (the sources hold different ranges, as runs of one customId's creates over time do,
/// or little is left), the smallest of their budget-th keys (at most a budget from each),
/// or else no bound at all, if that moves at most twice the budget. What was moved is
/// deleted from the sources, so an entry erased between batches is never copied back.
fn merge_step(conn: &Connection, merge: &mut Merge, budget: usize) -> StoreResult<usize> {
    let share = (budget / merge.sources.len().max(1)).max(1);
    let cap = 2 * budget;
    let mut bound = smallest_nth_key(conn, &merge.sources, share)?;
    if bound.is_some() && moved_up_to(conn, &merge.sources, bound.as_ref(), cap)? < budget / 2 {
        if let Some(wider) = smallest_nth_key(conn, &merge.sources, budget)? {
            if moved_up_to(conn, &merge.sources, Some(&wider), cap)? <= cap {
                bound = Some(wider);
            }
        } else if moved_up_to(conn, &merge.sources, None, cap)? <= cap {
            bound = None;
        }
    }
    let mut p: Vec<Box<dyn rusqlite::ToSql>> = vec![Box::new(merge.target)];
    for i in 0..MAX_SOURCES {
        p.push(Box::new(merge.sources.get(i).copied().unwrap_or(0)));
    }
    if let Some((site, custom_id, created_at, invite)) = bound.clone() {
        p.push(Box::new(site));
        p.push(Box::new(custom_id));
        p.push(Box::new(created_at));
        p.push(Box::new(invite));
    }
    let bounded = bound.is_some();
    let insert = merge_sql(
        "INSERT INTO custom_id_runs (run, site_id, custom_id, created_at, invite_id)
         SELECT ?1, site_id, custom_id, created_at, invite_id",
        bounded,
    );
    let moved = conn
        .prepare_cached(&insert)?
        .execute(rusqlite::params_from_iter(p.iter()))?;
    // The DELETE leaves `?1` unused, which SQLite allows: the same parameters bind.
    conn.prepare_cached(&merge_sql("DELETE", bounded))?
        .execute(rusqlite::params_from_iter(p.iter()))?;
    add_entries(conn, merge.target, moved as i64)?;
    let mut drained = Vec::new();
    for &run in &merge.sources {
        let left = one(
            conn,
            "SELECT 1 FROM custom_id_runs WHERE run = ?1 LIMIT 1",
            [run],
            |_| Ok(()),
        )?;
        if left.is_none() {
            conn.prepare_cached("DELETE FROM custom_id_run_list WHERE run = ?1")?
                .execute([run])?;
            drained.push(run);
        }
    }
    merge.sources.retain(|run| !drained.contains(run));
    Ok(moved.max(1))
}

/// The smallest of the sources' `n`-th keys; `None` if no source has `n` entries.
fn smallest_nth_key(conn: &Connection, sources: &[i64], n: usize) -> StoreResult<Option<Key>> {
    let mut smallest: Option<Key> = None;
    for &run in sources {
        let key = one(
            conn,
            &format!(
                "SELECT {KEY} FROM custom_id_runs WHERE run = ?1 ORDER BY {KEY} LIMIT 1 OFFSET ?2"
            ),
            [run, n as i64 - 1],
            |r| Ok((r.text(0)?, r.text(1)?, r.int(2)?, r.text(3)?)),
        )?;
        if let Some(key) = key {
            if smallest.as_ref().is_none_or(|s| key < *s) {
                smallest = Some(key);
            }
        }
    }
    Ok(smallest)
}

/// How many entries a step up to `bound` would move, counted no further than `cap` + 1.
fn moved_up_to(
    conn: &Connection,
    sources: &[i64],
    bound: Option<&Key>,
    cap: usize,
) -> StoreResult<usize> {
    let mut total = 0;
    for &run in sources {
        let limit = (cap + 1 - total) as i64;
        let n: i64 = match bound {
            None => conn
                .prepare_cached(
                    "SELECT count(*) FROM (SELECT 1 FROM custom_id_runs WHERE run = ?1 LIMIT ?2)",
                )?
                .query_row(params![run, limit], |r| r.get(0))?,
            Some((site, custom_id, created_at, invite)) => conn
                .prepare_cached(
                    "SELECT count(*) FROM (SELECT 1 FROM custom_id_runs WHERE run = ?1
                       AND (site_id, custom_id, created_at, invite_id) <= (?2, ?3, ?4, ?5)
                     LIMIT ?6)",
                )?
                .query_row(
                    params![run, site, custom_id, created_at, invite, limit],
                    |r| r.get(0),
                )?,
        };
        total += n as usize;
        if total > cap {
            break;
        }
    }
    Ok(total)
}

#[cfg(test)]
#[path = "custom_ids_tests.rs"]
mod tests;
