//! The overview's per-day tallies (`invite_tallies`), kept by the writer: each change of
//! an invite is noted as it is written ([`Changed`], by the one function per change:
//! `invites::insert`, `changes::write_verified`, `write_expired`), and the batch's hooks
//! (`hooks`) add the notes of the jobs it keeps to the table just before the batch
//! commits ([`add`]), so the counts commit, or roll back, with the changes they count.
//!
//! Why not a trigger: a row trigger doubles the cost of an invite's INSERT (measured on
//! the bundled SQLite, 300 000 inserts in transactions of 100: 4.8-5.9 µs plain, 10.0-12.0
//! µs with an upsert trigger), where the batch pays one upsert per day and event.

use rusqlite::{params, Connection};
use std::collections::BTreeMap;

use crate::clock::UnixTime;
use crate::store::console::day_of;
use crate::store::{StoreResult, TallyEvent};

/// A change of an invite, as a job notes it for the batch's hooks: what it counts, and
/// when it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changed {
    pub event: TallyEvent,
    pub at: UnixTime,
}

/// Adds `changes` to `invite_tallies`, inside the batch's transaction.
pub fn add(conn: &Connection, changes: &[Changed]) -> StoreResult<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let mut counts: BTreeMap<(i64, &str, &str), i64> = BTreeMap::new();
    for change in changes {
        let (event, method) = change.event.columns();
        *counts
            .entry((day_of(change.at), event, method))
            .or_default() += 1;
    }
    let mut upsert = conn.prepare_cached(
        "INSERT INTO invite_tallies (day, event, method, n) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (day, event, method, shard) DO UPDATE SET n = n + excluded.n",
    )?;
    for ((day, event, method), n) in counts {
        upsert.execute(params![day, event, method, n])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::VerifyMethod;

    #[test]
    fn changes_are_added_to_their_days_counts() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE invite_tallies (day INTEGER, event TEXT, method TEXT NOT NULL DEFAULT '',
                 shard INTEGER NOT NULL DEFAULT 0, n INTEGER,
                 PRIMARY KEY (day, event, method, shard));
             INSERT INTO invite_tallies VALUES (1, 'created', '', 0, 10);",
        )
        .unwrap();
        let changed = |event, at| Changed { event, at };
        add(
            &conn,
            &[
                changed(TallyEvent::Created, 86_400),
                changed(TallyEvent::Created, 86_401),
                changed(TallyEvent::Verified(VerifyMethod::EU_AV), 86_402),
                changed(TallyEvent::Expired, 2 * 86_400),
            ],
        )
        .unwrap();
        add(&conn, &[]).unwrap();
        let rows: Vec<(i64, String, String, i64)> = conn
            .prepare("SELECT day, event, method, n FROM invite_tallies ORDER BY day, event")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            rows,
            [
                (1, "created".into(), "".into(), 12),
                (1, "verified".into(), "eu-av".into(), 1),
                (2, "expired".into(), "".into(), 1)
            ]
        );
    }
}
