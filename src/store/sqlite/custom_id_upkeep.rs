//! The writer's upkeep of the customId runs ([`super::custom_ids`]), a share per group
//! commit, inside the batch's transaction (so it costs no fsync of its own):
//!
//! - a *flush* moves the oldest [`FLUSH_AT`] fresh invites' entries (those past the
//!   mark, [`custom_ids::fresh`]) and the log's, sorted, into a new run;
//! - a *merge* drains the [`FANOUT`] oldest runs of one size tier into one new run, a
//!   bounded number of entries per batch, smallest first.
//!
//! Each step moves entries with one `INSERT … SELECT` and one `DELETE` (a flush: and an
//! `UPDATE` of the mark) in the writer's transaction, so every commit (and every crash)
//! leaves each entry in exactly one place, and the statements do the sorting and
//! copying in SQLite, not row by row here. What a
//! merge has left to do lives in memory only: after a restart or a failed commit it is
//! forgotten, and a half-written run is just a smaller run, merged like any other.

use rusqlite::types::Value;
use rusqlite::{params, Connection};

use super::custom_ids;
use super::query::exec_cached;
use super::{all, one};
use crate::store::StoreResult;

/// Fresh invites that make a run: the range past the mark a lookup scans stays about
/// this long, and a flush (one batch's extra work) moves this many at once.
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
/// so that a step's fixed cost (a seek into every source per statement, and a look at
/// each afterwards) is spread over many entries. 1,024 rather than 256 cut the
/// storage's CPU per create by about a seventh (BENCHMARKS.md) without a worse p99.
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
    /// Entries waiting for a run (fresh invites' and the log's), by estimate: every
    /// job of a batch may have stored one; the counts decide once this reaches a flush.
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

    /// One batch's share, in the batch's transaction, after its jobs, which created
    /// `jobs` invites (each may have stored an entry, and each earns the merges their
    /// moves). On an error nothing of it stays and the merges under way are forgotten, as
    /// after a failed commit ([`Self::forget`]).
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

    /// Moves [`Sizes::flush_at`] fresh invites' entries ([`custom_ids::fresh`]), the
    /// oldest, and the log's into a new run, if there are that many of either.
    fn flush(&mut self, conn: &Connection) -> StoreResult<()> {
        let flush_at = self.sizes.flush_at as i64;
        // The estimate counts every job; the counts decide.
        let (fresh, late): (i64, i64) = conn
            .prepare_cached(&format!(
                "SELECT (SELECT count(*) FROM invites i WHERE {}),
                        (SELECT count(*) FROM custom_id_log)",
                custom_ids::fresh("i.invite_id")
            ))?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        self.logged = usize::try_from(fresh.max(late)).unwrap_or(0);
        if fresh < flush_at && late < flush_at {
            return Ok(());
        }
        // The new mark: invite ids grow with time, so the oldest fresh invites are the
        // first past the mark. Invites without a customId move the mark, not a run.
        let mark: String = if fresh >= flush_at {
            conn.prepare_cached(&format!(
                "SELECT invite_id FROM invites i WHERE {}
                 ORDER BY invite_id LIMIT 1 OFFSET ?1",
                custom_ids::fresh("i.invite_id")
            ))?
            .query_row([flush_at - 1], |r| r.get(0))?
        } else {
            conn.prepare_cached("SELECT invite_id FROM custom_id_flushed")?
                .query_row([], |r| r.get(0))?
        };
        let run = new_run(conn)?;
        let moved = conn
            .prepare_cached(&format!(
                "INSERT INTO custom_id_runs (run, {KEY})
                 SELECT ?1, {KEY} FROM (
                     SELECT {KEY} FROM invites i
                     WHERE {} AND i.invite_id <= ?2 AND i.custom_id IS NOT NULL
                     UNION ALL SELECT {KEY} FROM custom_id_log)
                 ORDER BY {KEY}",
                custom_ids::fresh("i.invite_id")
            ))?
            .execute(params![run, mark])?;
        conn.prepare_cached("DELETE FROM custom_id_log")?
            .execute([])?;
        conn.prepare_cached("UPDATE custom_id_flushed SET invite_id = ?1")?
            .execute([&mark])?;
        add_entries(conn, run, moved as i64)?;
        let left = if fresh >= flush_at {
            fresh - flush_at
        } else {
            fresh
        };
        self.logged = usize::try_from(left).unwrap_or(0);
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

/// The most runs one merge drains ([`smallest_sql`]'s parameters).
const MAX_SOURCES: usize = 16;
const _: () = assert!(FANOUT <= MAX_SOURCES);

/// The key the runs are ordered by, after the run.
const KEY: &str = "site_id, custom_id, created_at, invite_id";

/// The [`MAX_SOURCES`] sources as one ordered stream: `?2`… the sources (unused ones 0,
/// never a run), `?18` how many entries. A compound SELECT with an ORDER BY is a merge of
/// its arms, each read in its run's order, so SQLite reads about `?18` entries, not the
/// sources.
fn smallest_sql() -> String {
    let arms: Vec<String> = (2..2 + MAX_SOURCES)
        .map(|i| format!("SELECT {KEY} FROM custom_id_runs WHERE run = ?{i}"))
        .collect();
    format!(
        "SELECT ?1, {KEY} FROM ({} ORDER BY {KEY} LIMIT ?{})",
        arms.join(" UNION ALL "),
        2 + MAX_SOURCES
    )
}

/// Deletes every entry of the sources (`?2`…, as in [`smallest_sql`]) up to a key (the
/// next four parameters).
fn delete_up_to_sql() -> String {
    let sources: Vec<String> = (2..2 + MAX_SOURCES).map(|i| format!("?{i}")).collect();
    let b = 2 + MAX_SOURCES;
    format!(
        "DELETE FROM custom_id_runs WHERE run IN ({}) AND ({KEY}) <= (?{}, ?{}, ?{}, ?{})",
        sources.join(", "),
        b,
        b + 1,
        b + 2,
        b + 3
    )
}

/// Moves the `budget` smallest entries of the merge's sources to its target, in order,
/// and deletes them from the sources: every source entry up to the last one moved (the
/// target's largest), since the step took the smallest of all. Answers how many moved.
/// Deleting in the same step means an entry erased between batches is never copied back.
fn merge_step(conn: &Connection, merge: &mut Merge, budget: usize) -> StoreResult<usize> {
    let mut p = vec![Value::Integer(merge.target)];
    for i in 0..MAX_SOURCES {
        p.push(Value::Integer(merge.sources.get(i).copied().unwrap_or(0)));
    }
    p.push(Value::Integer(budget as i64));
    let insert = format!("INSERT INTO custom_id_runs (run, {KEY}) {}", smallest_sql());
    let moved = conn
        .prepare_cached(&insert)?
        .execute(rusqlite::params_from_iter(p.iter()))?;
    // The last key moved: the target's largest.
    let last = if moved == 0 {
        None
    } else {
        one(
            conn,
            &format!(
                "SELECT {KEY} FROM custom_id_runs WHERE run = ?1
                 ORDER BY site_id DESC, custom_id DESC, created_at DESC, invite_id DESC LIMIT 1"
            ),
            [merge.target],
            |r| {
                Ok([
                    Value::Text(r.text(0)?),
                    Value::Text(r.text(1)?),
                    Value::Integer(r.int(2)?),
                    Value::Text(r.text(3)?),
                ])
            },
        )?
    };
    if let Some(last) = last {
        let mut d = p[..1 + MAX_SOURCES].to_vec();
        d.extend(last);
        // `?1` (the target) is left unused, which SQLite allows: the parameters bind.
        conn.prepare_cached(&delete_up_to_sql())?
            .execute(rusqlite::params_from_iter(d.iter()))?;
        add_entries(conn, merge.target, moved as i64)?;
    }
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

#[cfg(test)]
#[path = "custom_ids_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "custom_ids_late_tests.rs"]
mod late_tests;
