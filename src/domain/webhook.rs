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

/// How a site's webhooks are written (docs/webhooks.md#the-event, docs/webhooks.md#the-everprotec-format-drop-in-for-existing-receivers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookFormat {
    /// Standard Webhooks: every event, signed with `webhook-signature`.
    #[default]
    Standard,
    /// For receivers written for the hosted service this API comes from: verifications
    /// only, `{"inviteId","customId","timestamp"}` signed with `X-Everprotec-SHA256`.
    Everprotec,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the webhook format must be standard or everprotec, not '{0}'")]
pub struct WebhookFormatError(pub String);

impl WebhookFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Standard => "standard",
            WebhookFormat::Everprotec => "everprotec",
        }
    }

    pub fn parse(s: &str) -> Result<Self, WebhookFormatError> {
        match s {
            "standard" => Ok(WebhookFormat::Standard),
            "everprotec" => Ok(WebhookFormat::Everprotec),
            other => Err(WebhookFormatError(other.to_owned())),
        }
    }

    /// Whether a site with this format is told of `event`.
    pub fn sends(self, event: EventType) -> bool {
        match self {
            WebhookFormat::Standard => true,
            WebhookFormat::Everprotec => event == EventType::InviteVerified,
        }
    }
}

/// An event's identifier: the `webhook-id` header, the same on every attempt. `evt_`
/// and URL-safe characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventId(String);

impl EventId {
    pub fn generate() -> Self {
        Self(format!("evt_{}", super::random_token(16)))
    }

    /// `None` for text no event id has.
    pub fn parse(s: &str) -> Option<Self> {
        let token = s.strip_prefix("evt_")?;
        let url_safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        (!token.is_empty() && token.len() <= 64 && token.chars().all(url_safe))
            .then(|| Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
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
    fn everprotec_sends_only_verifications() {
        assert!(WebhookFormat::Everprotec.sends(EventType::InviteVerified));
        assert!(!WebhookFormat::Everprotec.sends(EventType::InviteExpired));
        assert!(WebhookFormat::Standard.sends(EventType::InviteExpired));
        for f in [WebhookFormat::Standard, WebhookFormat::Everprotec] {
            assert_eq!(WebhookFormat::parse(f.as_str()), Ok(f));
        }
        assert!(WebhookFormat::parse("Standard").is_err());
    }

    #[test]
    fn event_ids_are_unique_and_parse_as_themselves() {
        let id = EventId::generate();
        assert_ne!(id, EventId::generate());
        assert_eq!(EventId::parse(id.as_str()), Some(id.clone()));
        assert!(id.as_str().starts_with("evt_"));
        for bad in ["", "evt_", "evt", "x_abc", "evt_a b", "evt_é"] {
            assert_eq!(EventId::parse(bad), None, "{bad:?}");
        }
    }
}
