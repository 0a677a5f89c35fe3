//! Schema migrations, applied in order at start. `schema_migrations` records which have
//! run, so a second start is a no-op. Every node takes one transaction-scoped advisory
//! lock before looking, so when several start at once one migrates and the others wait
//! for its commit, then find nothing left to do.

use deadpool_postgres::{GenericClient, Object};

use crate::store::rows::Columns;
use crate::store::{StoreError, StoreResult};

const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_integrators.sql"),
    include_str!("migrations/0003_lighter_inserts.sql"),
    include_str!("migrations/0004_health_probe.sql"),
    include_str!("migrations/0005_receipts.sql"),
    include_str!("migrations/0006_dc_api.sql"),
    include_str!("migrations/0007_console.sql"),
    include_str!("migrations/0008_more_kinds.sql"),
    include_str!("migrations/0009_invite_changed.sql"),
    include_str!("migrations/0010_receipt_key_signs_from.sql"),
    include_str!("migrations/0011_zk.sql"),
    include_str!("migrations/0012_trust_lists.sql"),
    include_str!("migrations/0013_status_lists.sql"),
    include_str!("migrations/0014_credential_status_tallies.sql"),
];

/// Names the lock in PostgreSQL's one advisory-lock space ("agegate" in ASCII, + 1).
const LOCK_KEY: i64 = 0x6167_6567_6174_6501;

pub async fn apply(client: &mut Object) -> StoreResult<()> {
    // Up to date (the usual start) is seen without writing or locking, so a node also
    // starts on a database that is read-only for now, and answers 503 until it is not.
    if applied(&*client, false).await? >= MIGRATIONS.len() {
        return Ok(());
    }
    let tx = client.transaction().await?;
    // A migration may legitimately outlast a request's statement timeout; waiting for
    // another node's lock (or a table lock) is bounded separately. No NOTICEs ("already
    // exists, skipping"): they would be logged before the server's first line.
    tx.batch_execute(
        "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = '60s';
         SET LOCAL client_min_messages = warning",
    )
    .await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await?;
    let applied = applied(&tx, true).await?;
    if applied > MIGRATIONS.len() {
        // A newer release migrated; its migrations keep older nodes working (rolling upgrade).
        tracing::warn!(
            applied,
            known = MIGRATIONS.len(),
            "the database schema is newer than this release"
        );
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        let version = i64::try_from(i + 1).unwrap_or(i64::MAX);
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await?;
        tracing::debug!(migration = version, "applied database migration");
    }
    tx.commit().await?;
    Ok(())
}

/// How many migrations have run; with `create`, makes the table that records them first.
async fn applied(client: &impl GenericClient, create: bool) -> StoreResult<usize> {
    if create {
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY)",
            )
            .await?;
    } else {
        let exists = client
            .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
            .await?;
        if !(&exists as &dyn Columns).boolean(0)? {
            return Ok(0);
        }
    }
    let row = client
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
            &[],
        )
        .await?;
    usize::try_from((&row as &dyn Columns).int(0)?)
        .map_err(|_| StoreError::Corrupt("schema_migrations version".into()))
}
