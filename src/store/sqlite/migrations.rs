//! Schema migrations, applied in order at start. `PRAGMA user_version` records how many
//! have run, so a second start on the same database is a no-op; the check and the
//! migrations share one immediate transaction, so two processes starting together
//! cannot both apply one. Foreign keys are off while they run, as SQLite's procedure
//! for rebuilding a table requires (dropping a parent table would otherwise delete and
//! check its children); `foreign_key_check` then confirms every reference before commit.

use crate::store::{StoreError, StoreResult};
use rusqlite::{Connection, OptionalExtension};

pub(super) const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_webhooks.sql"),
    include_str!("migrations/0003_eu_av.sql"),
    include_str!("migrations/0004_integrators.sql"),
    include_str!("migrations/0005_sweep_by_site.sql"),
    include_str!("migrations/0006_checks_without_in.sql"),
    include_str!("migrations/0007_invite_changes.sql"),
    include_str!("migrations/0008_receipts.sql"),
    include_str!("migrations/0009_dc_api.sql"),
    include_str!("migrations/0010_console.sql"),
    include_str!("migrations/0011_more_kinds.sql"),
    include_str!("migrations/0012_custom_id_runs.sql"),
    include_str!("migrations/0013_custom_id_fresh.sql"),
    include_str!("migrations/0014_receipt_key_signs_from.sql"),
    include_str!("migrations/0015_health_probe.sql"),
    include_str!("migrations/0016_zk.sql"),
    include_str!("migrations/0017_trust_lists.sql"),
    include_str!("migrations/0018_status_lists.sql"),
    include_str!("migrations/0019_credential_status_tallies.sql"),
];

pub fn apply(conn: &mut Connection) -> StoreResult<()> {
    // A no-op inside a transaction, so before it; back on whatever happened.
    receipt_status_function(conn)?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let applied = apply_in_transaction(conn);
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.remove_function("agegate_receipt_credential_status", 1)?;
    applied
}

/// `agegate_receipt_credential_status(receipt)`: what a stored receipt records of its
/// credential's status, or NULL (migration 19 counts existing verifications by it).
/// SQLite has no base64, so the receipt is read by the code that wrote it.
fn receipt_status_function(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "agegate_receipt_credential_status",
        1,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_DIRECTONLY,
        |ctx| {
            let receipt = ctx.get_raw(0).as_str().ok();
            Ok(receipt
                .and_then(crate::receipt::recorded_status)
                .map(|s| s.as_str()))
        },
    )
}

fn apply_in_transaction(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let applied: usize = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if applied >= MIGRATIONS.len() {
        return Ok(());
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i + 1)?;
        tracing::debug!(migration = i + 1, "applied database migration");
    }
    // Every reference, once, and only after a migration (it reads every row).
    let broken: Option<String> = tx
        .query_row("PRAGMA foreign_key_check", [], |r| r.get(0))
        .optional()?;
    if let Some(table) = broken {
        return Err(StoreError::Corrupt(format!(
            "a row of {table} refers to a missing row; no migration applied"
        )));
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applying_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn).unwrap();
        apply(&mut conn).unwrap();
        let v: usize = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len());
    }

    /// A database as the fifth migration left it, with a row in every table.
    fn database_of_migration_5() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        let tx = conn.transaction().unwrap();
        for sql in &MIGRATIONS[..5] {
            tx.execute_batch(sql).unwrap();
        }
        tx.pragma_update(None, "user_version", 5).unwrap();
        tx.execute_batch(
            "INSERT INTO sites (site_id, name, created_at) VALUES ('s1', 'one', 1);
             INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
                 VALUES ('i1', 's1', 'c1', 'pending', 10, 20);
             INSERT INTO invites (invite_id, site_id, status, created_at, expires_at,
                                  verified_at, verified_method, settled_at)
                 VALUES ('i2', 's1', 'verified', 11, 21, 15, 'eu-av', 15);
             INSERT INTO webhook_events (event_id, site_id, invite_id, event_type, occurred_at,
                                         state, attempts, last_status)
                 VALUES ('e1', 's1', 'i2', 'invite.verified', 15, 'delivered', 1, 200);
             INSERT INTO webhook_attempts (event_id, attempt, started_ms, duration_ms, http_status)
                 VALUES ('e1', 1, 16, 3, 200);
             INSERT INTO presentation_requests (state, invite_id, nonce, min_age, created_at, expires_at)
                 VALUES ('st', 'i1', 'n', 18, 12, 22);
             INSERT INTO idempotency_keys (site_id, key, body_sha256, invite_id, created_at)
                 VALUES ('s1', 'k', x'00', 'i1', 10);",
        )
        .unwrap();
        tx.commit().unwrap();
        conn
    }

    fn rows(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(Result::unwrap).collect()
    }

    #[test]
    fn rebuilding_tables_keeps_every_row_index_and_rule() {
        let mut conn = database_of_migration_5();
        apply(&mut conn).unwrap();
        assert_eq!(
            rows(&conn, "SELECT invite_id || ' ' || status || ' ' || IFNULL(verified_method, '-') || ' ' || IFNULL(custom_id, '-') FROM invites ORDER BY 1"),
            ["i1 pending - c1", "i2 verified eu-av -"]
        );
        assert_eq!(
            rows(&conn, "SELECT event_id || ' ' || state || ' ' || attempts || ' ' || last_status FROM webhook_events"),
            ["e1 delivered 1 200"]
        );
        assert_eq!(rows(&conn, "SELECT event_id FROM webhook_attempts"), ["e1"]);
        assert_eq!(
            rows(&conn, "SELECT invite_id FROM presentation_requests"),
            ["i1"]
        );
        assert_eq!(
            rows(&conn, "SELECT invite_id FROM idempotency_keys"),
            ["i1"]
        );
        assert_eq!(
            rows(&conn, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('invites', 'webhook_events') ORDER BY 1"),
            [
                "invites_by_status",
                "invites_settled",
                "webhook_events_by_invite",
                "webhook_events_by_site",
                "webhook_events_due",
            ]
        );
        // The customId of i1 is in the first run of the customId lookup (migration 12).
        assert_eq!(
            rows(
                &conn,
                "SELECT run || ' ' || custom_id || ' ' || invite_id FROM custom_id_runs"
            ),
            ["1 c1 i1"]
        );
        // The rules hold as before: the checks, and the references (foreign keys are on again).
        let refused = [
            "UPDATE invites SET status = 'cancelled' WHERE invite_id = 'i1'",
            "UPDATE webhook_events SET state = 'lost'",
            "INSERT INTO invites (invite_id, site_id, status, created_at, expires_at) VALUES ('i3', 'nosite', 'pending', 1, 2)",
            "INSERT INTO webhook_events (event_id, site_id, invite_id, event_type, occurred_at, state) VALUES ('e2', 's1', 'noinvite', 't', 1, 'pending')",
            "DELETE FROM invites WHERE invite_id = 'i2'",
        ];
        for sql in refused {
            assert!(conn.execute(sql, []).is_err(), "{sql} was accepted");
        }
        conn.execute(
            "UPDATE invites SET status = 'expired' WHERE invite_id = 'i1'",
            [],
        )
        .unwrap();
    }

    #[test]
    fn a_broken_reference_stops_the_migration() {
        let mut conn = database_of_migration_5();
        conn.execute_batch(
            "PRAGMA foreign_keys = OFF;
             INSERT INTO idempotency_keys (site_id, key, body_sha256, invite_id, created_at)
                 VALUES ('s1', 'k2', x'00', 'gone', 10);",
        )
        .unwrap();
        assert!(matches!(apply(&mut conn), Err(StoreError::Corrupt(_))));
        let v: usize = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 5, "nothing of the migration is committed");
    }

    /// Migration 8: a request's DC API secrets are both there or both absent, the key 32
    /// bytes and the nonce 16 to 64; the requests of migration 5 keep neither.
    #[test]
    fn dc_api_secrets_come_in_pairs_of_the_right_sizes() {
        let mut conn = database_of_migration_5();
        apply(&mut conn).unwrap();
        assert_eq!(
            rows(
                &conn,
                "SELECT IFNULL(response_key, 'none') FROM presentation_requests"
            ),
            ["none"]
        );
        let insert = |state: &str, key: &str, nonce: &str| {
            conn.execute(
                &format!(
                    "INSERT INTO presentation_requests (state, invite_id, nonce, min_age, \
                     created_at, expires_at, response_key, encryption_nonce) \
                     VALUES ('{state}', 'i1', 'n', 18, 12, 22, {key}, {nonce})"
                ),
                [],
            )
        };
        let (key, nonce) = ("zeroblob(32)", "zeroblob(16)");
        assert!(insert("a", key, nonce).is_ok());
        assert!(insert("b", key, "zeroblob(64)").is_ok());
        assert!(insert("c", key, "NULL").is_err());
        assert!(insert("d", "NULL", nonce).is_err());
        assert!(insert("e", "zeroblob(31)", nonce).is_err());
        assert!(insert("f", key, "zeroblob(15)").is_err());
        assert!(insert("g", key, "zeroblob(65)").is_err());
    }

    /// The opcodes SQLite compiles `sql` to.
    fn opcodes(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
        // Parameters left unbound: EXPLAIN only lists the program.
        let mut rows = stmt.raw_query();
        let mut ops = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            ops.push(row.get(1).unwrap());
        }
        ops
    }

    const CHECKED_WRITES: [&str; 4] = [
        "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at) VALUES (?1, ?2, ?3, 'pending', ?4, ?5)",
        "UPDATE invites SET status = 'verified', verified_at = ?2, verified_method = ?3, settled_at = ?2 WHERE invite_id = ?1",
        "INSERT INTO webhook_events (event_id, site_id, invite_id, event_type, occurred_at, state) VALUES (?1, ?2, ?3, ?4, ?5, 'pending')",
        "UPDATE webhook_events SET state = ?2 WHERE event_id = ?1",
    ];

    /// `x IN (3+ constants)` builds a temporary B-tree for every row written; no write to a
    /// checked column may do that (migration 6). Before it, every one of these did.
    #[test]
    fn writing_checked_columns_builds_no_temporary_table() {
        let builds =
            |conn: &Connection, sql| opcodes(conn, sql).iter().any(|op| op == "OpenEphemeral");
        let before = database_of_migration_5();
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn).unwrap();
        for sql in CHECKED_WRITES {
            assert!(builds(&before, sql), "before migration 6: {sql}");
            assert!(!builds(&conn, sql), "{sql}");
        }
    }
}
