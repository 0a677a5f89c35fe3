use crate::clock::UnixTime;
use serde::{Deserialize, Serialize};

/// How long an invite stays usable: 24 hours (seed spec, "Limits").
pub const INVITE_LIFETIME_SECS: i64 = 24 * 60 * 60;

/// Longest accepted customId, in Unicode scalar values (not bytes).
pub const CUSTOM_ID_MAX_CHARS: usize = 128;

pub use super::invite_id::{
    InviteId, INVITE_ID_MAX_LEN, INVITE_ID_MIN_LEN, INVITE_ID_PATTERN, INVITE_ID_RANDOM_BYTES,
};

/// The client's own identifier for an invite: at most 128 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomId(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CustomIdError {
    #[error("customId must be at most {CUSTOM_ID_MAX_CHARS} characters")]
    TooLong,
}

impl CustomId {
    pub fn parse(s: String) -> Result<Self, CustomIdError> {
        // Count scalar values, but stop early so a huge string costs no more than 129 steps.
        if s.chars().nth(CUSTOM_ID_MAX_CHARS).is_some() {
            return Err(CustomIdError::TooLong);
        }
        Ok(Self(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An invite's status, as clients see it and as it is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Verified,
    Expired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Verified => "verified",
            Status::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Status::Pending),
            "verified" => Some(Status::Verified),
            "expired" => Some(Status::Expired),
            _ => None,
        }
    }

    /// The status an invite has at `now`, given what is stored. A pending invite becomes
    /// expired at `expires` exactly, whether or not a sweeper has written that down yet;
    /// a verified invite stays verified.
    pub fn at(stored: Status, expires: UnixTime, now: UnixTime) -> Status {
        match stored {
            Status::Pending if now >= expires => Status::Expired,
            other => other,
        }
    }
}

/// The time an invite created at `now` expires.
pub fn expires_at(created: UnixTime) -> UnixTime {
    created + INVITE_LIFETIME_SECS
}

/// What a successful verification report does to an invite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyTransition {
    /// pending → verified: write it down (and, later, tell the site).
    Verify,
    /// Already verified: nothing changes; the report is answered as a success.
    AlreadyVerified,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the invite has expired")]
    Expired,
}

/// The verification rule: only a pending invite, before it expires, becomes verified.
pub fn verify(current: Status) -> Result<VerifyTransition, VerifyError> {
    match current {
        Status::Pending => Ok(VerifyTransition::Verify),
        Status::Verified => Ok(VerifyTransition::AlreadyVerified),
        Status::Expired => Err(VerifyError::Expired),
    }
}

/// What cancelling an invite does (docs/api.md#cancelling-and-erasing-an-invite).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelTransition {
    /// pending → expired at once, with its `invite.expired` event; `expires` is unchanged.
    Expire,
    /// Already expired: nothing changes; answered as a success.
    AlreadyExpired,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CancelError {
    #[error("a verified invite cannot be cancelled")]
    Verified,
}

/// The cancel rule: a pending invite expires now, an expired one stays so, a verified one
/// cannot be taken back.
pub fn cancel(current: Status) -> Result<CancelTransition, CancelError> {
    match current {
        Status::Pending => Ok(CancelTransition::Expire),
        Status::Expired => Ok(CancelTransition::AlreadyExpired),
        Status::Verified => Err(CancelError::Verified),
    }
}

/// The gateway page of an invite under `public_url` (which has no trailing slash): the
/// invite's `url`, in answers and webhooks alike.
pub fn gateway_url(public_url: &str, id: &InviteId) -> String {
    GatewayUrl { public_url, id }.to_string()
}

/// [`gateway_url`] without building it: written where it goes (into a JSON answer).
#[derive(Clone, Copy)]
pub struct GatewayUrl<'a> {
    pub public_url: &'a str,
    pub id: &'a InviteId,
}

impl std::fmt::Display for GatewayUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/gateway/{}", self.public_url, self.id)
    }
}

impl Serialize for GatewayUrl<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_id_counts_scalar_values_not_bytes() {
        assert!(CustomId::parse("😀".repeat(128)).is_ok());
        assert!(CustomId::parse("a".repeat(128)).is_ok());
        assert_eq!(
            CustomId::parse("a".repeat(129)),
            Err(CustomIdError::TooLong)
        );
        assert_eq!(
            CustomId::parse("😀".repeat(129)),
            Err(CustomIdError::TooLong)
        );
        assert!(CustomId::parse(String::new()).is_ok());
    }

    #[test]
    fn pending_expires_exactly_at_expires() {
        assert_eq!(Status::at(Status::Pending, 100, 99), Status::Pending);
        assert_eq!(Status::at(Status::Pending, 100, 100), Status::Expired);
        assert_eq!(Status::at(Status::Pending, 100, 101), Status::Expired);
    }

    #[test]
    fn verified_stays_verified_after_expiry() {
        assert_eq!(Status::at(Status::Verified, 100, 1_000), Status::Verified);
        assert_eq!(Status::at(Status::Expired, 100, 50), Status::Expired);
    }

    #[test]
    fn only_pending_invites_can_be_verified() {
        assert_eq!(verify(Status::Pending), Ok(VerifyTransition::Verify));
        assert_eq!(
            verify(Status::Verified),
            Ok(VerifyTransition::AlreadyVerified)
        );
        assert_eq!(verify(Status::Expired), Err(VerifyError::Expired));
    }

    #[test]
    fn only_pending_invites_are_cancelled() {
        assert_eq!(cancel(Status::Pending), Ok(CancelTransition::Expire));
        assert_eq!(
            cancel(Status::Expired),
            Ok(CancelTransition::AlreadyExpired)
        );
        assert_eq!(cancel(Status::Verified), Err(CancelError::Verified));
    }

    #[test]
    fn lifetime_is_24_hours() {
        assert_eq!(expires_at(1_700_000_000), 1_700_086_400);
    }

    #[test]
    fn status_round_trips_through_its_text() {
        for s in [Status::Pending, Status::Verified, Status::Expired] {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert_eq!(Status::parse("PENDING"), None);
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// customId: at most 128 Unicode scalar values, any of them, kept as given.
            #[test]
            fn custom_ids_are_at_most_128_scalar_values(
                chars in proptest::collection::vec(any::<char>(), 0..200)
            ) {
                let s: String = chars.iter().collect();
                match CustomId::parse(s.clone()) {
                    Ok(id) => {
                        prop_assert!(chars.len() <= CUSTOM_ID_MAX_CHARS);
                        prop_assert_eq!(id.as_str(), s.as_str());
                    }
                    Err(CustomIdError::TooLong) => prop_assert!(chars.len() > CUSTOM_ID_MAX_CHARS),
                }
            }
        }
    }
}
