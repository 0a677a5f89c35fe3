//! A site's credentials and webhook signing secret, and the deployment's receipt key.

use serde::Serialize;

use super::SiteError;
use crate::clock::Clock;
use crate::domain::{Password, SiteId, Username, WebhookSecret};
use crate::receipt::ReceiptKey;
use crate::store::{
    AdminStore, NewCredential, ReceiptKeyRecord, ReceiptStore, RevokeOutcome, StoreError,
};

/// A new credential; the password is shown only once.
#[derive(Serialize)]
pub struct CreatedKey {
    pub username: String,
    pub password: String,
}

/// Issues one more credential for `site` (for rotation without downtime).
pub async fn issue_key(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    site: SiteId,
) -> Result<CreatedKey, SiteError> {
    let username = Username::generate();
    let password = Password::generate();
    let key = CreatedKey {
        username: username.as_str().to_owned(),
        password: password.expose().to_owned(),
    };
    let added = store
        .add_credential(
            site,
            NewCredential {
                username,
                digest: password.digest(),
                created_at: clock.now(),
            },
        )
        .await?;
    if !added {
        return Err(SiteError::NoSuchSite(site));
    }
    Ok(key)
}

/// What revoking a credential did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    /// Revoked now; running servers refuse it within 5 seconds.
    Now,
    /// It was revoked already.
    Already,
}

/// Revokes one credential of `site`.
pub async fn revoke_key(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    site: SiteId,
    username: &str,
) -> Result<Revoked, SiteError> {
    if store.site(site).await?.is_none() {
        return Err(SiteError::NoSuchSite(site));
    }
    match store.revoke_credential(site, username, clock.now()).await? {
        RevokeOutcome::Revoked => Ok(Revoked::Now),
        RevokeOutcome::AlreadyRevoked => Ok(Revoked::Already),
        RevokeOutcome::NotFound => Err(SiteError::NoSuchKey {
            site,
            username: username.to_owned(),
        }),
    }
}

/// A new webhook signing secret; shown only once.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSecret {
    pub webhook_secret: String,
}

/// Makes a new signing secret current for `site`; the old one signs alongside for 24
/// hours.
pub async fn rotate_webhook_secret(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    site: SiteId,
) -> Result<RotatedSecret, SiteError> {
    let secret = WebhookSecret::generate();
    let rotated = RotatedSecret {
        webhook_secret: secret.expose().to_owned(),
    };
    if !store
        .rotate_webhook_secret(site, secret, clock.now())
        .await?
    {
        return Err(SiteError::NoSuchSite(site));
    }
    Ok(rotated)
}

/// Makes a new receipt key and answers its key id. It is published at once and signs
/// from [`SIGNS_AFTER`](crate::receipt::SIGNS_AFTER) later, once every server's cached key
/// set lists it (docs/evidence.md#receipt-keys); the old keys stay in the JWK Set, so old
/// receipts still check.
pub async fn rotate_receipt_key(
    store: &dyn ReceiptStore,
    clock: &dyn Clock,
) -> Result<String, StoreError> {
    let key = ReceiptKey::generate();
    let record = ReceiptKeyRecord {
        kid: key.kid(),
        private_key: key.to_bytes(),
        created_at: clock.now(),
    };
    store.add_receipt_key(record, false).await?;
    Ok(key.kid())
}
