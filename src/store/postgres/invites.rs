//! SQL of invites: creating, reading and verifying them.

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::{execute, one, webhooks};
use crate::clock::UnixTime;
use crate::domain::webhook::EventType;
use crate::domain::{InviteId, SiteId, VerifyMethod};
use crate::store::rows::{self, GATEWAY_COLUMNS, INVITE_COLUMNS};
use crate::store::transitions::{self, VerifyStep};
use crate::store::{GatewayInvite, InviteRecord, NewInvite, StoreResult, VerifyOutcome};

/// One statement, committed before it answers (`synchronous_commit` as the server has it).
pub async fn insert(client: &impl GenericClient, invite: &NewInvite) -> StoreResult<()> {
    execute(
        client,
        "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
         VALUES ($1, $2, $3, 'pending', $4, $5)",
        &[
            &invite.id.as_str(),
            &invite.site_id.to_string(),
            &invite.custom_id.as_ref().map(|c| c.as_str().as_bytes()),
            &invite.created_at,
            &invite.expires_at,
        ],
    )
    .await?;
    Ok(())
}

/// The invite `id` if it belongs to `site`.
pub async fn of_site(
    client: &impl GenericClient,
    site: SiteId,
    id: &InviteId,
) -> StoreResult<Option<InviteRecord>> {
    let sql =
        format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = $1 AND i.site_id = $2");
    one(client, &sql, &[&id.as_str(), &site.to_string()], |row| {
        rows::invite(row, 0)
    })
    .await
}

pub async fn gateway(
    client: &impl GenericClient,
    id: &InviteId,
) -> StoreResult<Option<GatewayInvite>> {
    let sql = format!(
        "SELECT {GATEWAY_COLUMNS} FROM invites i JOIN sites s ON s.site_id = i.site_id
         WHERE i.invite_id = $1"
    );
    one(client, &sql, &[&id.as_str()], rows::gateway_invite).await
}

/// The invite `id`, locked until the transaction ends. Every change to an invite or its
/// presentation requests takes this lock first, so such changes queue rather than race.
pub async fn locked(tx: &Transaction<'_>, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
    let sql = format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = $1 FOR UPDATE");
    one(tx, &sql, &[&id.as_str()], |row| rows::invite(row, 0)).await
}

/// [`transitions::verify`] on the invite as it stands once locked.
pub async fn verify(
    client: &mut Object,
    id: &InviteId,
    method: VerifyMethod,
    now: UnixTime,
) -> StoreResult<VerifyOutcome> {
    let tx = client.transaction().await?;
    let outcome = match transitions::verify(locked(&tx, id).await?, method, now) {
        VerifyStep::Done(outcome) => outcome,
        VerifyStep::Verify(record) => {
            write_verified(&tx, &record, now).await?;
            VerifyOutcome::Verified(record)
        }
    };
    tx.commit().await?;
    Ok(outcome)
}

/// Stores `record` as verified at `now`, with its `invite.verified` event.
pub async fn write_verified(
    tx: &Transaction<'_>,
    record: &InviteRecord,
    now: UnixTime,
) -> StoreResult<()> {
    execute(
        tx,
        "UPDATE invites SET status = 'verified', verified_at = $2, verified_method = $3
         WHERE invite_id = $1",
        &[
            &record.id.as_str(),
            &now,
            &record.method.map(|m| m.as_str()),
        ],
    )
    .await?;
    webhooks::record_events(tx, &[record.id.as_str()], EventType::InviteVerified, now).await
}
