//! SQL of sites, their credentials and webhook secrets.

use deadpool_postgres::{GenericClient, Object, Transaction};

use super::{all, execute, may_be_stored, one};
use crate::clock::UnixTime;
use crate::domain::{SiteId, WebhookSecret};
use crate::store::rows::{self, CREDENTIAL_COLUMNS, CREDENTIAL_INFO_COLUMNS, SITE_COLUMNS};
use crate::store::{
    transitions, CredentialRecord, NewCredential, NewSite, RevokeOutcome, SiteRecord, SiteUpdate,
    StoreResult,
};

/// One statement: authentication asks this on (almost) every API request.
pub async fn credential(
    client: &impl GenericClient,
    username: &str,
) -> StoreResult<Option<CredentialRecord>> {
    if !may_be_stored(username) {
        return Ok(None);
    }
    let sql = format!("SELECT {CREDENTIAL_COLUMNS} FROM credentials WHERE username = $1");
    one(client, &sql, &[&username], rows::credential).await
}

pub async fn create(client: &mut Object, site: &NewSite) -> StoreResult<()> {
    let tx = client.transaction().await?;
    execute(
        &tx,
        "INSERT INTO sites
             (site_id, name, redirect_url, webhook_url, sandbox, created_at, min_age, webhook_format,
              accept, zk)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &site.id.to_string(),
            &site.name.as_str(),
            &site.redirect_url.as_ref().map(|u| u.as_str()),
            &site.webhook_url.as_ref().map(|u| u.as_str()),
            &site.sandbox,
            &site.created_at,
            &i64::from(site.min_age.get()),
            &site.webhook_format.as_str(),
            &site.accept.to_stored(),
            &site.zk.as_str(),
        ],
    )
    .await?;
    add_credential(&tx, site.id, &site.credential).await?;
    insert_secret(&tx, site.id, &site.webhook_secret, site.created_at).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn load(client: &impl GenericClient, id: SiteId) -> StoreResult<Option<SiteRecord>> {
    let sql = format!("SELECT {SITE_COLUMNS} FROM sites WHERE site_id = $1");
    let Some(mut site) = one(client, &sql, &[&id.to_string()], rows::site).await? else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT {CREDENTIAL_INFO_COLUMNS} FROM credentials
         WHERE site_id = $1 ORDER BY created_at, username COLLATE \"C\""
    );
    site.credentials = all(client, &sql, &[&id.to_string()], rows::credential_info).await?;
    Ok(Some(site))
}

pub async fn list(client: &impl GenericClient) -> StoreResult<Vec<SiteRecord>> {
    let ids = all(
        client,
        "SELECT site_id FROM sites ORDER BY created_at, site_id COLLATE \"C\"",
        &[],
        rows::site_id_only,
    )
    .await?;
    let mut sites = Vec::with_capacity(ids.len());
    for id in ids {
        sites.extend(load(client, id).await?);
    }
    Ok(sites)
}

/// One statement: a flag per field says whether to set it.
pub async fn update(
    client: &impl GenericClient,
    id: SiteId,
    update: &SiteUpdate,
) -> StoreResult<bool> {
    let changed = execute(
        client,
        "UPDATE sites SET
             redirect_url = CASE WHEN $2::BOOLEAN THEN $3::TEXT ELSE redirect_url END,
             webhook_url = CASE WHEN $4::BOOLEAN THEN $5::TEXT ELSE webhook_url END,
             min_age = COALESCE($6::BIGINT, min_age),
             webhook_format = COALESCE($7::TEXT, webhook_format),
             accept = COALESCE($8::TEXT, accept),
             zk = COALESCE($9::TEXT, zk)
         WHERE site_id = $1",
        &[
            &id.to_string(),
            &update.redirect_url.is_some(),
            &update
                .redirect_url
                .as_ref()
                .and_then(|u| u.as_ref().map(|u| u.as_str())),
            &update.webhook_url.is_some(),
            &update
                .webhook_url
                .as_ref()
                .and_then(|u| u.as_ref().map(|u| u.as_str())),
            &update.min_age.map(|a| i64::from(a.get())),
            &update.webhook_format.map(|f| f.as_str()),
            &update.accept.map(|a| a.to_stored()),
            &update.zk.map(|z| z.as_str()),
        ],
    )
    .await?;
    Ok(changed == 1)
}

/// One statement; `false` when there is no such site.
pub async fn add_credential(
    client: &impl GenericClient,
    site: SiteId,
    c: &NewCredential,
) -> StoreResult<bool> {
    let added = execute(
        client,
        "INSERT INTO credentials (username, site_id, password_digest, created_at)
         SELECT $1::TEXT, site_id, $3::BYTEA, $4::BIGINT FROM sites WHERE site_id = $2",
        &[
            &c.username.as_str(),
            &site.to_string(),
            &&c.digest.0[..],
            &c.created_at,
        ],
    )
    .await?;
    Ok(added == 1)
}

pub async fn revoke(
    client: &mut Object,
    site: SiteId,
    username: &str,
    now: UnixTime,
) -> StoreResult<RevokeOutcome> {
    if !may_be_stored(username) {
        return Ok(RevokeOutcome::NotFound);
    }
    let tx = client.transaction().await?;
    let found = one(
        &tx,
        "SELECT revoked_at FROM credentials WHERE username = $1 AND site_id = $2 FOR UPDATE",
        &[&username, &site.to_string()],
        rows::revoked_at,
    )
    .await?;
    let outcome = transitions::revoke(found);
    if outcome == RevokeOutcome::Revoked {
        execute(
            &tx,
            "UPDATE credentials SET revoked_at = $2 WHERE username = $1",
            &[&username, &now],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(outcome)
}

/// `false` when there is no such site. The site's row lock makes rotations queue, so
/// exactly one secret is current after any number of them.
pub async fn rotate_secret(
    client: &mut Object,
    site: SiteId,
    secret: &WebhookSecret,
    now: UnixTime,
) -> StoreResult<bool> {
    let tx = client.transaction().await?;
    let sql = "SELECT 1 FROM sites WHERE site_id = $1 FOR UPDATE";
    if one(&tx, sql, &[&site.to_string()], |_| Ok(()))
        .await?
        .is_none()
    {
        return Ok(false);
    }
    execute(
        &tx,
        "UPDATE webhook_secrets SET retired_at = $2 WHERE site_id = $1 AND retired_at IS NULL",
        &[&site.to_string(), &now],
    )
    .await?;
    insert_secret(&tx, site, secret, now).await?;
    tx.commit().await?;
    Ok(true)
}

async fn insert_secret(
    tx: &Transaction<'_>,
    site: SiteId,
    secret: &WebhookSecret,
    now: UnixTime,
) -> StoreResult<()> {
    execute(
        tx,
        "INSERT INTO webhook_secrets (site_id, secret, created_at) VALUES ($1, $2, $3)",
        &[&site.to_string(), &secret.expose(), &now],
    )
    .await?;
    Ok(())
}
