//! Row mapping shared by every backend: each record type is read from a row by one
//! function here, whichever driver produced the row, so the backends differ only in SQL.
//! Stored text is parsed into domain types on the way out; anything that does not parse
//! is [`StoreError::Corrupt`], never a panic and never passed on unchecked.
//!
//! Each `*_COLUMNS` list names the columns its mapping function reads, in order; queries
//! select them with the table aliases given (`i` invites, `s` sites, `e` webhook events).

use super::{
    AttemptRecord, ConsoleUserRecord, CredentialInfo, CredentialRecord, DueEvent, EventRecord,
    GatewayInvite, InviteDetail, InviteRecord, ReceiptKeyRecord, ReceiptLookup, SessionRecord,
    SiteRecord, StoreError, StoreResult, Tally, TallyEvent,
};
use crate::clock::UnixMillis;
use crate::dcapi::ResponseKey;
use crate::domain::console::{ConsoleUsername, Failures, PasswordHash};
use crate::domain::idempotency::RememberedKey;
use crate::domain::webhook::{DeliveryState, EventId, EventType};
use crate::domain::{
    Accept, BodyDigest, DcApiSecrets, EncryptionNonce, InviteId, MinAge, PasswordDigest,
    PresentationRequest, SiteId, Status, VerifyMethod, WebhookFormat, WebhookSecret, ZkOffer,
    ZkPolicy,
};

/// Typed access to one row's columns by position.
pub trait Columns {
    fn text(&self, i: usize) -> StoreResult<String>;
    fn opt_text(&self, i: usize) -> StoreResult<Option<String>>;
    fn int(&self, i: usize) -> StoreResult<i64>;
    fn opt_int(&self, i: usize) -> StoreResult<Option<i64>>;
    fn boolean(&self, i: usize) -> StoreResult<bool>;
    fn bytes(&self, i: usize) -> StoreResult<Vec<u8>>;
    fn opt_bytes(&self, i: usize) -> StoreResult<Option<Vec<u8>>>;
}

pub(crate) fn unreadable(i: usize, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("column {i}: {e}"))
}

// Parsing single columns into domain types.

fn parsed<T>(
    row: &dyn Columns,
    i: usize,
    what: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> StoreResult<T> {
    let s = row.text(i)?;
    parse(&s).ok_or_else(|| StoreError::Corrupt(format!("{what} '{s}'")))
}

fn site_id(row: &dyn Columns, i: usize) -> StoreResult<SiteId> {
    parsed(row, i, "site id", |s| SiteId::parse(s).ok())
}

fn invite_id(row: &dyn Columns, i: usize) -> StoreResult<InviteId> {
    parsed(row, i, "invite id", InviteId::parse)
}

fn min_age(row: &dyn Columns, i: usize) -> StoreResult<MinAge> {
    let n = row.int(i)?;
    MinAge::new(n).ok_or_else(|| StoreError::Corrupt(format!("minimum age {n}")))
}

fn method(row: &dyn Columns, i: usize) -> StoreResult<Option<VerifyMethod>> {
    row.opt_text(i)?
        .map(|s| {
            VerifyMethod::parse(&s)
                .ok_or_else(|| StoreError::Corrupt(format!("verification method '{s}'")))
        })
        .transpose()
}

fn webhook_format(row: &dyn Columns, i: usize) -> StoreResult<WebhookFormat> {
    parsed(row, i, "webhook format", |s| WebhookFormat::parse(s).ok())
}

fn accept(row: &dyn Columns, i: usize) -> StoreResult<Accept> {
    parsed(row, i, "accepted kinds", |s| Accept::parse(s).ok())
}

fn zk_policy(row: &dyn Columns, i: usize) -> StoreResult<ZkPolicy> {
    parsed(row, i, "zero-knowledge policy", |s| ZkPolicy::parse(s).ok())
}

/// The offered circuits (NULL: none) and whether only a proof answers.
fn zk_offer(row: &dyn Columns, circuits: usize, required: usize) -> StoreResult<Option<ZkOffer>> {
    let Some(stored) = row.opt_text(circuits)? else {
        return Ok(None);
    };
    ZkOffer::from_stored(&stored, row.boolean(required)?)
        .map(Some)
        .ok_or_else(|| StoreError::Corrupt(format!("offered ZK circuits '{stored}'")))
}

fn count(row: &dyn Columns, i: usize) -> StoreResult<usize> {
    let n = row.int(i)?;
    usize::try_from(n).map_err(|_| StoreError::Corrupt(format!("count {n}")))
}

fn http_status(row: &dyn Columns, i: usize) -> StoreResult<Option<u16>> {
    row.opt_int(i)?
        .map(|n| u16::try_from(n).map_err(|_| StoreError::Corrupt(format!("HTTP status {n}"))))
        .transpose()
}

// One function per record type.

pub const INVITE_COLUMNS: &str = "i.invite_id, i.site_id, i.custom_id, i.status, i.created_at, \
     i.expires_at, i.verified_method";

/// An invite from the seven [`INVITE_COLUMNS`] starting at column `at`.
pub fn invite(row: &dyn Columns, at: usize) -> StoreResult<InviteRecord> {
    Ok(InviteRecord {
        id: invite_id(row, at)?,
        site_id: site_id(row, at + 1)?,
        custom_id: row.opt_text(at + 2)?,
        stored_status: parsed(row, at + 3, "status", Status::parse)?,
        created_at: row.int(at + 4)?,
        expires_at: row.int(at + 5)?,
        method: method(row, at + 6)?,
    })
}

/// [`INVITE_COLUMNS`] and then these, from `invites i JOIN sites s`.
pub const GATEWAY_COLUMNS: &str = "i.invite_id, i.site_id, i.custom_id, i.status, i.created_at, \
     i.expires_at, i.verified_method, s.name, s.redirect_url, s.sandbox, s.min_age, s.accept, s.zk";

pub fn gateway_invite(row: &dyn Columns) -> StoreResult<GatewayInvite> {
    Ok(GatewayInvite {
        invite: invite(row, 0)?,
        site_name: row.text(7)?,
        redirect_url: row.opt_text(8)?,
        sandbox: row.boolean(9)?,
        min_age: min_age(row, 10)?,
        accept: accept(row, 11)?,
        zk: zk_policy(row, 12)?,
    })
}

/// A remembered idempotency key, from `idempotency_keys`.
pub const REMEMBERED_KEY_COLUMNS: &str = "body_sha256, invite_id, created_at";

pub fn remembered_key(row: &dyn Columns) -> StoreResult<RememberedKey> {
    Ok(RememberedKey {
        body: BodyDigest::from_slice(&row.bytes(0)?)
            .ok_or_else(|| StoreError::Corrupt("body digest length".into()))?,
        invite: invite_id(row, 1)?,
        created_at: row.int(2)?,
    })
}

pub const CREDENTIAL_COLUMNS: &str = "site_id, password_digest, revoked_at IS NOT NULL";

pub fn credential(row: &dyn Columns) -> StoreResult<CredentialRecord> {
    let digest = row.bytes(1)?;
    Ok(CredentialRecord {
        site_id: site_id(row, 0)?,
        digest: PasswordDigest::from_slice(&digest)
            .ok_or_else(|| StoreError::Corrupt("password digest length".into()))?,
        revoked: row.boolean(2)?,
    })
}

pub const SITE_COLUMNS: &str =
    "site_id, name, redirect_url, webhook_url, sandbox, created_at, min_age, webhook_format, accept, zk";

/// A site without its credentials (they come from [`credential_info`]).
pub fn site(row: &dyn Columns) -> StoreResult<SiteRecord> {
    Ok(SiteRecord {
        id: site_id(row, 0)?,
        name: row.text(1)?,
        redirect_url: row.opt_text(2)?,
        webhook_url: row.opt_text(3)?,
        sandbox: row.boolean(4)?,
        created_at: row.int(5)?,
        min_age: min_age(row, 6)?,
        webhook_format: webhook_format(row, 7)?,
        accept: accept(row, 8)?,
        zk: zk_policy(row, 9)?,
        credentials: Vec::new(),
    })
}

pub const CREDENTIAL_INFO_COLUMNS: &str = "username, created_at, revoked_at";

pub fn credential_info(row: &dyn Columns) -> StoreResult<CredentialInfo> {
    Ok(CredentialInfo {
        username: row.text(0)?,
        created_at: row.int(1)?,
        revoked_at: row.opt_int(2)?,
    })
}

pub const REQUEST_COLUMNS: &str =
    "state, nonce, min_age, created_at, expires_at, answered_at, response_key, encryption_nonce, \
     zk_circuits, zk_required";

pub fn presentation_request(row: &dyn Columns) -> StoreResult<PresentationRequest> {
    Ok(PresentationRequest {
        state: row.text(0)?,
        nonce: row.text(1)?,
        min_age: min_age(row, 2)?,
        created_at: row.int(3)?,
        expires_at: row.int(4)?,
        answered_at: row.opt_int(5)?,
        dc_api: dc_api_secrets(row, 6, 7)?,
        zk: zk_offer(row, 8, 9)?,
    })
}

/// Both columns or neither; the key a valid P-256 scalar, the nonce 16 to 64 bytes.
fn dc_api_secrets(
    row: &dyn Columns,
    key: usize,
    nonce: usize,
) -> StoreResult<Option<DcApiSecrets>> {
    match (row.opt_bytes(key)?, row.opt_bytes(nonce)?) {
        (None, None) => Ok(None),
        (Some(k), Some(n)) => Ok(Some(DcApiSecrets {
            response_key: ResponseKey::from_bytes(&k)
                .map_err(|e| StoreError::Corrupt(format!("response key: {e}")))?,
            encryption_nonce: EncryptionNonce::from_bytes(n)
                .ok_or_else(|| StoreError::Corrupt("encryption nonce length".into()))?,
        })),
        _ => Err(StoreError::Corrupt(
            "a request with only one of response_key and encryption_nonce".into(),
        )),
    }
}

/// A claimed event with its invite, from `webhook_events e JOIN invites i JOIN sites s`.
pub const DUE_EVENT_COLUMNS: &str = "e.event_id, e.event_type, e.occurred_at, e.attempts, \
     e.round_start, s.webhook_url, s.webhook_format, i.invite_id, i.site_id, i.custom_id, \
     i.status, i.created_at, i.expires_at, i.verified_method, i.receipt";

/// A claimed event without its secrets (they come from [`secret`]).
pub fn due_event(row: &dyn Columns) -> StoreResult<DueEvent> {
    let attempts = count(row, 3)?;
    let round_start = count(row, 4)?;
    Ok(DueEvent {
        event_id: parsed(row, 0, "event id", EventId::parse)?,
        event_type: parsed(row, 1, "event type", EventType::parse)?,
        occurred_at: row.int(2)?,
        attempts_in_round: attempts
            .checked_sub(round_start)
            .ok_or_else(|| StoreError::Corrupt("round starts after its attempts".into()))?,
        attempts,
        webhook_url: row.opt_text(5)?,
        webhook_format: webhook_format(row, 6)?,
        invite: invite(row, 7)?,
        secrets: Vec::new(),
        receipt: row.opt_text(14)?,
    })
}

pub fn secret(row: &dyn Columns) -> StoreResult<WebhookSecret> {
    Ok(WebhookSecret::from_stored(row.text(0)?))
}

pub const EVENT_COLUMNS: &str = "event_id, event_type, invite_id, occurred_at, state, \
     next_attempt_ms, last_status, last_error";

/// An event without its attempts (they come from [`attempt`]).
pub fn event(row: &dyn Columns) -> StoreResult<EventRecord> {
    Ok(EventRecord {
        event_id: parsed(row, 0, "event id", EventId::parse)?,
        event_type: parsed(row, 1, "event type", EventType::parse)?,
        invite_id: row.text(2)?,
        occurred_at: row.int(3)?,
        state: parsed(row, 4, "delivery state", DeliveryState::parse)?,
        next_attempt: row.opt_int(5)?.map(UnixMillis),
        last_status: http_status(row, 6)?,
        last_error: row.opt_text(7)?,
        attempts: Vec::new(),
    })
}

pub const ATTEMPT_COLUMNS: &str = "attempt, started_ms, duration_ms, http_status, error";

pub fn attempt(row: &dyn Columns) -> StoreResult<AttemptRecord> {
    Ok(AttemptRecord {
        attempt: count(row, 0)?,
        started: UnixMillis(row.int(1)?),
        duration_ms: row.int(2)?,
        http_status: http_status(row, 3)?,
        error: row.opt_text(4)?,
    })
}

pub const CONSOLE_USER_COLUMNS: &str = "username, password_hash";

pub fn console_user(row: &dyn Columns) -> StoreResult<ConsoleUserRecord> {
    Ok(ConsoleUserRecord {
        username: parsed(row, 0, "console user name", |s| {
            ConsoleUsername::parse(s).ok()
        })?,
        // Never echoed into the error: it is a password hash.
        password_hash: PasswordHash::parse(&row.text(1)?)
            .ok_or_else(|| StoreError::Corrupt("a console password hash".into()))?,
    })
}

/// A live session, from `console_sessions s`.
pub const SESSION_COLUMNS: &str = "s.username, s.created_at, s.expires_at";

pub fn session(row: &dyn Columns) -> StoreResult<SessionRecord> {
    Ok(SessionRecord {
        username: parsed(row, 0, "console user name", |s| {
            ConsoleUsername::parse(s).ok()
        })?,
        created_at: row.int(1)?,
        expires_at: row.int(2)?,
    })
}

pub const FAILURES_COLUMNS: &str = "failures, last_failure_at";

pub fn failures(row: &dyn Columns) -> StoreResult<Failures> {
    let n = row.int(0)?;
    Ok(Failures {
        count: u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("failures {n}")))?,
        last_at: row.int(1)?,
    })
}

/// A day's count of one event, from `invite_tallies` summed by day, event and method.
pub const TALLY_COLUMNS: &str = "day, event, method, CAST(SUM(n) AS BIGINT)";

pub fn tally(row: &dyn Columns) -> StoreResult<Tally> {
    let (event, method) = (row.text(1)?, row.text(2)?);
    let n = row.int(3)?;
    Ok(Tally {
        day: row.int(0)?,
        event: TallyEvent::from_columns(&event, &method)
            .ok_or_else(|| StoreError::Corrupt(format!("tally of '{event}' '{method}'")))?,
        count: u64::try_from(n).map_err(|_| StoreError::Corrupt(format!("tally {n}")))?,
    })
}

/// [`INVITE_COLUMNS`] and then these.
pub const INVITE_DETAIL_COLUMNS: &str = "i.invite_id, i.site_id, i.custom_id, i.status, \
     i.created_at, i.expires_at, i.verified_method, i.verified_at, i.settled_at";

pub fn invite_detail(row: &dyn Columns) -> StoreResult<InviteDetail> {
    Ok(InviteDetail {
        invite: invite(row, 0)?,
        verified_at: row.opt_int(7)?,
        settled_at: row.opt_int(8)?,
    })
}

/// A site id alone, from its first column.
pub fn site_id_only(row: &dyn Columns) -> StoreResult<SiteId> {
    site_id(row, 0)
}

/// An invite id alone, from its first column.
pub fn invite_id_only(row: &dyn Columns) -> StoreResult<InviteId> {
    invite_id(row, 0)
}

/// A credential's `revoked_at`, from its first column.
pub fn revoked_at(row: &dyn Columns) -> StoreResult<Option<i64>> {
    row.opt_int(0)
}

/// A receipt key, from `receipt_keys`.
pub const RECEIPT_KEY_COLUMNS: &str = "kid, private_key, created_at";

pub fn receipt_key(row: &dyn Columns) -> StoreResult<ReceiptKeyRecord> {
    Ok(ReceiptKeyRecord {
        kid: row.text(0)?,
        private_key: row.bytes(1)?,
        created_at: row.int(2)?,
    })
}

/// An invite's receipt from its `status, receipt`.
pub fn receipt_lookup(row: &dyn Columns) -> StoreResult<ReceiptLookup> {
    let status = parsed(row, 0, "status", Status::parse)?;
    Ok(match (status, row.opt_text(1)?) {
        (Status::Verified, Some(receipt)) => ReceiptLookup::Found(receipt),
        (Status::Verified, None) => ReceiptLookup::Missing,
        _ => ReceiptLookup::NotVerified,
    })
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
