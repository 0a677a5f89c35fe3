//! SQL of the OpenID4VP presentation requests (interface §7). Every function runs
//! inside the caller's transaction.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{min_age_column, verify_in};
use crate::clock::UnixTime;
use crate::domain::{InviteId, PresentationRequest, VerifyMethod};
use crate::store::{AnswerOutcome, StoreResult, VerifyOutcome};

const COLUMNS: &str = "state, nonce, min_age, created_at, expires_at, answered_at";

fn request_row(row: &Row<'_>) -> rusqlite::Result<PresentationRequest> {
    Ok(PresentationRequest {
        state: row.get(0)?,
        nonce: row.get(1)?,
        min_age: min_age_column(row, 2)?,
        created_at: row.get(3)?,
        expires_at: row.get(4)?,
        answered_at: row.get(5)?,
    })
}

pub fn live(
    conn: &Connection,
    invite: &InviteId,
    now: UnixTime,
) -> StoreResult<Option<PresentationRequest>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM presentation_requests
             WHERE invite_id = ?1 AND expires_at > ?2 AND answered_at IS NULL
             ORDER BY created_at DESC LIMIT 1"
        ))?
        .query_row(params![invite.as_str(), now], request_row)
        .optional()?)
}

pub fn open(
    conn: &Connection,
    invite: &InviteId,
    fresh: PresentationRequest,
) -> StoreResult<PresentationRequest> {
    // Two first visits at once must not show two different requests.
    if let Some(existing) = live(conn, invite, fresh.created_at)? {
        return Ok(existing);
    }
    // Requests past their time are of no further use; keep only what is needed.
    conn.prepare_cached(
        "DELETE FROM presentation_requests
         WHERE invite_id = ?1 AND expires_at <= ?2 AND answered_at IS NULL",
    )?
    .execute(params![invite.as_str(), fresh.created_at])?;
    conn.prepare_cached(
        "INSERT INTO presentation_requests
             (state, invite_id, nonce, min_age, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        fresh.state,
        invite.as_str(),
        fresh.nonce,
        fresh.min_age.get(),
        fresh.created_at,
        fresh.expires_at
    ])?;
    Ok(fresh)
}

pub fn by_state(
    conn: &Connection,
    invite: &InviteId,
    state: &str,
) -> StoreResult<Option<PresentationRequest>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM presentation_requests WHERE state = ?1 AND invite_id = ?2"
        ))?
        .query_row(params![state, invite.as_str()], request_row)
        .optional()?)
}

pub fn answer(
    conn: &Connection,
    invite: &InviteId,
    state: &str,
    now: UnixTime,
) -> StoreResult<AnswerOutcome> {
    let live = by_state(conn, invite, state)?.is_some_and(|r| r.is_live(now));
    // The invite's own state decides first: unknown → 404, expired → 409.
    let outcome = if live {
        verify_in(conn, invite, VerifyMethod::EuAv, now)?
    } else {
        match super::invite_status(conn, invite, now)? {
            None => return Ok(AnswerOutcome::NotFound),
            Some(crate::domain::Status::Expired) => return Ok(AnswerOutcome::Expired),
            Some(_) => return Ok(AnswerOutcome::NotLive),
        }
    };
    let answered = match outcome {
        VerifyOutcome::NotFound => return Ok(AnswerOutcome::NotFound),
        VerifyOutcome::Expired => return Ok(AnswerOutcome::Expired),
        VerifyOutcome::Verified(r) => AnswerOutcome::Verified(r),
        VerifyOutcome::AlreadyVerified(r) => AnswerOutcome::AlreadyVerified(r),
    };
    // Single use: a replay of this state is refused from now on.
    conn.prepare_cached("UPDATE presentation_requests SET answered_at = ?2 WHERE state = ?1")?
        .execute(params![state, now])?;
    Ok(answered)
}
