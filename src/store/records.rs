//! What the store takes and gives: new rows, stored records, and the outcome of each
//! state-changing call.

use crate::clock::UnixTime;
use crate::domain::console::{ConsoleUsername, PasswordHash, SessionDigest};
use crate::domain::{
    Accept, CustomId, InviteId, MinAge, PasswordDigest, SiteId, SiteName, SiteUrl, Status,
    Username, VerifyMethod, WebhookFormat, WebhookSecret, ZkPolicy,
};

pub struct NewInvite {
    pub id: InviteId,
    pub site_id: SiteId,
    pub custom_id: Option<CustomId>,
    pub created_at: UnixTime,
    pub expires_at: UnixTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteRecord {
    pub id: InviteId,
    pub site_id: SiteId,
    pub custom_id: Option<String>,
    /// What is written down; see [`InviteRecord::status_at`] for what clients see.
    pub stored_status: Status,
    pub created_at: UnixTime,
    pub expires_at: UnixTime,
    /// How it was verified; `None` unless verified.
    pub method: Option<VerifyMethod>,
}

impl InviteRecord {
    pub fn status_at(&self, now: UnixTime) -> Status {
        Status::at(self.stored_status, self.expires_at, now)
    }
}

/// What a create did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    /// The invite is stored (with its idempotency key, if it had one).
    Created,
    /// The key was used within its window with the same body: this is the invite it made.
    Replayed(InviteRecord),
    /// The key was used within its window with another body; nothing was created.
    KeyConflict,
}

/// What cancelling an invite did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelOutcome {
    NotFound,
    /// It was pending and is now expired, with its `invite.expired` event.
    Cancelled(InviteRecord),
    AlreadyExpired(InviteRecord),
    /// It is verified, which cannot be undone.
    Verified,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyOutcome {
    NotFound,
    Verified(InviteRecord),
    AlreadyVerified(InviteRecord),
    Expired,
}

/// What answering a presentation request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerOutcome {
    NotFound,
    /// The invite has expired; the request stays as it was.
    Expired,
    /// `state` names no live request of this invite (unknown, answered before, or too old).
    NotLive,
    Verified(InviteRecord),
    AlreadyVerified(InviteRecord),
}

/// What authentication needs to know of a credential.
#[derive(Debug, Clone)]
pub struct CredentialRecord {
    pub site_id: SiteId,
    pub digest: PasswordDigest,
    pub revoked: bool,
}

pub struct NewCredential {
    pub username: Username,
    pub digest: PasswordDigest,
    pub created_at: UnixTime,
}

pub struct NewSite {
    pub id: SiteId,
    pub name: SiteName,
    pub redirect_url: Option<SiteUrl>,
    pub webhook_url: Option<SiteUrl>,
    pub sandbox: bool,
    pub min_age: MinAge,
    pub webhook_format: WebhookFormat,
    pub accept: Accept,
    pub zk: ZkPolicy,
    pub created_at: UnixTime,
    pub credential: NewCredential,
    pub webhook_secret: WebhookSecret,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialInfo {
    pub username: String,
    pub created_at: UnixTime,
    pub revoked_at: Option<UnixTime>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRecord {
    pub id: SiteId,
    pub name: String,
    pub redirect_url: Option<String>,
    pub webhook_url: Option<String>,
    pub sandbox: bool,
    pub min_age: MinAge,
    pub webhook_format: WebhookFormat,
    pub accept: Accept,
    pub zk: ZkPolicy,
    pub created_at: UnixTime,
    pub credentials: Vec<CredentialInfo>,
}

/// A change to a site; `None` leaves a field alone, `Some(None)` clears it.
#[derive(Default)]
pub struct SiteUpdate {
    pub redirect_url: Option<Option<SiteUrl>>,
    pub webhook_url: Option<Option<SiteUrl>>,
    pub min_age: Option<MinAge>,
    pub webhook_format: Option<WebhookFormat>,
    pub accept: Option<Accept>,
    pub zk: Option<ZkPolicy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevokeOutcome {
    Revoked,
    AlreadyRevoked,
    NotFound,
}

/// An invite with what its gateway page needs to know of the site.
#[derive(Debug, Clone)]
pub struct GatewayInvite {
    pub invite: InviteRecord,
    pub site_name: String,
    pub redirect_url: Option<String>,
    pub sandbox: bool,
    pub min_age: MinAge,
    /// The kinds of credential the site accepts.
    pub accept: Accept,
    /// Whether its requests ask for a zero-knowledge proof.
    pub zk: ZkPolicy,
}

/// A receipt signing key as stored: the 32-byte P-256 scalar. The newest is current.
#[derive(Clone)]
pub struct ReceiptKeyRecord {
    pub kid: String,
    pub private_key: Vec<u8>,
    pub created_at: UnixTime,
}

/// Brief: a private key has no place in logs.
impl std::fmt::Debug for ReceiptKeyRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiptKeyRecord")
            .field("kid", &self.kid)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

/// The keys of `stored` that can be read, oldest first; an unreadable one is logged by
/// its kid (never its bytes) and left out, so one bad row cannot hide the others.
pub fn readable_receipt_keys(stored: &[ReceiptKeyRecord]) -> Vec<crate::receipt::ReceiptKey> {
    stored
        .iter()
        .filter_map(
            |k| match crate::receipt::ReceiptKey::from_bytes(&k.private_key) {
                Ok(key) => Some(key),
                Err(e) => {
                    tracing::error!(kid = %k.kid, error = %e, "unreadable receipt key");
                    None
                }
            },
        )
        .collect()
}

/// What the store holds of an invite's receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptLookup {
    /// No such invite for this site.
    NotFound,
    /// The invite is pending or expired: it has no receipt.
    NotVerified,
    /// Verified before receipts were kept.
    Missing,
    Found(String),
}

/// A console account as the store makes it.
pub struct NewConsoleUser {
    pub username: ConsoleUsername,
    pub password_hash: PasswordHash,
    pub created_at: UnixTime,
}

/// What signing in needs to know of a console account.
#[derive(Debug, Clone)]
pub struct ConsoleUserRecord {
    pub username: ConsoleUsername,
    pub password_hash: PasswordHash,
}

/// A console session as the store keeps it: the id's digest, never the id.
pub struct NewSession {
    pub digest: SessionDigest,
    pub username: ConsoleUsername,
    pub created_at: UnixTime,
    pub expires_at: UnixTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub username: ConsoleUsername,
    pub created_at: UnixTime,
    pub expires_at: UnixTime,
}

/// What a count of [`Tally`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TallyEvent {
    Created,
    Verified(VerifyMethod),
    /// A wallet verification, by the credential status its receipt records (counted
    /// beside its `Verified`; verifier and sandbox verifications record none).
    CredentialStatus(crate::domain::CredentialStatus),
    Expired,
}

/// How many invites were created, verified (by a method, or by a credential status) or
/// expired on one UTC day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Days since the Unix epoch (UTC).
    pub day: i64,
    pub event: TallyEvent,
    pub count: u64,
}

/// An invite with the times of its changes, for the console's invite page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteDetail {
    pub invite: InviteRecord,
    pub verified_at: Option<UnixTime>,
    /// When it stopped being pending (verified, expired at its time, or cancelled).
    pub settled_at: Option<UnixTime>,
}
