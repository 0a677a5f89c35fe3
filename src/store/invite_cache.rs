//! The invites whose status was read lately, kept in memory for the next read of the
//! same invite: sites poll an invite's status several times while its visitor verifies,
//! and an entry costs a few hundred bytes where the page holding the row costs 4 KiB of
//! SQLite's page cache (at a million invites a status read otherwise copies its leaf
//! page in from the OS). No I/O here. The rules below are SQLite's, where one process
//! owns the writes and sees each change as it commits; PostgreSQL keeps entries fresh
//! another way, with change notifications and a sync per read ([`InviteCache::peek`],
//! `postgres::status_sync`).
//!
//! Coherence, the one rule that matters: a read never returns a record older than a
//! change this process has committed, nor one another process committed more than
//! [`FRESH_FOR`] ago.
//! - A write job that changes or erases an invite calls [`InviteCache::changing`] inside
//!   its transaction (the entry goes, and none is added until the batch ends); the writer
//!   calls [`InviteCache::batch_ended`] after the commit (or rollback), before it answers
//!   anyone: the epoch moves on.
//! - A read that misses takes a [`Ticket`] (the epoch) before it reads the database, and
//!   its record is kept only if no batch has changed an invite since: a read that began
//!   before a commit may have seen the old row.
//! - Another process's commits: the reads on the writer's connection check SQLite's
//!   `data_version` whenever they begin a read transaction and call
//!   [`InviteCache::checked`]; entries serve reads for [`FRESH_FOR`] after the last check
//!   only, and a change found empties the cache ([`InviteCache::external_change`]).
//!   The writer checks too, when a batch takes the write lock: until it lets go no other
//!   process can commit, so entries serve reads for the whole batch
//!   ([`InviteCache::write_lock_taken`]) and [`FRESH_FOR`] after it. Without that, a
//!   writer busy with batches back to back for more than [`FRESH_FOR`] (creates and
//!   reads mixed) left no read transaction to check, and every status read missed.

use super::InviteRecord;
use crate::domain::{InviteId, SiteId};
use hashlink::LruCache;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How many invites are kept at most (the least recently read go first): about 15 MiB.
pub const CAPACITY: usize = 65_536;

/// How late this process may see another process's commit, at most: entries serve reads
/// this long after the last check for such commits, and the writer's shared read
/// transaction (`SNAPSHOT_AGE`, which is this constant) lives this long.
pub const FRESH_FOR: Duration = Duration::from_millis(2);

pub struct InviteCache {
    inner: Mutex<Inner>,
}

struct Inner {
    records: LruCache<InviteId, InviteRecord>,
    /// Moves on after every batch that changed invites, and after another process's
    /// commit was found.
    epoch: u64,
    /// Whether the running batch changes invites: their entries went when it said so, and
    /// nothing is added until it ends.
    batch_changes: bool,
    /// When the database was last checked for other processes' commits.
    checked_at: Option<Instant>,
    /// The writer holds the write lock and checked when it took it: no other process can
    /// commit until it lets go.
    write_locked: bool,
}

impl Inner {
    fn checked(&mut self, at: Instant) {
        if self.checked_at.is_none_or(|last| last < at) {
            self.checked_at = Some(at);
        }
    }
}

/// What a read that missed brings back to [`InviteCache::fill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

#[derive(Debug, PartialEq)]
pub enum Lookup {
    Hit(InviteRecord),
    /// Read the database, then [`InviteCache::fill`] with this ticket.
    Miss(Ticket),
}

impl InviteCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                records: LruCache::new(capacity),
                epoch: 0,
                batch_changes: false,
                checked_at: None,
                write_locked: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The invite `id` of `site`, if it is kept and the last check for other processes'
    /// commits is recent enough at `now` (or the writer holds the write lock).
    pub fn lookup(&self, site: SiteId, id: &InviteId, now: Instant) -> Lookup {
        let mut inner = self.lock();
        let fresh = inner.write_locked
            || inner
                .checked_at
                .is_some_and(|at| now.saturating_duration_since(at) <= FRESH_FOR);
        if fresh {
            if let Some(record) = inner.records.get(id).filter(|r| r.site_id == site) {
                return Lookup::Hit(record.clone());
            }
        }
        Lookup::Miss(Ticket(inner.epoch))
    }

    /// Keeps `record`, read from the database after `ticket` was taken, unless a batch
    /// has changed invites since (or is changing some now).
    pub fn fill(&self, ticket: Ticket, record: InviteRecord) {
        let mut inner = self.lock();
        if inner.epoch == ticket.0 && !inner.batch_changes {
            inner.records.insert(record.id.clone(), record);
        }
    }

    /// Inside a write transaction: the invite `id` changes or goes.
    pub fn changing(&self, id: &InviteId) {
        let mut inner = self.lock();
        inner.records.remove(id);
        inner.batch_changes = true;
    }

    /// After the batch's commit or rollback, before its jobs are answered.
    pub fn batch_ended(&self) {
        let mut inner = self.lock();
        if std::mem::take(&mut inner.batch_changes) {
            inner.epoch += 1;
        }
    }

    /// The database was checked for other processes' commits at `at` (the start of the
    /// read transaction that checked).
    pub fn checked(&self, at: Instant) {
        self.lock().checked(at);
    }

    /// The writer has taken the write lock and then checked for other processes' commits
    /// ([`Self::checked`], or [`Self::external_change`]): none can commit while it holds
    /// the lock.
    pub fn write_lock_taken(&self) {
        self.lock().write_locked = true;
    }

    /// The writer lets go of the write lock (or has lost it: SQLite rolled the batch
    /// back). `held_at`: an instant at which it still held it, the last one known to
    /// have seen every other process's commit; `None` when that is not known.
    pub fn write_lock_released(&self, held_at: Option<Instant>) {
        let mut inner = self.lock();
        inner.write_locked = false;
        if let Some(at) = held_at {
            inner.checked(at);
        }
    }

    /// PostgreSQL: the invite `id` was changed or erased, by this node or another (a
    /// notification, or a change made here); a read that began before it keeps nothing.
    pub fn changed(&self, id: &InviteId) {
        let mut inner = self.lock();
        inner.records.remove(id);
        inner.epoch += 1;
    }

    /// PostgreSQL: the record kept of `id` for `site`, however old the last check. Only
    /// for a caller that has synced with the database's change notifications since the
    /// read began (`postgres::status_sync`), which is what makes an entry fresh there.
    pub fn peek(&self, site: SiteId, id: &InviteId) -> Option<InviteRecord> {
        let mut inner = self.lock();
        inner.records.get(id).filter(|r| r.site_id == site).cloned()
    }

    /// Whether an entry of `id` for `site` is kept (without touching its recency).
    pub fn holds(&self, site: SiteId, id: &InviteId) -> bool {
        let inner = self.lock();
        inner.records.peek(id).is_some_and(|r| r.site_id == site)
    }

    /// PostgreSQL: the ticket for a read of the database about to begin.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.lock().epoch)
    }

    /// Another process committed: nothing kept can be trusted.
    pub fn external_change(&self) {
        let mut inner = self.lock();
        inner.records.clear();
        inner.epoch += 1;
    }
}

#[cfg(test)]
#[path = "invite_cache_tests.rs"]
mod tests;
