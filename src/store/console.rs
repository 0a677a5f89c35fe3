//! The operator console's capability (docs/console.md): its accounts, sessions and sign-in
//! throttle, the per-day tallies of the overview, and the invite page's extra reads.

use std::ops::Range;

use super::{
    ConsoleUserRecord, EventRecord, InviteDetail, NewConsoleUser, NewSession, SessionRecord,
    StoreResult, Tally, TallyEvent,
};
use crate::clock::UnixTime;
use crate::domain::console::{ConsoleUsername, Failures, SessionDigest};
use crate::domain::{CredentialStatus, InviteId, SiteId, VerifyMethod};

/// Seconds in a tally's day (UTC days since the Unix epoch).
pub const DAY_SECS: i64 = 86_400;

/// The UTC day `t` falls in.
pub fn day_of(t: UnixTime) -> i64 {
    t.div_euclid(DAY_SECS)
}

impl TallyEvent {
    /// How the event is written in `invite_tallies` (`event`, `method`): a
    /// `credential-status` row keeps the status in `method`, the column that says what
    /// a verification was by.
    pub fn columns(self) -> (&'static str, &'static str) {
        match self {
            TallyEvent::Created => ("created", ""),
            TallyEvent::Verified(method) => ("verified", method.as_str()),
            TallyEvent::CredentialStatus(status) => ("credential-status", status.as_str()),
            TallyEvent::Expired => ("expired", ""),
        }
    }

    pub fn from_columns(event: &str, method: &str) -> Option<Self> {
        match event {
            "created" => Some(TallyEvent::Created),
            "expired" => Some(TallyEvent::Expired),
            "verified" => VerifyMethod::parse(method).map(TallyEvent::Verified),
            "credential-status" => {
                CredentialStatus::parse(method).map(TallyEvent::CredentialStatus)
            }
            _ => None,
        }
    }
}

#[async_trait::async_trait]
pub trait ConsoleStore: Send + Sync + 'static {
    /// `false` when the name is taken already.
    async fn create_console_user(&self, user: NewConsoleUser) -> StoreResult<bool>;

    /// Deletes the account and every session of it, in one transaction; `false` when
    /// there is no such account.
    async fn delete_console_user(&self, username: &ConsoleUsername) -> StoreResult<bool>;

    async fn console_user(
        &self,
        username: &ConsoleUsername,
    ) -> StoreResult<Option<ConsoleUserRecord>>;

    /// The current streak of failed sign-ins of `username` from `address`.
    async fn sign_in_failures(
        &self,
        username: &ConsoleUsername,
        address: &str,
    ) -> StoreResult<Option<Failures>>;

    /// Counts one more failed sign-in ([`Failures::after`]); returns the streak.
    async fn record_sign_in_failure(
        &self,
        username: &ConsoleUsername,
        address: &str,
        now: UnixTime,
    ) -> StoreResult<Failures>;

    /// Stores the session unless its account is gone (`false`) and ends the streak of
    /// failures of its name from `address`. (Retention drops expired sessions and old
    /// streaks: `RetentionStore::drop_spent`.)
    async fn start_session(&self, session: NewSession, address: &str) -> StoreResult<bool>;

    /// The session with this digest, if it is live at `now` and its account exists.
    /// Always read afresh: a deleted account or an ended session is seen at once.
    async fn console_session(
        &self,
        digest: &SessionDigest,
        now: UnixTime,
    ) -> StoreResult<Option<SessionRecord>>;

    async fn end_session(&self, digest: &SessionDigest) -> StoreResult<()>;

    /// Every tally of the days in `days`, summed over the rows that hold them.
    async fn tallies(&self, days: Range<i64>) -> StoreResult<Vec<Tally>>;

    async fn invite_detail(&self, site: SiteId, id: &InviteId)
        -> StoreResult<Option<InviteDetail>>;

    /// The invite's webhook events, oldest first, with their attempts.
    async fn invite_events(&self, site: SiteId, id: &InviteId) -> StoreResult<Vec<EventRecord>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_events_are_written_and_read_alike() {
        for event in [
            TallyEvent::Created,
            TallyEvent::Expired,
            TallyEvent::Verified(VerifyMethod::EU_AV),
            TallyEvent::Verified(VerifyMethod::Sandbox),
            TallyEvent::Verified(VerifyMethod::Verifier),
            TallyEvent::CredentialStatus(CredentialStatus::Valid),
            TallyEvent::CredentialStatus(CredentialStatus::None),
        ] {
            let (e, m) = event.columns();
            assert_eq!(TallyEvent::from_columns(e, m), Some(event));
        }
        assert_eq!(TallyEvent::from_columns("verified", "magic"), None);
        assert_eq!(
            TallyEvent::from_columns("credential-status", "revoked"),
            None
        );
        assert_eq!(day_of(86_399), 0);
        assert_eq!(day_of(86_400), 1);
        assert_eq!(day_of(-1), -1);
    }
}
