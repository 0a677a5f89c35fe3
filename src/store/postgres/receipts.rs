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

/// Stores `key` in the caller's transaction.
pub async fn insert_key(tx: &impl GenericClient, key: &ReceiptKeyRecord) -> StoreResult<()> {
    execute(
        tx,
        "INSERT INTO receipt_keys (kid, private_key, created_at) VALUES ($1, $2, $3)",
        &[&key.kid, &key.private_key, &key.created_at],
    )
    .await?;
    Ok(())
}

/// The table's lock makes "only if there is none" hold when several nodes start at once.
pub async fn add_key(
    client: &mut Object,
    key: &ReceiptKeyRecord,
    only_if_none: bool,
) -> StoreResult<bool> {
    let tx = client.transaction().await?;
    tx.batch_execute("LOCK TABLE receipt_keys IN SHARE ROW EXCLUSIVE MODE")
        .await?;
    let added = execute(
        &tx,
        "INSERT INTO receipt_keys (kid, private_key, created_at)
         SELECT $1, $2, $3 WHERE NOT $4 OR NOT EXISTS (SELECT 1 FROM receipt_keys)",
        &[&key.kid, &key.private_key, &key.created_at, &only_if_none],
    )
    .await?;
    tx.commit().await?;
    Ok(added == 1)
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
        add_key(&mut self.client().await?, &key, only_if_none).await
    }
}
