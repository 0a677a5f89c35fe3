//! SQL of invites: creating, reading, listing, verifying and cancelling them. Every
//! function runs inside the caller's transaction (or, for reads, on a reader's
//! connection).

use rusqlite::{params, Connection};

use super::hooks::Tx;
use super::tally::Changed;
use super::{all, changes, custom_ids, one};
use crate::clock::UnixTime;
use crate::domain::idempotency::{self, Repeat};
use crate::domain::{IdempotentRequest, InviteId, SiteId, VerifyMethod};
use crate::receipt::Evidence;
use crate::store::rows::{self, GATEWAY_COLUMNS, INVITE_COLUMNS, REMEMBERED_KEY_COLUMNS};
use crate::store::transitions::{self, CancelStep, VerifyStep};
use crate::store::{
    CancelOutcome, CreateOutcome, GatewayInvite, InviteRecord, InviteSlice, NewInvite, StoreError,
    StoreResult, TallyEvent, VerifyOutcome,
};

/// The single writer runs one create at a time, so a repeat of a key finds the first's
/// row (committed, or earlier in the same group commit) and replays it.
pub fn create(
    tx: &mut Tx<'_>,
    invite: &NewInvite,
    key: Option<&IdempotentRequest>,
) -> StoreResult<CreateOutcome> {
    if let Some(key) = key {
        let remembered = one(
            tx,
            &format!(
                "SELECT {REMEMBERED_KEY_COLUMNS} FROM idempotency_keys
                 WHERE site_id = ?1 AND key = ?2"
            ),
            params![invite.site_id.to_string(), key.key.as_str()],
            rows::remembered_key,
        )?;
        match idempotency::repeat(remembered, key.body, invite.created_at) {
            Repeat::Create => {}
            Repeat::Conflict => return Ok(CreateOutcome::KeyConflict),
            Repeat::Replay(id) => {
                return by_id(tx, &id)?.map(CreateOutcome::Replayed).ok_or_else(|| {
                    StoreError::Corrupt("an idempotency key names no invite".into())
                })
            }
        }
    }
    insert(tx, invite)?;
    if let Some(key) = key {
        // Replaces a stale entry of the same key.
        tx.prepare_cached(
            "INSERT OR REPLACE INTO idempotency_keys
                 (site_id, key, body_sha256, invite_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            invite.site_id.to_string(),
            key.key.as_str(),
            &key.body.0[..],
            invite.id.as_str(),
            invite.created_at
        ])?;
    }
    Ok(CreateOutcome::Created)
}

/// A create without an Idempotency-Key: no savepoint (see [`insert`]).
pub fn insert_new(tx: &mut Tx<'_>, invite: &NewInvite) -> StoreResult<CreateOutcome> {
    insert(tx, invite).map(|()| CreateOutcome::Created)
}

/// Stores the invite and logs its customId for lookups ([`custom_ids::log`]). With no
/// savepoint: the log's row goes first and is taken back if the invite's fails, so a
/// failed create leaves nothing (and a log row whose invite does not exist would match
/// no lookup, which joins the invite).
fn insert(tx: &mut Tx<'_>, invite: &NewInvite) -> StoreResult<()> {
    let site = invite.site_id.to_string();
    if let Some(custom_id) = &invite.custom_id {
        custom_ids::log(tx, &invite.id, &site, custom_id, invite.created_at)?;
    }
    let inserted = tx
        .prepare_cached(
            "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
             VALUES (?1, ?2, ?3, 'pending', ?4, ?5)",
        )?
        .execute(params![
            invite.id.as_str(),
            site,
            invite.custom_id.as_ref().map(|c| c.as_str()),
            invite.created_at,
            invite.expires_at
        ]);
    if let Err(e) = inserted {
        if invite.custom_id.is_some() {
            let _ = custom_ids::unlog(tx, &invite.id);
        }
        return Err(match e.sqlite_error() {
            // The invite's one foreign key: its site.
            Some(f) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                StoreError::SiteGone
            }
            _ => e.into(),
        });
    }
    tx.note(Changed {
        event: TallyEvent::Created,
        at: invite.created_at,
    });
    Ok(())
}

/// The invite `id`, of any site.
pub fn by_id(conn: &Connection, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ?1");
    one(conn, &sql, [id.as_str()], |row| rows::invite(row, 0))
}

/// The invite `id` if it belongs to `site`.
pub fn of_site(
    conn: &Connection,
    site: SiteId,
    id: &InviteId,
) -> StoreResult<Option<InviteRecord>> {
    let sql =
        format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ?1 AND i.site_id = ?2");
    one(conn, &sql, params![id.as_str(), site.to_string()], |row| {
        rows::invite(row, 0)
    })
}

/// One slice's query: `?1` site, `?2` stored status, `?3` created from, `(?4, ?5)` the
/// position to start below, `[?6, ?7)` expires, `?8` limit. The index is named: with
/// statistics and a bound `'pending'`, SQLite would otherwise weigh the sweeper's partial
/// index, and sort.
fn slice_sql() -> String {
    format!(
        "SELECT {INVITE_COLUMNS} FROM invites i INDEXED BY invites_by_status
         WHERE i.site_id = ?1 AND i.status = ?2
           AND i.created_at >= ?3 AND (i.created_at, i.invite_id) < (?4, ?5)
           AND i.expires_at >= ?6 AND i.expires_at < ?7
         ORDER BY i.created_at DESC, i.invite_id DESC LIMIT ?8"
    )
}

/// Each slice is one range of `invites_by_status`, or, when it names a customId, the
/// log's and runs' ranges of that customId ([`custom_ids::slice`]); all in one read
/// transaction, so that an invite a write moves between them is seen once.
pub fn slices(
    conn: &Connection,
    site: SiteId,
    slices: &[InviteSlice],
) -> StoreResult<Vec<Vec<InviteRecord>>> {
    let own_transaction = conn.is_autocommit();
    if own_transaction {
        conn.execute_batch("BEGIN")?;
    }
    let found = read_slices(conn, site, slices);
    if own_transaction {
        let _ = conn.execute_batch("COMMIT");
    }
    found
}

fn read_slices(
    conn: &Connection,
    site: SiteId,
    slices: &[InviteSlice],
) -> StoreResult<Vec<Vec<InviteRecord>>> {
    let site = site.to_string();
    let mut found = Vec::with_capacity(slices.len());
    // Read once for the page's customId slices, if it has any.
    let mut runs = None;
    for s in slices {
        if let Some(custom_id) = &s.custom_id {
            let runs = match &runs {
                Some(runs) => runs,
                None => runs.insert(custom_ids::runs(conn)?),
            };
            found.push(custom_ids::slice(conn, runs, &site, s, custom_id.as_str())?);
            continue;
        }
        let limit = i64::try_from(s.limit).unwrap_or(i64::MAX);
        let params = params![
            site,
            s.stored.as_str(),
            s.created_from,
            s.before.0,
            s.before.1,
            s.expires.start,
            s.expires.end,
            limit
        ];
        found.push(all(conn, &slice_sql(), params, |row| rows::invite(row, 0))?);
    }
    Ok(found)
}

pub fn gateway(conn: &Connection, id: &InviteId) -> StoreResult<Option<GatewayInvite>> {
    let sql = format!(
        "SELECT {GATEWAY_COLUMNS} FROM invites i JOIN sites s ON s.site_id = i.site_id
         WHERE i.invite_id = ?1"
    );
    one(conn, &sql, [id.as_str()], rows::gateway_invite)
}

/// [`transitions::verify`] applied inside the caller's (write) transaction.
pub fn verify(
    tx: &mut Tx<'_>,
    id: &InviteId,
    method: VerifyMethod,
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<VerifyOutcome> {
    match transitions::verify(by_id(tx, id)?, method, now) {
        VerifyStep::Done(outcome) => Ok(outcome),
        VerifyStep::Verify(record) => {
            changes::write_verified(tx, &record, evidence, now)?;
            Ok(VerifyOutcome::Verified(record))
        }
    }
}

/// [`transitions::cancel`] applied inside the caller's (write) transaction.
pub fn cancel(
    tx: &mut Tx<'_>,
    site: SiteId,
    id: &InviteId,
    now: UnixTime,
) -> StoreResult<CancelOutcome> {
    match transitions::cancel(by_id(tx, id)?, site, now) {
        CancelStep::Done(outcome) => Ok(outcome),
        CancelStep::Expire(record) => {
            changes::write_expired(tx, &record, now, now)?;
            Ok(CancelOutcome::Cancelled(record))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::slice_sql;
    use crate::store::sqlite::custom_ids;
    use rusqlite::Connection;

    fn plan(sql: &str) -> String {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::apply(&mut conn).unwrap();
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        // Unbound parameters are NULL; the plan is chosen without their values.
        let mut rows = stmt.raw_query();
        let mut steps = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            steps.push(row.get::<_, String>(3).unwrap());
        }
        steps.join("; ")
    }

    /// A page costs the same however many invites there are: every slice is a range of an
    /// index in the order asked for, never a scan or a sort.
    #[test]
    fn every_slice_is_an_index_range_in_order() {
        let by_status = plan(&slice_sql());
        assert!(by_status.contains("USING INDEX invites_by_status (site_id=? AND status=? AND created_at>? AND (created_at,invite_id)<(?,?))"), "{by_status}");
        // A customId's slice: a range of each run, each row's invite by its key.
        let by_run = plan(&custom_ids::run_sql());
        assert_eq!(
            by_run,
            "SEARCH c USING PRIMARY KEY (run=? AND site_id=? AND custom_id=? AND created_at>? AND (created_at,invite_id)<(?,?)); \
             SEARCH i USING PRIMARY KEY (invite_id=?)",
        );
        // The fresh invites' rows: the range of the table past the mark (at most about
        // two flushes' worth however many invites there are), sorted.
        let fresh = plan(&custom_ids::fresh_sql());
        assert!(
            fresh.starts_with("SEARCH i USING PRIMARY KEY (invite_id>?)"),
            "{fresh}"
        );
        // The flush counts and steps through the same range.
        let counted = plan(&format!(
            "SELECT count(*) FROM invites i WHERE {}",
            custom_ids::fresh("i.invite_id")
        ));
        assert!(
            counted.starts_with("SEARCH i USING PRIMARY KEY (invite_id>?)"),
            "{counted}"
        );
        for p in [by_status, by_run] {
            assert!(!p.contains("TEMP B-TREE") && !p.starts_with("SCAN"), "{p}");
        }
        let settled =
            plan("SELECT invite_id FROM invites WHERE settled_at < 5 ORDER BY settled_at LIMIT 5");
        assert!(settled.contains("invites_settled"), "{settled}");
        let events = plan("DELETE FROM webhook_events WHERE invite_id = 'x'");
        assert!(events.contains("webhook_events_by_invite"), "{events}");
    }

    /// The sweeper reads, per site, only the pending invites past their time.
    #[test]
    fn the_sweep_is_a_range_per_site() {
        let sweep = plan(&super::super::webhooks::sweep_sql());
        assert_eq!(
            sweep,
            "SCAN s; SEARCH i USING INDEX invites_by_status (site_id=? AND status=? AND created_at<?)"
        );
    }
}
