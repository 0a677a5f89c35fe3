//! SQL of the presentation requests (docs/wallets.md#the-wallet-link, and the secrets of docs/dc-api.md#the-requests kept with them).
//! Every function runs inside the caller's transaction.

use p256::elliptic_curve::zeroize::Zeroizing;
use rusqlite::{params, Connection};

use super::hooks::Tx;
use super::{changes, invites, one};
use crate::clock::UnixTime;
use crate::domain::{DcApiSecrets, InviteId, PresentationRequest, ZkOffer};
use crate::receipt::Evidence;
use crate::store::rows::{self, REQUEST_COLUMNS};
use crate::store::transitions::{self, AnswerStep};
use crate::store::{AnswerOutcome, StoreResult};

pub fn live(
    conn: &Connection,
    invite: &InviteId,
    now: UnixTime,
) -> StoreResult<Option<PresentationRequest>> {
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM presentation_requests
         WHERE invite_id = ?1 AND expires_at > ?2 AND answered_at IS NULL
         ORDER BY created_at DESC LIMIT 1"
    );
    one(
        conn,
        &sql,
        params![invite.as_str(), now],
        rows::presentation_request,
    )
}

/// The single writer serializes this with every other open of the same invite, so two
/// first visits at once see one request.
pub fn open(
    conn: &Connection,
    invite: &InviteId,
    fresh: PresentationRequest,
) -> StoreResult<PresentationRequest> {
    if let Some(existing) = live(conn, invite, fresh.created_at)? {
        return complete(conn, existing, fresh.dc_api);
    }
    // Requests past their time are of no further use; keep only what is needed.
    conn.prepare_cached(
        "DELETE FROM presentation_requests
         WHERE invite_id = ?1 AND expires_at <= ?2 AND answered_at IS NULL",
    )?
    .execute(params![invite.as_str(), fresh.created_at])?;
    let (key, nonce) = secret_bytes(fresh.dc_api.as_ref());
    conn.prepare_cached(
        "INSERT INTO presentation_requests
             (state, invite_id, nonce, min_age, created_at, expires_at,
              response_key, encryption_nonce, zk_circuits, zk_required)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        fresh.state,
        invite.as_str(),
        fresh.nonce,
        fresh.min_age.get(),
        fresh.created_at,
        fresh.expires_at,
        key.as_ref().map(|k| k.as_slice()),
        nonce,
        fresh.zk.as_ref().map(ZkOffer::stored_circuits),
        fresh.zk.as_ref().is_some_and(|z| z.required)
    ])?;
    Ok(fresh)
}

/// A live request that an older release made has no DC API secrets: it is given
/// `secrets` (state and nonce stay, so a wallet that read its link still answers it).
fn complete(
    conn: &Connection,
    mut existing: PresentationRequest,
    secrets: Option<DcApiSecrets>,
) -> StoreResult<PresentationRequest> {
    if existing.dc_api.is_some() || secrets.is_none() {
        return Ok(existing);
    }
    let (key, nonce) = secret_bytes(secrets.as_ref());
    conn.prepare_cached(
        "UPDATE presentation_requests SET response_key = ?2, encryption_nonce = ?3
         WHERE state = ?1 AND response_key IS NULL",
    )?
    .execute(params![
        existing.state,
        key.as_ref().map(|k| k.as_slice()),
        nonce
    ])?;
    existing.dc_api = secrets;
    Ok(existing)
}

/// The columns `response_key` and `encryption_nonce` (the key wiped once written).
fn secret_bytes(secrets: Option<&DcApiSecrets>) -> (Option<Zeroizing<[u8; 32]>>, Option<&[u8]>) {
    (
        secrets.map(|s| s.response_key.to_bytes()),
        secrets.map(|s| s.encryption_nonce.as_bytes()),
    )
}

pub fn by_state(
    conn: &Connection,
    invite: &InviteId,
    state: &str,
) -> StoreResult<Option<PresentationRequest>> {
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM presentation_requests WHERE state = ?1 AND invite_id = ?2"
    );
    one(
        conn,
        &sql,
        params![state, invite.as_str()],
        rows::presentation_request,
    )
}

pub fn answer(
    tx: &mut Tx<'_>,
    invite: &InviteId,
    state: &str,
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<AnswerOutcome> {
    let request = by_state(tx, invite, state)?;
    let step = transitions::answer(
        invites::by_id(tx, invite)?,
        request.as_ref(),
        evidence.wallet_method(),
        now,
    );
    let outcome = match step {
        AnswerStep::Done(outcome) => return Ok(outcome),
        AnswerStep::MarkAnswered(outcome) => outcome,
        AnswerStep::VerifyAndMark(record) => {
            changes::write_verified(tx, &record, evidence, now)?;
            AnswerOutcome::Verified(record)
        }
    };
    // Single use: a replay of this state is refused from now on. The response key has
    // no further use: it goes now rather than with the row.
    tx.prepare_cached(
        "UPDATE presentation_requests
         SET answered_at = ?2, response_key = NULL, encryption_nonce = NULL
         WHERE state = ?1",
    )?
    .execute(params![state, now])?;
    Ok(outcome)
}
