//! Retention (docs/operations.md#data-inventory-and-retention): invites verified or expired longer ago than `--retention`
//! are erased with everything stored about them, at start and then every hour; and what
//! has no further use — idempotency keys past their 24 hours, presentation requests past
//! their 10 minutes, webhook secrets 24 hours after a rotation retired them — is dropped
//! on the same rounds. Time comes from the injected clock.
//! Every node runs it: the backends hand each invite to one node (PostgreSQL: `SKIP
//! LOCKED`; SQLite: one writer at a time).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, UnixTime};
use crate::store::RetentionStore;

pub const DEFAULT_RETENTION: &str = "90d";
/// How often retention runs after the first round at start.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60 * 60);
/// Invites (or spent rows) per transaction, so other writes get their turn in between.
const BATCH: usize = 500;

/// How long settled invites are kept; `None` keeps them for ever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention(Option<Duration>);

impl Retention {
    pub const KEEP_ALL: Retention = Retention(None);

    /// A duration as humantime writes it (`90d`, `36h`, `1y`), or `0` to keep everything.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let keep = if s == "0" {
            Duration::ZERO
        } else {
            humantime::parse_duration(s).map_err(|e| format!("'{s}': {e}"))?
        };
        if !keep.is_zero() && keep < Duration::from_secs(1) {
            return Err(format!(
                "'{s}' is shorter than a second (0 keeps everything)"
            ));
        }
        Ok(Self((!keep.is_zero()).then_some(keep)))
    }

    pub fn days(days: u64) -> Self {
        Self(Some(Duration::from_secs(days * 24 * 60 * 60)))
    }

    /// Invites settled before this (Unix seconds) are erased at `now`; `None`: none are.
    pub fn cutoff(self, now: UnixTime) -> Option<UnixTime> {
        let keep = self.0?;
        let keep = i64::try_from(keep.as_secs()).unwrap_or(i64::MAX);
        Some(now.saturating_sub(keep))
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(keep) => {
                let secs = keep.as_secs();
                let (n, unit) = [(86_400, "d"), (3_600, "h"), (60, "m")]
                    .into_iter()
                    .find(|(unit, _)| secs % unit == 0)
                    .map_or((secs, "s"), |(size, unit)| (secs / size, unit));
                write!(f, "{n}{unit}")
            }
            None => f.write_str("0 (keep every invite)"),
        }
    }
}

/// Runs a round now and then every `interval` until `shutdown`.
pub async fn run(
    store: Arc<dyn RetentionStore>,
    clock: Arc<dyn Clock>,
    retention: Retention,
    interval: Duration,
    shutdown: CancellationToken,
) {
    loop {
        round(store.as_ref(), clock.as_ref(), retention, &shutdown).await;
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

/// One round: erases what retention says is due, then drops spent rows, a batch at a time.
pub async fn round(
    store: &dyn RetentionStore,
    clock: &dyn Clock,
    retention: Retention,
    shutdown: &CancellationToken,
) {
    let now = clock.now();
    if let Some(cutoff) = retention.cutoff(now) {
        let erased = batches(shutdown, || store.erase_settled(cutoff, BATCH)).await;
        if erased > 0 {
            tracing::info!(
                erased,
                "retention: erased invites settled longer ago than {retention}"
            );
        }
    }
    let dropped = batches(shutdown, || store.drop_spent(now, BATCH)).await;
    if dropped > 0 {
        tracing::debug!(
            dropped,
            "retention: dropped spent idempotency keys and presentation requests"
        );
    }
}

/// Runs `batch` until it does less than a full batch (or fails); the total done.
async fn batches<F, Fut>(shutdown: &CancellationToken, mut batch: F) -> usize
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::store::StoreResult<usize>>,
{
    let mut total = 0;
    while !shutdown.is_cancelled() {
        match batch().await {
            Ok(n) => {
                total += n;
                if n < BATCH {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "retention round failed; trying again next round");
                break;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_parses_durations_and_zero() {
        assert_eq!(Retention::parse("90d"), Ok(Retention::days(90)));
        assert_eq!(Retention::parse("0"), Ok(Retention::KEEP_ALL));
        assert_eq!(Retention::parse("0s"), Ok(Retention::KEEP_ALL));
        assert!(Retention::parse("soon").is_err());
        assert!(Retention::parse("").is_err());
        assert!(Retention::parse("500ms").is_err());
        assert_eq!(Retention::days(90).to_string(), "90d");
        assert_eq!(Retention::parse("36h").unwrap().to_string(), "36h");
        assert_eq!(Retention::parse("90s").unwrap().to_string(), "90s");
    }

    #[test]
    fn the_cutoff_is_now_minus_the_retention() {
        assert_eq!(Retention::days(1).cutoff(100_000), Some(100_000 - 86_400));
        assert_eq!(Retention::KEEP_ALL.cutoff(100_000), None);
        let forever = Retention::parse("1000000years").unwrap();
        assert!(forever.cutoff(100_000).is_some());
    }
}
