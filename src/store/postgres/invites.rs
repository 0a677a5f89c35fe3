//! SQL of invites: creating, reading, listing, verifying and cancelling them.

use std::collections::HashMap;

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::batch::Batch;
use super::{all, bigint, changes, one};
use crate::clock::UnixTime;
use crate::domain::idempotency::{self, Repeat, IDEMPOTENCY_WINDOW_SECS};
use crate::domain::{IdempotentRequest, InviteId, SiteId, VerifyMethod};
use crate::receipt::Evidence;
use crate::store::rows::{self, GATEWAY_COLUMNS, INVITE_COLUMNS, REMEMBERED_KEY_COLUMNS};
use crate::store::transitions::{self, CancelStep, VerifyStep};
use crate::store::{
    CancelOutcome, CreateOutcome, GatewayInvite, InviteRecord, InviteSlice, NewInvite, StoreError,
    StoreResult, VerifyOutcome,
};

/// How often a create with a key starts over when the key's invite vanished (erased)
/// between finding the key taken and reading it.
const KEY_ATTEMPTS: usize = 3;

/// A create with a key: the invite and the key in one transaction (those without go to
/// [`InsertBatch`]).
/// The key's unique index makes repeats queue: a second insert of the key waits for the
/// first's transaction, and once that commits finds the key taken (unless it has gone
/// stale: then it takes the key over), rolls its own invite back and replays the first.
pub async fn create(
    client: &mut Object,
    invite: &NewInvite,
    key: &IdempotentRequest,
) -> StoreResult<CreateOutcome> {
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

/// One statement, committed before it answers (`synchronous_commit` as the server has it)
/// unless inside a transaction.
async fn insert(client: &impl GenericClient, invite: &NewInvite) -> StoreResult<()> {
    insert_many(client, std::slice::from_ref(invite))
        .await?
        .remove(0)
}

/// Creates without an Idempotency-Key, committed together: one multi-row INSERT.
pub struct InsertBatch;

#[async_trait::async_trait]
impl Batch for InsertBatch {
    type In = NewInvite;
    type Out = ();

    async fn run_all(client: &Object, invites: &[NewInvite]) -> StoreResult<Vec<StoreResult<()>>> {
        insert_many(client, invites).await
    }

    async fn run_one(client: &Object, invite: &NewInvite) -> StoreResult<()> {
        insert(client, invite).await
    }
}

/// Inserts `invites` in one statement, each only if its site still exists: the sites are
/// locked `FOR KEY SHARE` first — what a foreign key would do for every row — so a
/// site's deletion (which locks it `FOR UPDATE`) waits for this, or this for it. One
/// result per invite, in order.
async fn insert_many(
    client: &impl GenericClient,
    invites: &[NewInvite],
) -> StoreResult<Vec<StoreResult<()>>> {
    let ids: Vec<&str> = invites.iter().map(|i| i.id.as_str()).collect();
    let sites: Vec<String> = invites.iter().map(|i| i.site_id.to_string()).collect();
    let custom_ids: Vec<Option<&[u8]>> = invites
        .iter()
        .map(|i| i.custom_id.as_ref().map(|c| c.as_str().as_bytes()))
        .collect();
    let created: Vec<i64> = invites.iter().map(|i| i.created_at).collect();
    let expires: Vec<i64> = invites.iter().map(|i| i.expires_at).collect();
    let live = all(
        client,
        "WITH live AS (
             SELECT site_id FROM sites WHERE site_id = ANY($2::TEXT[]) FOR KEY SHARE),
         new AS (
             INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
             SELECT t.id, t.site, t.custom_id, 'pending', t.created_at, t.expires_at
             FROM unnest($1::TEXT[], $2::TEXT[], $3::BYTEA[], $4::BIGINT[], $5::BIGINT[])
                 AS t (id, site, custom_id, created_at, expires_at)
             WHERE t.site IN (SELECT site_id FROM live))
         SELECT site_id FROM live",
        &[&ids, &sites, &custom_ids, &created, &expires],
        |row| row.text(0),
    )
    .await?;
    let result = |site: &String| {
        if live.contains(site) {
            Ok(())
        } else {
            Err(StoreError::SiteGone)
        }
    };
    Ok(sites.iter().map(result).collect())
}

/// Reads of one invite by a site (the status API), looked up together: `= ANY($1)`.
pub struct ReadBatch;

#[async_trait::async_trait]
impl Batch for ReadBatch {
    type In = (SiteId, InviteId);
    type Out = Option<InviteRecord>;

    /// A row that does not read back fails the whole lookup; run one by one, only
    /// whoever asked for it hears of it.
    async fn run_all(
        client: &Object,
        wanted: &[(SiteId, InviteId)],
    ) -> StoreResult<Vec<StoreResult<Self::Out>>> {
        let ids: Vec<&str> = wanted.iter().map(|(_, id)| id.as_str()).collect();
        let sql = format!("SELECT {INVITE_COLUMNS} FROM invites i WHERE i.invite_id = ANY($1)");
        let found = all(client, &sql, &[&ids], |row| rows::invite(row, 0)).await?;
        let found: HashMap<&str, &InviteRecord> =
            found.iter().map(|r| (r.id.as_str(), r)).collect();
        let owned = |(site, id): &(SiteId, InviteId)| {
            let record = found.get(id.as_str()).filter(|r| r.site_id == *site);
            Ok(record.map(|r| (*r).clone()))
        };
        Ok(wanted.iter().map(owned).collect())
    }

    async fn run_one(client: &Object, (site, id): &(SiteId, InviteId)) -> StoreResult<Self::Out> {
        of_site(client, *site, id).await
    }
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
    evidence: &Evidence,
    now: UnixTime,
) -> StoreResult<VerifyOutcome> {
    let tx = client.transaction().await?;
    let outcome = match transitions::verify(locked(&tx, id).await?, method, now) {
        VerifyStep::Done(outcome) => outcome,
        VerifyStep::Verify(record) => {
            changes::write_verified(&tx, &record, evidence, now).await?;
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
            changes::write_expired(&tx, &record, now, now).await?;
            CancelOutcome::Cancelled(record)
        }
    };
    tx.commit().await?;
    Ok(outcome)
}
