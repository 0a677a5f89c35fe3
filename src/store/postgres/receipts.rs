//! SQL of receipts and receipt keys (docs/evidence.md#receipts). Receipts are written with the
//! verification (`invites::write_verified`); here they are only read.

use deadpool_postgres::{GenericClient, Object};

use super::{all, execute, one, PostgresStore};
use crate::domain::{InviteId, SiteId};
use crate::store::rows;
use crate::store::ReceiptStore;
use crate::store::{ReceiptKeyRecord, ReceiptLookup, StoreResult};

pub async fn lookup(
    client: &impl GenericClient,
    site: SiteId,
    id: &InviteId,
) -> StoreResult<ReceiptLookup> {
    let found = one(
        client,
        "SELECT status, receipt FROM invites WHERE invite_id = $1 AND site_id = $2",
        &[&id.as_str(), &site.to_string()],
        rows::receipt_lookup,
    )
    .await?;
    Ok(found.unwrap_or(ReceiptLookup::NotFound))
}

pub async fn keys(client: &impl GenericClient) -> StoreResult<Vec<ReceiptKeyRecord>> {
    let sql = format!(
        "SELECT {} FROM receipt_keys ORDER BY seq",
        rows::RECEIPT_KEY_COLUMNS
    );
    all(client, &sql, &[], rows::receipt_key).await
}

/// Stores `key`, current at once, in the caller's transaction (the first verification's,
/// where the start could not write a key).
pub async fn insert_key(tx: &impl GenericClient, key: &ReceiptKeyRecord) -> StoreResult<()> {
    execute(
        tx,
        "INSERT INTO receipt_keys (kid, private_key, created_at) VALUES ($1, $2, $3)",
        &[&key.kid, &key.private_key, &key.created_at],
    )
    .await?;
    Ok(())
}

/// The key that signs a verification now: the newest whose time has come, by the
/// database's clock at the start of the caller's transaction (no later than the signing).
pub async fn signing_key(tx: &impl GenericClient) -> StoreResult<Option<Vec<u8>>> {
    one(
        tx,
        "SELECT private_key FROM receipt_keys
         WHERE signs_from <= EXTRACT(EPOCH FROM now())::float8
         ORDER BY seq DESC LIMIT 1",
        &[],
        |row| row.bytes(0),
    )
    .await
}

/// Stores `key`, current at once, if there is no key yet (the first start); the table's
/// lock makes that hold when several nodes start at once. Whether it was stored.
async fn add_first_key(client: &mut Object, key: &ReceiptKeyRecord) -> StoreResult<bool> {
    let tx = client.transaction().await?;
    tx.batch_execute("LOCK TABLE receipt_keys IN SHARE ROW EXCLUSIVE MODE")
        .await?;
    let added = execute(
        &tx,
        "INSERT INTO receipt_keys (kid, private_key, created_at)
         SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM receipt_keys)",
        &[&key.kid, &key.private_key, &key.created_at],
    )
    .await?;
    tx.commit().await?;
    Ok(added == 1)
}

/// A rotation: `key` is published (committed, listed, signing nothing), then, in a second
/// transaction whose clock is read after that commit, every published key signs from
/// [`SIGNS_AFTER`](crate::receipt::SIGNS_AFTER) on.
async fn rotate_to(client: &Object, key: &ReceiptKeyRecord) -> StoreResult<()> {
    // On an empty table the key is the first, and signs at once: no server has listed one.
    execute(
        client,
        "INSERT INTO receipt_keys (kid, private_key, created_at, signs_from)
         SELECT $1, $2, $3,
                CASE WHEN EXISTS (SELECT 1 FROM receipt_keys) THEN NULL ELSE 0 END",
        &[&key.kid, &key.private_key, &key.created_at],
    )
    .await?;
    let after = crate::receipt::SIGNS_AFTER.as_secs_f64();
    execute(
        client,
        "UPDATE receipt_keys SET signs_from = EXTRACT(EPOCH FROM now())::float8 + $1
         WHERE signs_from IS NULL",
        &[&after],
    )
    .await?;
    Ok(())
}

#[async_trait::async_trait]
impl ReceiptStore for PostgresStore {
    async fn receipt(&self, site: SiteId, id: &InviteId) -> StoreResult<ReceiptLookup> {
        lookup(&self.client().await?, site, id).await
    }

    async fn receipt_keys(&self) -> StoreResult<Vec<ReceiptKeyRecord>> {
        keys(&self.client().await?).await
    }

    async fn add_receipt_key(
        &self,
        key: ReceiptKeyRecord,
        only_if_none: bool,
    ) -> StoreResult<bool> {
        let mut client = self.client().await?;
        if only_if_none {
            return add_first_key(&mut client, &key).await;
        }
        rotate_to(&client, &key).await?;
        Ok(true)
    }
}
