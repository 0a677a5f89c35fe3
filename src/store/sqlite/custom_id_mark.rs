//! The mark (`custom_id_flushed`, [`super::custom_ids`]) as the writer's running batch
//! read it, so that a create past it, nearly every create, asks SQLite nothing to know
//! that it has no entry to log ([`super::custom_ids::log`]): that statement, run for every
//! create with a customId, cost 3.5 % of a create's CPU (BENCHMARKS.md).
//!
//! Why what the batch read stays true: a batch runs under the write lock (`BEGIN
//! IMMEDIATE`), so no other process moves the mark until it ends, and on this connection
//! the one statement that moves it is [`move_mark`], which forgets what was read. The
//! writer opens a [`BatchMark`] once its `BEGIN` is done and drops it after its commit or
//! rollback; outside one, [`BatchMark::is_past`] does not know, and the create's own
//! statement decides as before. The mark lives on the writer's thread, as the tallies do.

use rusqlite::{Connection, OptionalExtension};
use std::cell::RefCell;
use std::marker::PhantomData;

use crate::domain::InviteId;
use crate::store::StoreResult;

thread_local! {
    static MARK: RefCell<State> = const { RefCell::new(State::NoBatch) };
}

enum State {
    /// No batch holds the write lock on this thread.
    NoBatch,
    /// A batch does, and has not read the mark since it began or the mark moved.
    Unread,
    /// The mark as the batch read it (`None`: no mark row, nothing is past it).
    Read(Option<String>),
}

/// The writer's batch, from its `BEGIN IMMEDIATE` to its commit or rollback.
#[must_use]
pub struct BatchMark {
    // The state is the thread's: the scope must end on the thread that began it.
    _thread: PhantomData<*const ()>,
}

impl BatchMark {
    /// Call with the write lock held, after the batch's `BEGIN IMMEDIATE`.
    pub fn begin() -> Self {
        MARK.with(|m| *m.borrow_mut() = State::Unread);
        Self {
            _thread: PhantomData,
        }
    }

    /// Whether `invite` is past the mark ([`super::custom_ids::fresh`]'s rule), as far
    /// as known without a statement of the caller's: always false outside a batch.
    pub fn is_past(conn: &Connection, invite: &InviteId) -> StoreResult<bool> {
        MARK.with(|m| {
            let mut state = m.borrow_mut();
            if let State::Unread = *state {
                *state = State::Read(read(conn)?);
            }
            Ok(match &*state {
                State::Read(Some(mark)) => past(invite.as_str(), mark),
                _ => false,
            })
        })
    }
}

impl Drop for BatchMark {
    fn drop(&mut self) {
        MARK.with(|m| *m.borrow_mut() = State::NoBatch);
    }
}

/// The rule of [`super::custom_ids::fresh`] in Rust: a time-prefixed id (30 characters,
/// ASCII, so SQLite's `length` and its binary comparison agree with these) larger than
/// the mark.
fn past(id: &str, mark: &str) -> bool {
    id.len() == 30 && id > mark
}

fn read(conn: &Connection) -> StoreResult<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT invite_id FROM custom_id_flushed")?
        .query_row([], |r| r.get(0))
        .optional()?)
}

/// Moves the mark to `invite_id`: the only statement that does. A batch's reading of
/// it is forgotten, so its next create reads the new one.
pub fn move_mark(conn: &Connection, invite_id: &str) -> StoreResult<()> {
    conn.prepare_cached("UPDATE custom_id_flushed SET invite_id = ?1")?
        .execute([invite_id])?;
    MARK.with(|m| {
        let mut state = m.borrow_mut();
        if !matches!(*state, State::NoBatch) {
            *state = State::Unread;
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::past;

    #[test]
    fn only_time_prefixed_ids_above_the_mark_are_past_it() {
        let mark = "0000000000a0000000000000000000";
        assert!(past("0000000000b0000000000000000000", mark));
        assert!(!past(mark, mark), "the mark itself was flushed");
        assert!(!past("00000000009zzzzzzzzzzzzzzzzzzz", mark));
        assert!(
            !past("zzzzzzzzzzzzzzzzzzzzzz", mark),
            "22 characters: older ids"
        );
    }
}
