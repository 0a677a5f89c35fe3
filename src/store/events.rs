//! The webhook outbox as the store hands it out: events claimed for delivery, attempts,
//! and what operators see of them.

use super::InviteRecord;
use crate::clock::{UnixMillis, UnixTime};
use crate::domain::webhook::{DeliveryState, EventId, EventType};
use crate::domain::{WebhookFormat, WebhookSecret};

/// An event claimed for delivery, with everything needed to send it.
#[derive(Debug, Clone)]
pub struct DueEvent {
    pub event_id: EventId,
    pub event_type: EventType,
    pub occurred_at: UnixTime,
    /// Attempts made in the current round of the retry schedule, before this one.
    pub attempts_in_round: usize,
    /// Attempts made in all, before this one.
    pub attempts: usize,
    pub invite: InviteRecord,
    /// The site's webhook URL now (it may have changed since the event).
    pub webhook_url: Option<String>,
    /// The site's webhook format now.
    pub webhook_format: WebhookFormat,
    /// Every secret that signs now: the current one first, then any rotated out < 24 h ago.
    pub secrets: Vec<WebhookSecret>,
    /// The invite's receipt, once verified.
    pub receipt: Option<String>,
}

/// The outcome of one delivery attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub started: UnixMillis,
    pub duration_ms: i64,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

/// What happens to an event after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    Delivered,
    RetryAt(UnixMillis),
    Failed,
}

impl AfterAttempt {
    /// The event's stored `state`, `next_attempt_ms` and `finished_at` after the attempt.
    pub fn columns(self, now: UnixTime) -> (DeliveryState, Option<i64>, Option<UnixTime>) {
        // Stored as milliseconds.
        match self {
            AfterAttempt::Delivered => (DeliveryState::Delivered, None, Some(now)),
            AfterAttempt::Failed => (DeliveryState::Failed, None, Some(now)),
            AfterAttempt::RetryAt(at) => (DeliveryState::Pending, Some(at.get()), None),
        }
    }
}

/// How long a rotated-out webhook secret keeps signing.
pub const OLD_SECRET_GRACE_SECS: i64 = 24 * 60 * 60;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub attempt: usize,
    pub started: UnixMillis,
    pub duration_ms: i64,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

/// An event as operators see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    pub event_id: EventId,
    pub event_type: EventType,
    pub invite_id: String,
    pub occurred_at: UnixTime,
    pub state: DeliveryState,
    pub next_attempt: Option<UnixMillis>,
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
    pub attempts: Vec<AttemptRecord>,
}
