//! A few connections that many requests use at once, for single statements outside a
//! transaction (point reads, lists). tokio-postgres pipelines the queries of concurrent
//! callers on one connection: they go out in one write, PostgreSQL's backend answers
//! them one after another without waiting for the network in between, and the answers
//! come back in one read. Against a pool, where each request has a connection (and a
//! backend process) to itself and every query costs both processes a wake-up, this
//! saves most of the context switches, which is most of the cost of a read by key.
//!
//! The connections come from the pool (so they are made, configured and counted the same
//! way) and go back to it when replaced: a connection found closed (PostgreSQL restarted,
//! the network broke) is swapped for a fresh one by the next caller.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use deadpool_postgres::{Object, Pool};

use crate::store::StoreResult;

/// Connections shared for pipelining. Two rather than one, so a slow statement (a long
/// list) holds up only half of the reads queued behind it.
const SHARED_CONNECTIONS: usize = 2;

pub struct Shared {
    pool: Pool,
    slots: Vec<Mutex<Option<Arc<Object>>>>,
    next: AtomicUsize,
}

impl Shared {
    pub fn new(pool: Pool) -> Self {
        Self {
            pool,
            slots: (0..SHARED_CONNECTIONS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// One of the shared connections, in turn; (re)connected if it is missing or closed.
    pub async fn client(&self) -> StoreResult<Arc<Object>> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        if let Some(client) = open(slot) {
            return Ok(client);
        }
        let fresh = Arc::new(self.pool.get().await?);
        let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
        // Another caller may have reconnected meanwhile; keep theirs, and this one goes
        // back to the pool when dropped.
        match held.as_ref() {
            Some(client) if !client.is_closed() => Ok(client.clone()),
            _ => {
                *held = Some(fresh.clone());
                Ok(fresh)
            }
        }
    }
}

fn open(slot: &Mutex<Option<Arc<Object>>>) -> Option<Arc<Object>> {
    let held = slot.lock().unwrap_or_else(|e| e.into_inner());
    held.as_ref().filter(|c| !c.is_closed()).cloned()
}
