//! A site's credentials and webhook signing secret, as [`Sites`] issues, revokes and
//! rotates them.

use serde::Serialize;

use super::sites::Sites;
use super::SiteError;
use crate::domain::{Password, SiteId, Username, WebhookSecret};
use crate::store::{NewCredential, RevokeOutcome};

/// A new credential; the password is shown only once.
#[derive(Serialize)]
pub struct CreatedKey {
    pub username: String,
    pub password: String,
}

/// What revoking a credential did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    /// Revoked now; running servers refuse it within 5 seconds.
    Now,
    /// It was revoked already.
    Already,
}

/// A new webhook signing secret; shown only once.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSecret {
    pub webhook_secret: String,
}

impl Sites<'_> {
    /// Issues one more credential for `site` (for rotation without downtime).
    pub async fn issue_key(&self, site: SiteId) -> Result<CreatedKey, SiteError> {
        let username = Username::generate();
        let password = Password::generate();
        let key = CreatedKey {
            username: username.as_str().to_owned(),
            password: password.expose().to_owned(),
        };
        let added = self
            .0
            .store
            .add_credential(
                site,
                NewCredential {
                    username,
                    digest: password.digest(),
                    created_at: self.0.clock.now(),
                },
            )
            .await?;
        if !added {
            return Err(SiteError::NoSuchSite(site));
        }
        Ok(key)
    }

    /// Revokes one credential of `site`.
    pub async fn revoke_key(&self, site: SiteId, username: &str) -> Result<Revoked, SiteError> {
        if self.0.store.site(site).await?.is_none() {
            return Err(SiteError::NoSuchSite(site));
        }
        match self
            .0
            .store
            .revoke_credential(site, username, self.0.clock.now())
            .await?
        {
            RevokeOutcome::Revoked => Ok(Revoked::Now),
            RevokeOutcome::AlreadyRevoked => Ok(Revoked::Already),
            RevokeOutcome::NotFound => Err(SiteError::NoSuchKey {
                site,
                username: username.to_owned(),
            }),
        }
    }

    /// Makes a new signing secret current for `site`; the old one signs alongside for 24
    /// hours.
    pub async fn rotate_webhook_secret(&self, site: SiteId) -> Result<RotatedSecret, SiteError> {
        let secret = WebhookSecret::generate();
        let rotated = RotatedSecret {
            webhook_secret: secret.expose().to_owned(),
        };
        if !self
            .0
            .store
            .rotate_webhook_secret(site, secret, self.0.clock.now())
            .await?
        {
            return Err(SiteError::NoSuchSite(site));
        }
        Ok(rotated)
    }
}
