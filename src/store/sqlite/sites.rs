//! SQL of sites, their credentials and webhook secrets. Every function runs inside the
//! caller's transaction (or, for reads, on a reader's connection).

use rusqlite::{params, Connection};

use super::{all, one};
use crate::clock::UnixTime;
use crate::domain::{SiteId, WebhookSecret};
use crate::store::rows::{self, CREDENTIAL_COLUMNS, CREDENTIAL_INFO_COLUMNS, SITE_COLUMNS};
use crate::store::{
    transitions, CredentialRecord, NewCredential, NewSite, RevokeOutcome, SiteRecord, SiteUpdate,
    StoreResult,
};

pub fn credential(conn: &Connection, username: &str) -> StoreResult<Option<CredentialRecord>> {
    let sql = format!("SELECT {CREDENTIAL_COLUMNS} FROM credentials WHERE username = ?1");
    one(conn, &sql, [username], rows::credential)
}

pub fn create(conn: &Connection, site: &NewSite) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO sites
             (site_id, name, redirect_url, webhook_url, sandbox, created_at, min_age, webhook_format,
              accept, zk)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        site.id.to_string(),
        site.name.as_str(),
        site.redirect_url.as_ref().map(|u| u.as_str()),
        site.webhook_url.as_ref().map(|u| u.as_str()),
        site.sandbox,
        site.created_at,
        site.min_age.get(),
        site.webhook_format.as_str(),
        site.accept.to_stored(),
        site.zk.as_str()
    ])?;
    add_credential(conn, site.id, &site.credential)?;
    insert_secret(conn, site.id, &site.webhook_secret, site.created_at)
}

pub fn load(conn: &Connection, id: SiteId) -> StoreResult<Option<SiteRecord>> {
    let sql = format!("SELECT {SITE_COLUMNS} FROM sites WHERE site_id = ?1");
    let Some(mut site) = one(conn, &sql, [id.to_string()], rows::site)? else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT {CREDENTIAL_INFO_COLUMNS} FROM credentials
         WHERE site_id = ?1 ORDER BY created_at, username"
    );
    site.credentials = all(conn, &sql, [id.to_string()], rows::credential_info)?;
    Ok(Some(site))
}

pub fn list(conn: &Connection) -> StoreResult<Vec<SiteRecord>> {
    let ids = all(
        conn,
        "SELECT site_id FROM sites ORDER BY created_at, site_id",
        [],
        rows::site_id_only,
    )?;
    let mut sites = Vec::with_capacity(ids.len());
    for id in ids {
        sites.extend(load(conn, id)?);
    }
    Ok(sites)
}

/// One statement: a flag per field says whether to set it.
pub fn update(conn: &Connection, id: SiteId, update: &SiteUpdate) -> StoreResult<bool> {
    let changed = conn
        .prepare_cached(
            "UPDATE sites SET
                 redirect_url = CASE WHEN ?2 THEN ?3 ELSE redirect_url END,
                 webhook_url = CASE WHEN ?4 THEN ?5 ELSE webhook_url END,
                 min_age = COALESCE(?6, min_age),
                 webhook_format = COALESCE(?7, webhook_format),
                 accept = COALESCE(?8, accept),
                 zk = COALESCE(?9, zk)
             WHERE site_id = ?1",
        )?
        .execute(params![
            id.to_string(),
            update.redirect_url.is_some(),
            update
                .redirect_url
                .as_ref()
                .and_then(|u| u.as_ref().map(|u| u.as_str())),
            update.webhook_url.is_some(),
            update
                .webhook_url
                .as_ref()
                .and_then(|u| u.as_ref().map(|u| u.as_str())),
            update.min_age.map(|a| a.get()),
            update.webhook_format.map(|f| f.as_str()),
            update.accept.map(|a| a.to_stored()),
            update.zk.map(|z| z.as_str())
        ])?;
    Ok(changed == 1)
}

/// `false` when there is no such site.
pub fn add_credential(conn: &Connection, site: SiteId, c: &NewCredential) -> StoreResult<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO credentials (username, site_id, password_digest, created_at)
             SELECT ?1, site_id, ?3, ?4 FROM sites WHERE site_id = ?2",
        )?
        .execute(params![
            c.username.as_str(),
            site.to_string(),
            &c.digest.0[..],
            c.created_at
        ])?;
    Ok(added == 1)
}

pub fn revoke(
    conn: &Connection,
    site: SiteId,
    username: &str,
    now: UnixTime,
) -> StoreResult<RevokeOutcome> {
    let found = one(
        conn,
        "SELECT revoked_at FROM credentials WHERE username = ?1 AND site_id = ?2",
        params![username, site.to_string()],
        rows::revoked_at,
    )?;
    let outcome = transitions::revoke(found);
    if outcome == RevokeOutcome::Revoked {
        conn.prepare_cached("UPDATE credentials SET revoked_at = ?2 WHERE username = ?1")?
            .execute(params![username, now])?;
    }
    Ok(outcome)
}

/// `false` when there is no such site.
pub fn rotate_secret(
    conn: &Connection,
    site: SiteId,
    secret: &WebhookSecret,
    now: UnixTime,
) -> StoreResult<bool> {
    if one(
        conn,
        "SELECT 1 FROM sites WHERE site_id = ?1",
        [site.to_string()],
        |_| Ok(()),
    )?
    .is_none()
    {
        return Ok(false);
    }
    conn.prepare_cached(
        "UPDATE webhook_secrets SET retired_at = ?2 WHERE site_id = ?1 AND retired_at IS NULL",
    )?
    .execute(params![site.to_string(), now])?;
    insert_secret(conn, site, secret, now)?;
    Ok(true)
}

fn insert_secret(
    conn: &Connection,
    site: SiteId,
    secret: &WebhookSecret,
    now: UnixTime,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO webhook_secrets (site_id, secret, created_at) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![site.to_string(), secret.expose(), now])?;
    Ok(())
}
