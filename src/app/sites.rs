//! Site configurations: create, read, change and delete.

use serde::Serialize;

use super::Services;
use crate::clock::Clock;
use crate::domain::{
    Accept, MinAge, Password, SiteId, SiteName, SiteUrl, Username, WebhookFormat, WebhookSecret,
    ZkPolicy,
};
use crate::store::{
    AdminStore, EventRecord, NewCredential, NewSite, SiteRecord, SiteUpdate, StoreError,
};

/// Why a site or key operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("no site with id {0}")]
    NoSuchSite(SiteId),
    #[error("site {site} has no credential named '{username}'")]
    NoSuchKey { site: SiteId, username: String },
    /// An update that changes nothing.
    #[error("nothing to update")]
    NothingToUpdate,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a new site's owner needs; the password and secret are shown only once.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedSite {
    pub site_id: String,
    pub username: String,
    pub password: String,
    pub webhook_secret: String,
}

/// What a new site is configured with.
#[derive(Debug, Clone)]
pub struct SiteSettings {
    pub name: SiteName,
    pub redirect_url: Option<SiteUrl>,
    pub webhook_url: Option<SiteUrl>,
    pub sandbox: bool,
    pub min_age: MinAge,
    pub webhook_format: WebhookFormat,
    pub accept: Accept,
    pub zk: ZkPolicy,
}

impl SiteSettings {
    /// A site with nothing but a name, and the defaults.
    pub fn named(name: SiteName) -> Self {
        Self {
            name,
            redirect_url: None,
            webhook_url: None,
            sandbox: false,
            min_age: MinAge::DEFAULT,
            webhook_format: WebhookFormat::Standard,
            accept: Accept::All,
            zk: ZkPolicy::default(),
        }
    }
}

/// Creates a site with its first credential and webhook secret.
pub async fn create_site(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    settings: SiteSettings,
) -> Result<CreatedSite, SiteError> {
    let SiteSettings {
        name,
        redirect_url,
        webhook_url,
        sandbox,
        min_age,
        webhook_format,
        accept,
        zk,
    } = settings;
    let now = clock.now();
    let id = SiteId::generate();
    let username = Username::generate();
    let password = Password::generate();
    let secret = WebhookSecret::generate();
    let created = CreatedSite {
        site_id: id.to_string(),
        username: username.as_str().to_owned(),
        password: password.expose().to_owned(),
        webhook_secret: secret.expose().to_owned(),
    };
    store
        .create_site(NewSite {
            id,
            name,
            redirect_url,
            webhook_url,
            sandbox,
            min_age,
            webhook_format,
            accept,
            zk,
            created_at: now,
            credential: NewCredential {
                username,
                digest: password.digest(),
                created_at: now,
            },
            webhook_secret: secret,
        })
        .await?;
    Ok(created)
}

/// Sites, their keys and their webhook secrets as the operator's edges (the console and
/// the command line) reach them.
pub struct Sites<'a>(pub(super) &'a Services);

impl Services {
    pub fn sites(&self) -> Sites<'_> {
        Sites(self)
    }
}

impl Sites<'_> {
    /// Every site.
    pub async fn list(&self) -> Result<Vec<SiteRecord>, StoreError> {
        self.0.store.sites().await
    }

    /// One site with its credentials.
    pub async fn get(&self, id: SiteId) -> Result<SiteRecord, SiteError> {
        let site = self.0.store.site(id).await?;
        site.ok_or(SiteError::NoSuchSite(id))
    }

    /// [`create_site`].
    pub async fn create(&self, settings: SiteSettings) -> Result<CreatedSite, SiteError> {
        create_site(self.0.store.as_ref(), self.0.clock.as_ref(), settings).await
    }

    /// Changes what `update` names; an update that names nothing is refused.
    pub async fn update(&self, id: SiteId, update: SiteUpdate) -> Result<(), SiteError> {
        let SiteUpdate {
            redirect_url,
            webhook_url,
            min_age,
            webhook_format,
            accept,
            zk,
        } = &update;
        if redirect_url.is_none()
            && webhook_url.is_none()
            && min_age.is_none()
            && webhook_format.is_none()
            && accept.is_none()
            && zk.is_none()
        {
            return Err(SiteError::NothingToUpdate);
        }
        if !self.0.store.update_site(id, update).await? {
            return Err(SiteError::NoSuchSite(id));
        }
        Ok(())
    }

    /// Erases a site with everything it owns; answers how many invites went with it.
    pub async fn delete(&self, id: SiteId) -> Result<usize, SiteError> {
        self.0
            .store
            .delete_site(id)
            .await?
            .ok_or(SiteError::NoSuchSite(id))
    }

    /// The site's latest `limit` webhook events with their attempts, newest first.
    pub async fn deliveries(
        &self,
        id: SiteId,
        limit: usize,
    ) -> Result<Vec<EventRecord>, SiteError> {
        self.get(id).await?;
        Ok(self.0.store.deliveries(id, limit).await?)
    }
}
