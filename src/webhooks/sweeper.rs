//! Marks invites expired once their time has passed, each with its `invite.expired`
//! event. Reads of an invite already report `expired` from its time alone; the sweep
//! exists so the site is told.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::store::{Outbox, StoreResult};

const BATCH: usize = 500;

pub async fn run(
    store: Arc<dyn Outbox>,
    clock: Arc<dyn Clock>,
    wake_deliveries: Arc<Notify>,
    interval: Duration,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
        }
        match run_once(store.as_ref(), clock.as_ref()).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!(expired = n, "swept expired invites");
                wake_deliveries.notify_one();
            }
            Err(e) => {
                tracing::warn!(error = %e, "expiry sweep failed");
                // Batches before the failure may have queued events: send them now.
                wake_deliveries.notify_one();
            }
        }
    }
}

/// One sweep: marks every invite due at `clock.now()` expired, a batch at a time, each
/// with its event; how many. Tests call it to know a sweep has happened.
pub async fn run_once(store: &dyn Outbox, clock: &dyn Clock) -> StoreResult<usize> {
    let mut total = 0;
    loop {
        let n = store.expire_due(clock.now(), BATCH).await?;
        total += n;
        if n < BATCH {
            return Ok(total);
        }
    }
}
