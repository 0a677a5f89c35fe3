//! Schema migrations, applied in order at start. `PRAGMA user_version` records how many
//! have run, so a second start on the same database is a no-op; the check and the
//! migrations share one immediate transaction, so two processes starting together
//! cannot both apply one.

use crate::store::StoreResult;
use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_webhooks.sql"),
    include_str!("migrations/0003_eu_av.sql"),
    include_str!("migrations/0004_integrators.sql"),
    include_str!("migrations/0005_sweep_by_site.sql"),
];

pub fn apply(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let applied: usize = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i + 1)?;
        tracing::debug!(migration = i + 1, "applied database migration");
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
}
