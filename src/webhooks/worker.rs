//! The delivery worker: claims due events from the outbox, sends them concurrently (a
//! bounded number at a time), and records each attempt with what follows it. A claim is
//! a lease: if this process dies mid-send, another worker takes the event over once the
//! lease ends, so no event is lost; in normal operation each event is sent once.

use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::client::{Sent, WebhookClient};
use super::formats;
use crate::clock::{Clock, UnixMillis};
use crate::domain::webhook::retry_delay;
use crate::store::{AfterAttempt, Attempt, DueEvent, Outbox};

/// How long a claim lasts by default: longer than the client's timeout, so a live
/// worker never loses its claim mid-send.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// The shortest lease allowed with a client `timeout`: the timeout plus a margin (11 s
/// with the default timeout).
pub fn min_lease(timeout: Duration) -> Duration {
    timeout + Duration::from_secs(1)
}
const CONCURRENCY: usize = 32;

pub struct Worker {
    pub store: Arc<dyn Outbox>,
    pub clock: Arc<dyn Clock>,
    pub client: WebhookClient,
    pub schedule: Vec<Duration>,
    pub public_url: String,
    /// Poked when an event is written, so it goes out at once instead of at the next poll.
    pub wake: Arc<Notify>,
    /// How often to look for due events without being poked (retries, other servers' events).
    pub poll: Duration,
    /// How long a claim lasts; after it, another worker may take the event over.
    pub lease: Duration,
    pub metrics: Arc<crate::metrics::Metrics>,
}

impl Worker {
    pub async fn run(self, shutdown: CancellationToken) {
        let this = Arc::new(self);
        let permits = Arc::new(Semaphore::new(CONCURRENCY));
        // Each delivery task yields when its event is due again, if it is to be retried.
        let mut in_flight: JoinSet<Option<UnixMillis>> = JoinSet::new();
        // The earliest retry this worker scheduled, so it wakes for it on time.
        let mut next_retry: Option<UnixMillis> = None;
        let mut last_backlog: Option<std::time::Instant> = None;
        while !shutdown.is_cancelled() {
            // The gauge follows the outbox at the poll's pace, not on every wake-up (a
            // wake-up per written event would add a count to every verification).
            if last_backlog.is_none_or(|at| at.elapsed() >= this.poll) {
                last_backlog = Some(std::time::Instant::now());
                if let Ok(backlog) = this.store.webhook_backlog().await {
                    this.metrics
                        .webhook_backlog
                        .set(i64::try_from(backlog).unwrap_or(i64::MAX));
                }
            }
            let free = permits.available_permits();
            let mut claimed = 0;
            if free > 0 {
                let now = this.clock.now_millis();
                if next_retry.is_some_and(|at| at <= now) {
                    next_retry = None;
                }
                match this.store.claim_events(now, this.lease, free).await {
                    Ok(events) => {
                        claimed = events.len();
                        for event in events {
                            let permit = permits.clone().try_acquire_owned().expect("counted");
                            let worker = this.clone();
                            in_flight.spawn(async move {
                                let retry_at = worker.deliver(event).await;
                                drop(permit);
                                retry_at
                            });
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "could not claim webhook events"),
                }
            }
            while let Some(done) = in_flight.try_join_next() {
                next_retry = earliest(next_retry, done.ok().flatten());
            }
            if claimed > 0 && claimed == free {
                continue; // there may be more due right now
            }
            let until_retry = next_retry.map(|at| at.since(this.clock.now_millis()));
            let nap = until_retry.map_or(this.poll, |d| d.min(this.poll));
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = this.wake.notified() => {}
                _ = tokio::time::sleep(nap) => {}
                Some(done) = in_flight.join_next(), if !in_flight.is_empty() => {
                    next_retry = earliest(next_retry, done.ok().flatten());
                }
            }
        }
        // Let attempts under way finish and be recorded (each is bounded by the timeout).
        while in_flight.join_next().await.is_some() {}
    }

    /// Makes one attempt and records it; returns when the event is due again, if ever.
    async fn deliver(&self, event: DueEvent) -> Option<UnixMillis> {
        let started_at = self.clock.now_millis();
        let started = Instant::now();
        let sent = match &event.webhook_url {
            None => Sent::Failed("the site has no webhook URL".into()),
            Some(target) => match formats::outgoing(&event, &self.public_url, self.clock.now()) {
                Ok(outgoing) => self.client.send(target, outgoing).await,
                Err(reason) => Sent::Refused(reason),
            },
        };
        let (http_status, error, hopeless) = match sent {
            Sent::Answered(status) => (Some(status), None, false),
            Sent::Failed(error) => (None, Some(error), false),
            Sent::Refused(error) => (None, Some(error), true),
        };
        let delivered = http_status.is_some_and(|s| (200..300).contains(&s));
        let attempt_no = event.attempts_in_round + 1;
        let after = if delivered {
            AfterAttempt::Delivered
        } else if hopeless {
            AfterAttempt::Failed
        } else {
            match retry_delay(attempt_no, &self.schedule) {
                Some(delay) => {
                    AfterAttempt::RetryAt(self.clock.now_millis().after(with_jitter(delay)))
                }
                None => AfterAttempt::Failed,
            }
        };
        tracing::info!(
            event_id = %event.event_id,
            event_type = event.event_type.as_str(),
            attempt = event.attempts + 1,
            status = ?http_status,
            error = error.as_deref().unwrap_or(""),
            next = ?after,
            "webhook attempt"
        );
        let attempt = Attempt {
            started: started_at,
            duration_ms: started.elapsed().as_millis() as i64,
            http_status,
            error,
        };
        if let Err(e) = self
            .store
            .finish_attempt(&event.event_id, attempt, after, self.clock.now())
            .await
        {
            // The lease runs out and the event is tried again: at least once.
            tracing::error!(event_id = %event.event_id, error = %e, "could not record a webhook attempt");
            return None;
        }
        self.metrics.webhook_attempt(match after {
            AfterAttempt::Delivered => "delivered",
            AfterAttempt::RetryAt(_) => "retry",
            AfterAttempt::Failed => "failed",
        });
        match after {
            AfterAttempt::RetryAt(at) => Some(at),
            AfterAttempt::Delivered | AfterAttempt::Failed => None,
        }
    }
}

fn earliest(a: Option<UnixMillis>, b: Option<UnixMillis>) -> Option<UnixMillis> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The delay plus up to 10% so retries from many events spread out.
fn with_jitter(delay: Duration) -> Duration {
    let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX / 2);
    Duration::from_millis(ms + rand::thread_rng().gen_range(0..=ms / 10))
}
