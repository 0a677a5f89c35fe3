//! Verification receipts and the keys that sign them, as the edges read them
//! (docs/evidence.md#receipts).

use super::Services;
use crate::domain::{InviteId, SiteId};
use crate::receipt::ReceiptKey;
use crate::store::{readable_receipt_keys, ReceiptKeyRecord, ReceiptLookup, StoreError};

/// Receipts and receipt keys.
pub struct Receipts<'a>(&'a Services);

impl Services {
    pub fn receipts(&self) -> Receipts<'_> {
        Receipts(self)
    }
}

impl Receipts<'_> {
    /// The receipt of the site's invite; another site's invite is not found.
    pub async fn receipt(&self, site: SiteId, id: &InviteId) -> Result<ReceiptLookup, StoreError> {
        self.0.store.receipt(site, id).await
    }

    /// Every receipt key that can be read, oldest first, including one published but not
    /// signing yet: what `/.well-known/jwks.json` lists and receipts verify against.
    pub async fn keys(&self) -> Result<Vec<ReceiptKey>, StoreError> {
        Ok(readable_receipt_keys(&self.0.store.receipt_keys().await?))
    }

    /// Makes a new receipt key and answers its key id. It is published at once and signs
    /// from [`SIGNS_AFTER`](crate::receipt::SIGNS_AFTER) later, once every server's cached key
    /// set lists it (docs/evidence.md#receipt-keys); the old keys stay in the JWK Set, so old
    /// receipts still check.
    pub async fn rotate_key(&self) -> Result<String, StoreError> {
        let key = ReceiptKey::generate();
        let record = ReceiptKeyRecord {
            kid: key.kid(),
            private_key: key.to_bytes(),
            created_at: self.0.clock.now(),
        };
        self.0.store.add_receipt_key(record, false).await?;
        Ok(key.kid())
    }
}
