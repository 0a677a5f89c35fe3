//! SQL of the presentation requests (docs/wallets.md#the-wallet-link, and the secrets of docs/dc-api.md#the-requests kept with them). A
//! request made on one node can be shown again and answered on any other.

use deadpool_postgres::{GenericClient, Object};
use p256::elliptic_curve::zeroize::Zeroizing;

use super::{changes, execute, invites, may_be_stored, one};
use crate::clock::UnixTime;
use crate::domain::{DcApiSecrets, InviteId, PresentationRequest, ZkOffer};
use crate::receipt::Evidence;
use crate::store::rows::{self, REQUEST_COLUMNS};
use crate::store::transitions::{self, AnswerStep};
use crate::store::{AnswerOutcome, StoreResult};

pub async fn live(
    client: &impl GenericClient,
    invite: &InviteId,
    now: UnixTime,
) -> StoreResult<Option<PresentationRequest>> {
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM presentation_requests
         WHERE invite_id = $1 AND expires_at > $2 AND answered_at IS NULL
         ORDER BY created_at DESC LIMIT 1"
    );
    one(
        client,
        &sql,
        &[&invite.as_str(), &now],
        rows::presentation_request,
    )
    .await
}

/// Holding the invite's row lock while looking, two first visits at once — on one node or
/// two — queue: the second finds the first's request live and shows that one.
pub async fn open(
    client: &mut Object,
    invite: &InviteId,
    fresh: PresentationRequest,
) -> StoreResult<PresentationRequest> {
    let tx = client.transaction().await?;
    // An unknown invite is refused below by the foreign key, as SQLite refuses it.
    invites::locked(&tx, invite).await?;
    if let Some(existing) = live(&tx, invite, fresh.created_at).await? {
        let live = complete(&tx, existing, fresh.dc_api).await?;
        tx.commit().await?;
        return Ok(live);
    }
    // Requests past their time are of no further use; keep only what is needed.
    execute(
        &tx,
        "DELETE FROM presentation_requests
         WHERE invite_id = $1 AND expires_at <= $2 AND answered_at IS NULL",
        &[&invite.as_str(), &fresh.created_at],
    )
    .await?;
    let (key, nonce) = secret_bytes(fresh.dc_api.as_ref());
    execute(
        &tx,
        "INSERT INTO presentation_requests
             (state, invite_id, nonce, min_age, created_at, expires_at,
              response_key, encryption_nonce, zk_circuits, zk_required)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &fresh.state,
            &invite.as_str(),
            &fresh.nonce,
            &i64::from(fresh.min_age.get()),
            &fresh.created_at,
            &fresh.expires_at,
            &key.as_ref().map(|k| k.as_slice()),
            &nonce,
            &fresh.zk.as_ref().map(ZkOffer::stored_circuits),
            &fresh.zk.as_ref().is_some_and(|z| z.required),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(fresh)
}

/// A live request that an older release made has no DC API secrets: it is given
/// `secrets` (state and nonce stay, so a wallet that read its link still answers it).
/// The caller holds the invite's lock, so nodes agree on which secrets it gets.
async fn complete(
    client: &impl GenericClient,
    mut existing: PresentationRequest,
    secrets: Option<DcApiSecrets>,
) -> StoreResult<PresentationRequest> {
    if existing.dc_api.is_some() || secrets.is_none() {
        return Ok(existing);
    }
    let (key, nonce) = secret_bytes(secrets.as_ref());
    execute(
        client,
        "UPDATE presentation_requests SET response_key = $2, encryption_nonce = $3
         WHERE state = $1 AND response_key IS NULL",
        &[&existing.state, &key.as_ref().map(|k| k.as_slice()), &nonce],
    )
    .await?;
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

pub async fn by_state(
    client: &impl GenericClient,
    invite: &InviteId,
    state: &str,
) -> StoreResult<Option<PresentationRequest>> {
    if !may_be_stored(state) {
        return Ok(None);
    }
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM presentation_requests WHERE state = $1 AND invite_id = $2"
    );
    one(
        client,
        &sql,
        &[&state, &invite.as_str()],
        rows::presentation_request,
    )
    .await
}

/// The invite's lock, then the request's: two answers with one `state` (on any nodes)
/// queue, and the second finds the request used up.
pub async fn answer(
    client: &mut Object,
    invite: &InviteId,
    state: &str,
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<AnswerOutcome> {
    let tx = client.transaction().await?;
    let record = invites::locked(&tx, invite).await?;
    let sql = format!(
        "SELECT {REQUEST_COLUMNS} FROM presentation_requests
         WHERE state = $1 AND invite_id = $2 FOR UPDATE"
    );
    let request = if may_be_stored(state) {
        one(
            &tx,
            &sql,
            &[&state, &invite.as_str()],
            rows::presentation_request,
        )
        .await?
    } else {
        None
    };
    let outcome = match transitions::answer(record, request.as_ref(), evidence.wallet_method(), now)
    {
        AnswerStep::Done(outcome) => return Ok(outcome),
        AnswerStep::MarkAnswered(outcome) => outcome,
        AnswerStep::VerifyAndMark(record) => {
            changes::write_verified(&tx, &record, evidence, now).await?;
            AnswerOutcome::Verified(record)
        }
    };
    // Single use: a replay of this state is refused from now on. The response key has
    // no further use: it goes now rather than with the row.
    execute(
        &tx,
        "UPDATE presentation_requests
         SET answered_at = $2, response_key = NULL, encryption_nonce = NULL
         WHERE state = $1",
        &[&state, &now],
    )
    .await?;
    tx.commit().await?;
    Ok(outcome)
}
