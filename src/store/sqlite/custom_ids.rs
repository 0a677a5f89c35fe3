//! The customId lookup as sorted runs (migrations 0012, 0013): where a create's entry
//! waits for a run, and how a list finds a customId's invites. The writer keeps the runs
//! ([`super::custom_id_upkeep`]).
//!
//! A B-tree index on the customId put each create's entry on a random leaf, so every
//! create with a distinct customId dirtied one more page for the WAL and the
//! checkpointer (BENCHMARKS.md). Here a create writes nothing but its invite: invite ids
//! grow with time, and the invites past a mark (`custom_id_flushed`, the largest id the
//! runs have taken) are the entries not yet in a run, read from their rows ([`fresh`]).
//! Only an invite whose id is not past the mark when it is stored (made before a flush,
//! stored after it) logs its entry in `custom_id_log` ([`log`]). The writer moves the
//! fresh invites and the log, sorted, into runs of `custom_id_runs` and merges runs of a
//! size into larger ones; runs are keyed by run first, so each is written in key order
//! at its own end, dozens of entries to a page. A lookup ([`slice`]) reads the fresh
//! invites, the log and each listed run.

use rusqlite::{params, Connection};
use std::sync::LazyLock;

use super::all;
use crate::clock::UnixTime;
use crate::domain::{CustomId, InviteId};
use crate::store::rows::{self, INVITE_COLUMNS};
use crate::store::{InviteRecord, InviteSlice, StoreResult};

/// Whether the invite id `id` (an SQL expression) is past the mark: a time-prefixed id
/// (30 characters; every invite with an older id is in a run) larger than the largest
/// id the runs have taken.
pub(super) fn fresh(id: &str) -> String {
    format!("({id} > (SELECT invite_id FROM custom_id_flushed) AND length({id}) = 30)")
}

/// Logs a new invite's customId, in the create's transaction, if its id is not past the
/// mark: an id made before the last flush, which the next must take from the log. Every
/// other invite is found past the mark ([`fresh`]), so this writes nothing.
pub(super) fn log(
    conn: &Connection,
    invite: &InviteId,
    site: &str,
    custom_id: &CustomId,
    created_at: UnixTime,
) -> StoreResult<()> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "INSERT INTO custom_id_log (invite_id, site_id, custom_id, created_at)
             SELECT ?1, ?2, ?3, ?4 WHERE {} IS NOT 1",
            fresh("?1")
        )
    });
    conn.prepare_cached(&SQL)?.execute(params![
        invite.as_str(),
        site,
        custom_id.as_str(),
        created_at
    ])?;
    Ok(())
}

/// Takes back [`log`] for a create that failed.
pub(super) fn unlog(conn: &Connection, invite: &InviteId) -> StoreResult<()> {
    conn.prepare_cached("DELETE FROM custom_id_log WHERE invite_id = ?1")?
        .execute([invite.as_str()])?;
    Ok(())
}

/// Which rows of a source a slice takes: `?1` site, `?2` stored status, `?3` created
/// from, `(?4, ?5)` the position to start below, `[?6, ?7)` expires, `?8` limit, `?9`
/// the customId, `?10` the run.
fn source_sql(source: &str) -> String {
    format!(
        "SELECT {INVITE_COLUMNS} FROM {source} JOIN invites i ON i.invite_id = c.invite_id
         WHERE c.site_id = ?1 AND c.custom_id = ?9
           AND c.created_at >= ?3 AND (c.created_at, c.invite_id) < (?4, ?5)
           AND i.status = ?2 AND i.expires_at >= ?6 AND i.expires_at < ?7
         ORDER BY c.created_at DESC, c.invite_id DESC LIMIT ?8"
    )
}

/// The log's rows of a slice: a scan of the log, which is short (mostly empty).
pub(super) fn log_sql() -> String {
    source_sql("custom_id_log c")
}

/// The fresh invites' rows of a slice: the range of `invites` past the mark, which is
/// short (a flush moves it whenever it reaches [`super::custom_id_upkeep::FLUSH_AT`]).
/// The unary `+`s keep SQLite from reading it through `invites_by_status` instead,
/// which would be a range of every pending invite of the site.
pub(super) fn fresh_sql() -> String {
    format!(
        "SELECT {INVITE_COLUMNS} FROM invites i
         WHERE {} AND +i.site_id = ?1 AND i.custom_id = ?9
           AND +i.created_at >= ?3 AND (i.created_at, i.invite_id) < (?4, ?5)
           AND +i.status = ?2 AND i.expires_at >= ?6 AND i.expires_at < ?7
         ORDER BY i.created_at DESC, i.invite_id DESC LIMIT ?8",
        fresh("i.invite_id")
    )
}

/// One run's rows of a slice: a range of the run in the order asked for.
pub(super) fn run_sql() -> String {
    source_sql("custom_id_runs c").replace("WHERE", "WHERE c.run = ?10 AND")
}

/// The runs a lookup reads ([`slice`]).
pub fn runs(conn: &Connection) -> StoreResult<Vec<i64>> {
    all(conn, "SELECT run FROM custom_id_run_list", [], |r| r.int(0))
}

/// A slice of one customId's invites: the first `limit` of the fresh invites', the
/// log's and of each of `runs`', newest first. The caller holds one read transaction
/// (in which it read `runs`), so each entry is seen in exactly one place.
pub fn slice(
    conn: &Connection,
    runs: &[i64],
    site: &str,
    s: &InviteSlice,
    custom_id: &str,
) -> StoreResult<Vec<InviteRecord>> {
    let limit = i64::try_from(s.limit).unwrap_or(i64::MAX);
    let stored = s.stored.as_str();
    let from_log = log_sql();
    let from_run = run_sql();
    let base = params![
        site,
        stored,
        s.created_from,
        s.before.0,
        s.before.1,
        s.expires.start,
        s.expires.end,
        limit,
        custom_id
    ];
    let mut found = all(conn, &fresh_sql(), base, |row| rows::invite(row, 0))?;
    found.extend(all(conn, &from_log, base, |row| rows::invite(row, 0))?);
    for run in runs {
        let mut with_run = base.to_vec();
        with_run.push(run);
        found.extend(all(conn, &from_run, with_run.as_slice(), |row| {
            rows::invite(row, 0)
        })?);
    }
    found
        .sort_unstable_by(|a, b| (b.created_at, b.id.as_str()).cmp(&(a.created_at, a.id.as_str())));
    found.dedup_by(|a, b| a.id == b.id);
    found.truncate(s.limit);
    Ok(found)
}
