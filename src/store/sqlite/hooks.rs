//! What agegate's write batches add to the group commit, which knows none of it
//! (`pool`): jobs note each change of an invite they write ([`Tx::note`] with a
//! [`Changed`]), and before the commit, in the batch's transaction, the hooks run the
//! customId upkeep's share (earned by the invites created) and add the changes to the
//! overview's tallies. A job that fails takes its notes back with its changes (the
//! engine's doing), so what is counted is what commits.

use rusqlite::Connection;

use super::custom_id_upkeep::Upkeep;
use super::pool::{BatchHooks, WriteTx};
use super::tally::{self, Changed};
use crate::store::{StoreResult, TallyEvent};

/// A write job's transaction: the only way to the functions that change an invite, which
/// note the change here.
pub type Tx<'a> = WriteTx<'a, Changed>;

pub struct Hooks {
    upkeep: Upkeep,
}

impl Hooks {
    pub fn new() -> Self {
        Self {
            upkeep: Upkeep::new(),
        }
    }
}

impl BatchHooks for Hooks {
    type Note = Changed;

    fn before_commit(&mut self, conn: &Connection, notes: &[Changed]) -> StoreResult<()> {
        let created = notes
            .iter()
            .filter(|c| c.event == TallyEvent::Created)
            .count();
        self.upkeep.run(conn, created);
        tally::add(conn, notes)
    }

    fn after_commit(&mut self, committed: bool) {
        if !committed {
            // Its last steps were not stored.
            self.upkeep.forget();
        }
    }
}
