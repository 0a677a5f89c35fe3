//! How the status cache ([`InviteCache`]) stays coherent with the SQLite writer's
//! connection: the store's [`ConnHooks`], which the engine (`writer_conn`) calls without
//! knowing of invites.
//!
//! Every change to an invite on that connection evicts it from the cache by
//! construction: temporary triggers call back into the cache from inside the statement
//! that changes the row, so no write path can forget to. Another process's changes are
//! found by `invite_changes.generation` when a transaction begins.

use super::writer_conn::ConnHooks;
use crate::domain::InviteId;
use crate::store::invite_cache::InviteCache;
use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;
use std::sync::Arc;
use std::time::Instant;

pub struct StatusCoherence {
    cache: Arc<InviteCache>,
    /// `invite_changes.generation` at the last check: it changes when any connection has
    /// changed or erased an invite (persistent triggers, migration 7). Another process's
    /// commits that leave invites alone (creates, the health check) keep the cache.
    generation: Option<i64>,
}

impl StatusCoherence {
    pub fn new(cache: Arc<InviteCache>) -> Self {
        Self {
            cache,
            generation: None,
        }
    }
}

impl ConnHooks for StatusCoherence {
    /// Temporary triggers (this connection only) that tell the cache of every invite
    /// updated or deleted, inside the statement that does it.
    fn attach(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let cache = self.cache.clone();
        conn.create_scalar_function(
            "agegate_invite_changing",
            1,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY,
            move |ctx| {
                match ctx.get_raw(0).as_str().ok().and_then(InviteId::parse) {
                    Some(id) => cache.changing(&id),
                    // Not an id this process would make: forget everything rather than guess.
                    None => cache.external_change(),
                }
                Ok(0)
            },
        )?;
        conn.execute_batch(
            "CREATE TEMP TRIGGER IF NOT EXISTS evict_updated_invite AFTER UPDATE ON main.invites
             BEGIN SELECT agegate_invite_changing(OLD.invite_id); END;
             CREATE TEMP TRIGGER IF NOT EXISTS evict_deleted_invite AFTER DELETE ON main.invites
             BEGIN SELECT agegate_invite_changing(OLD.invite_id); END;",
        )
    }

    fn checked(
        &mut self,
        conn: &Connection,
        begun: Instant,
        others_committed: bool,
    ) -> rusqlite::Result<()> {
        if others_committed {
            let generation: Option<i64> = conn
                .prepare_cached("SELECT generation FROM invite_changes")?
                .query_row([], |r| r.get(0))
                .ok();
            // The first check also empties it: reads before it went unchecked. So does a
            // database without the table (only tests open one).
            if generation.is_none() || self.generation != generation {
                self.cache.external_change();
                self.generation = generation;
            }
        }
        self.cache.checked(begun);
        Ok(())
    }

    /// No other process can commit until the batch ends, so the cache serves reads for
    /// all of it.
    fn write_lock_taken(&self) {
        self.cache.write_lock_taken();
    }

    /// The invites the batch changed may be cached again.
    fn batch_ended(&self, held_at: Option<Instant>) {
        self.cache.write_lock_released(held_at);
        self.cache.batch_ended();
    }
}

#[cfg(test)]
#[path = "status_coherence_tests.rs"]
mod tests;
