//! Webhook events and the retry rule.

use super::Status;
use std::time::Duration;

/// What happened to an invite, as told to the site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    InviteVerified,
    InviteExpired,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::InviteVerified => "invite.verified",
            EventType::InviteExpired => "invite.expired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "invite.verified" => Some(EventType::InviteVerified),
            "invite.expired" => Some(EventType::InviteExpired),
            _ => None,
        }
    }

    /// The invite's status the event reports.
    pub fn status(self) -> Status {
        match self {
            EventType::InviteVerified => Status::Verified,
            EventType::InviteExpired => Status::Expired,
        }
    }
}

/// An event's identifier: the `webhook-id` header, the same on every attempt.
pub fn new_event_id() -> String {
    format!("evt_{}", super::random_token(16))
}

/// Where an event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// After the `attempts`-th failed attempt of a round (1-based), how long to wait before
/// the next one; `None` means the schedule is spent and the event has failed.
pub fn retry_delay(attempts: usize, schedule: &[Duration]) -> Option<Duration> {
    attempts
        .checked_sub(1)
        .and_then(|i| schedule.get(i))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_is_followed_then_the_event_fails() {
        let s = [
            Duration::from_secs(1),
            Duration::from_secs(2),
            Duration::from_secs(4),
        ];
        assert_eq!(retry_delay(1, &s), Some(Duration::from_secs(1)));
        assert_eq!(retry_delay(2, &s), Some(Duration::from_secs(2)));
        assert_eq!(retry_delay(3, &s), Some(Duration::from_secs(4)));
        assert_eq!(retry_delay(4, &s), None);
        assert_eq!(retry_delay(0, &s), None);
    }

    #[test]
    fn event_types_round_trip() {
        for t in [EventType::InviteVerified, EventType::InviteExpired] {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
        }
        assert_eq!(EventType::InviteExpired.status(), Status::Expired);
    }

    #[test]
    fn event_ids_are_unique() {
        assert_ne!(new_event_id(), new_event_id());
        assert!(new_event_id().starts_with("evt_"));
    }
}
