//! Marks invites expired once their time has passed, each with its `invite.expired`
//! event. Reads of an invite already report `expired` from its time alone; the sweep
//! exists so the site is told.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::store::Outbox;

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
        loop {
            match store.expire_due(clock.now(), BATCH).await {
                Ok(n) => {
                    if n > 0 {
                        tracing::debug!(expired = n, "swept expired invites");
                        wake_deliveries.notify_one();
                    }
                    if n < BATCH {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "expiry sweep failed");
                    break;
                }
            }
        }
    }
}
