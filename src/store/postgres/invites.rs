//! SQL of invites: creating, reading, listing, verifying and cancelling them.

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::{all, bigint, execute, one, webhooks};
use crate::clock::UnixTime;
use crate::domain::idempotency::{self, Repeat, IDEMPOTENCY_WINDOW_SECS};
use crate::domain::webhook::EventType;
use crate::domain::{IdempotentRequest, InviteId, SiteId, VerifyMethod};
use crate::store::rows::{self, GATEWAY_COLUMNS, INVITE_COLUMNS, REMEMBERED_KEY_COLUMNS};
use crate::store::transitions::{self, CancelStep, VerifyStep};
use crate::store::{
    CancelOutcome, CreateOutcome, GatewayInvite, InviteRecord, InviteSlice, NewInvite, StoreError,
    StoreResult, VerifyOutcome,
};

/// How often a create with a key starts over when the key's invite vanished (erased)
/// between finding the key taken and reading it.
const KEY_ATTEMPTS: usize = 3;

/// Without a key: one statement. With one: the invite and the key in one transaction.
/// The key's unique index makes repeats queue: a second insert of the key waits for the
/// first's transaction, and once that commits finds the key taken (unless it has gone
/// stale: then it takes the key over), rolls its own invite back and replays the first.
pub async fn create(
    client: &mut Object,
    invite: &NewInvite,
    key: Option<&IdempotentRequest>,
) -> StoreResult<CreateOutcome> {
    let Some(key) = key else {
        insert(&*client, invite).await?;
        return Ok(CreateOutcome::Created);
    };
    let site = invite.site_id.to_string();
    for _ in 0..KEY_ATTEMPTS {
        let tx = client.transaction().await?;
        insert(&tx, invite).await?;
        let taken = one(
            &tx,
            "INSERT INTO idempotency_keys (site_id, key, body_sha256, invite_id, created_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (site_id, key) DO UPDATE
                 SET body_sha256 = EXCLUDED.body_sha256, invite_id = EXCLUDED.invite_id,
                     created_at = EXCLUDED.created_at
                 WHERE idempotency_keys.created_at <= $6
             RETURNING 1::BIGINT",
            &[
                &site,
                &key.key.as_str(),
                &&key.body.0[..],
                &invite.id.as_str(),
                &invite.created_at,
                &(invite.created_at - IDEMPOTENCY_WINDOW_SECS),
            ],
            |_| Ok(()),
        )
        .await?;
        if taken.is_some() {
            tx.commit().await?;
            return Ok(CreateOutcome::Created);
        }
        tx.rollback().await?;
        let sql = format!(
            "SELECT {REMEMBERED_KEY_COLUMNS} FROM idempotency_keys WHERE site_id = $1 AND key = $2"
        );
        let remembered = one(
            &*client,
            &sql,
            &[&site, &key.key.as_str()],
            rows::remembered_key,
        )
        .await?;
        match idempotency::repeat(remembered, key.body, invite.created_at) {
            Repeat::Conflict => return Ok(CreateOutcome::KeyConflict),
            Repeat::Replay(id) => {
                if let Some(first) = of_site(&*client, invite.site_id, &id).await? {
                    return Ok(CreateOutcome::Replayed(first));
                }
            }
            Repeat::Create => {}
        }
    }
    Err(StoreError::Unavailable(
        "an idempotency key kept changing under a create; try again".into(),
    ))
}

/// One statement, committed before it answers (`synchronous_commit` as the server has it).
async fn insert(client: &impl GenericClient, invite: &NewInvite) -> StoreResult<()> {
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

/// One slice's query: `$1` site, `$2` stored status, `$3` created from, `($4, $5)` the
/// position to start below, `[$6, $7)` expires, `$8` limit; `$9` the customId, if any.
/// Invite ids compare by their bytes (`"C"`), as the indexes and the merge order them.
/// So is the status, as the indexes have it: then a slice can never be read from the
/// sweeper's partial index (`WHERE status = 'pending'`, in the default collation), which
/// the planner would otherwise pick for a bound `'pending'` and read a whole day's pending
/// invites to sort them, where the created range alone bounds the scan.
fn slice_sql(by_custom_id: bool) -> String {
    let custom_id = if by_custom_id {
        "AND i.custom_id = $9"
    } else {
        ""
    };
    format!(
        "SELECT {INVITE_COLUMNS} FROM invites i
         WHERE i.site_id = $1 AND i.status COLLATE \"C\" = $2 {custom_id}
           AND i.created_at >= $3 AND (i.created_at, i.invite_id COLLATE \"C\") < ($4, $5)
           AND i.expires_at >= $6 AND i.expires_at < $7
         ORDER BY i.created_at DESC, i.invite_id COLLATE \"C\" DESC LIMIT $8"
    )
}

/// Each slice is one range of `invites_by_status`, or of `invites_by_custom_id` when it
/// names a customId.
pub async fn slices(
    client: &impl GenericClient,
    site: SiteId,
    slices: &[InviteSlice],
) -> StoreResult<Vec<Vec<InviteRecord>>> {
    let site = site.to_string();
    let mut found = Vec::with_capacity(slices.len());
    for s in slices {
        let limit = bigint(s.limit);
        let stored = s.stored.as_str();
        let custom_id = s.custom_id.as_ref().map(|c| c.as_str().as_bytes());
        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
            &site,
            &stored,
            &s.created_from,
            &s.before.0,
            &s.before.1,
            &s.expires.start,
            &s.expires.end,
            &limit,
        ];
        if let Some(custom_id) = &custom_id {
            params.push(custom_id);
        }
        let sql = slice_sql(custom_id.is_some());
        found.push(all(client, &sql, &params, |row| rows::invite(row, 0)).await?);
    }
    Ok(found)
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

/// [`transitions::cancel`] on the invite as it stands once locked.
pub async fn cancel(
    client: &mut Object,
    site: SiteId,
    id: &InviteId,
    now: UnixTime,
) -> StoreResult<CancelOutcome> {
    let tx = client.transaction().await?;
    let outcome = match transitions::cancel(locked(&tx, id).await?, site, now) {
        CancelStep::Done(outcome) => outcome,
        CancelStep::Expire(record) => {
            execute(
                &tx,
                "UPDATE invites SET status = 'expired', settled_at = $2 WHERE invite_id = $1",
                &[&record.id.as_str(), &now],
            )
            .await?;
            let ids = [record.id.as_str()];
            webhooks::record_events(&tx, &ids, EventType::InviteExpired, now).await?;
            CancelOutcome::Cancelled(record)
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
        "UPDATE invites
         SET status = 'verified', verified_at = $2, verified_method = $3, settled_at = $2
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
