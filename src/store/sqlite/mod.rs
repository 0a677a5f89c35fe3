//! The embedded default backend: one SQLite file in WAL mode, `synchronous=FULL` so a
//! commit is on disk (fsynced) before the request that made it is answered.

mod migrations;
mod pool;
mod presentations;
mod webhooks;

use super::{
    AfterAttempt, AnswerOutcome, Attempt, CredentialInfo, CredentialRecord, DueEvent, EventRecord,
    GatewayInvite, NewCredential, NewInvite, NewSite, RevokeOutcome, SiteRecord, SiteUpdate, Store,
    StoreError, StoreResult, VerifyOutcome,
};
use crate::clock::UnixTime;
use crate::domain::invite::{self, VerifyTransition};
use crate::domain::webhook::EventType;
use crate::domain::{
    InviteId, MinAge, PasswordDigest, PresentationRequest, SiteId, Status, VerifyMethod,
    WebhookSecret,
};
use crate::store::InviteRecord;
use pool::Pool;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row};
use std::path::{Path, PathBuf};
use std::time::Duration;

const READERS: usize = 4;

/// The file a `sqlite:` URL names (`sqlite:PATH`, `sqlite://PATH`), if it is one.
pub fn path_of(database_url: &str) -> Option<&str> {
    let rest = database_url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    Some(rest.split('?').next().unwrap_or(rest))
}

pub struct SqliteStore {
    pool: Pool,
}

impl SqliteStore {
    pub async fn open(path: &str) -> StoreResult<Self> {
        if path.is_empty() || path == ":memory:" {
            return Err(StoreError::UnsupportedUrl(
                "sqlite needs a file path (an in-memory database cannot be shared)".into(),
            ));
        }
        let path = PathBuf::from(path);
        // Opening and migrating block; keep them off the async workers.
        tokio::task::spawn_blocking(move || Self::open_blocking(&path))
            .await
            .map_err(|e| StoreError::Database(std::sync::Arc::new(e)))?
    }

    fn open_blocking(path: &Path) -> StoreResult<Self> {
        let mut writer = connect(path, false)?;
        migrations::apply(&mut writer)?;
        let readers = (0..READERS)
            .map(|_| connect(path, true))
            .collect::<StoreResult<Vec<_>>>()?;
        let pool = Pool::start(writer, readers)
            .map_err(|e| StoreError::Database(std::sync::Arc::new(e)))?;
        Ok(Self { pool })
    }
}

fn connect(path: &Path, read_only: bool) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    // Another process (the CLI, a second server) may hold the write lock briefly.
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;",
    )?;
    if read_only {
        conn.execute_batch("PRAGMA query_only = ON;")?;
    }
    Ok(conn)
}

fn site_id_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<SiteId> {
    let s: String = row.get(idx)?;
    SiteId::parse(&s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn status_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<Status> {
    let s: String = row.get(idx)?;
    Status::parse(&s).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("unknown status '{s}'").into(),
        )
    })
}

const INVITE_COLUMNS: &str = "invite_id, site_id, custom_id, status, expires_at, verified_method";

fn min_age_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<MinAge> {
    MinAge::new(row.get(idx)?).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Integer,
            "minimum age out of range".into(),
        )
    })
}

fn method_column(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<VerifyMethod>> {
    let s: Option<String> = row.get(idx)?;
    s.map(|s| {
        VerifyMethod::parse(&s).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                idx,
                rusqlite::types::Type::Text,
                format!("unknown verification method '{s}'").into(),
            )
        })
    })
    .transpose()
}

fn invite_row(row: &Row<'_>) -> rusqlite::Result<InviteRecord> {
    let id: String = row.get(0)?;
    Ok(InviteRecord {
        id: InviteId::parse(&id).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Text,
                "malformed invite id".into(),
            )
        })?,
        site_id: site_id_column(row, 1)?,
        custom_id: row.get(2)?,
        stored_status: status_column(row, 3)?,
        expires_at: row.get(4)?,
        method: method_column(row, 5)?,
    })
}

fn load_site(conn: &Connection, id: SiteId) -> StoreResult<Option<SiteRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT site_id, name, redirect_url, webhook_url, sandbox, created_at, min_age
         FROM sites WHERE site_id = ?1",
    )?;
    let site = stmt
        .query_row([id.to_string()], |row| {
            Ok(SiteRecord {
                id: site_id_column(row, 0)?,
                name: row.get(1)?,
                redirect_url: row.get(2)?,
                webhook_url: row.get(3)?,
                sandbox: row.get(4)?,
                created_at: row.get(5)?,
                min_age: min_age_column(row, 6)?,
                credentials: Vec::new(),
            })
        })
        .optional()?;
    let Some(mut site) = site else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT username, created_at, revoked_at FROM credentials
         WHERE site_id = ?1 ORDER BY created_at, username",
    )?;
    site.credentials = stmt
        .query_map([id.to_string()], |row| {
            Ok(CredentialInfo {
                username: row.get(0)?,
                created_at: row.get(1)?,
                revoked_at: row.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(site))
}

fn site_exists(conn: &Connection, id: SiteId) -> StoreResult<bool> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM sites WHERE site_id = ?1")?;
    Ok(stmt.exists([id.to_string()])?)
}

fn insert_credential(conn: &Connection, site: SiteId, c: &NewCredential) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO credentials (username, site_id, password_digest, created_at)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        c.username.as_str(),
        site.to_string(),
        &c.digest.0[..],
        c.created_at
    ])?;
    Ok(())
}

/// The verification rule applied inside the caller's transaction: a pending invite
/// becomes verified by `method`, with its `invite.verified` event.
fn verify_in(
    conn: &Connection,
    id: &InviteId,
    method: VerifyMethod,
    now: UnixTime,
) -> StoreResult<VerifyOutcome> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {INVITE_COLUMNS} FROM invites WHERE invite_id = ?1"
    ))?;
    let Some(mut record) = stmt.query_row([id.as_str()], invite_row).optional()? else {
        return Ok(VerifyOutcome::NotFound);
    };
    match invite::verify(record.status_at(now)) {
        Err(invite::VerifyError::Expired) => Ok(VerifyOutcome::Expired),
        Ok(VerifyTransition::AlreadyVerified) => Ok(VerifyOutcome::AlreadyVerified(record)),
        Ok(VerifyTransition::Verify) => {
            conn.prepare_cached(
                "UPDATE invites SET status = 'verified', verified_at = ?2, verified_method = ?3
                 WHERE invite_id = ?1",
            )?
            .execute(params![id.as_str(), now, method.as_str()])?;
            webhooks::record_event(conn, record.site_id, id, EventType::InviteVerified, now)?;
            record.stored_status = Status::Verified;
            record.method = Some(method);
            Ok(VerifyOutcome::Verified(record))
        }
    }
}

/// An invite's status at `now`, if it exists.
fn invite_status(conn: &Connection, id: &InviteId, now: UnixTime) -> StoreResult<Option<Status>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {INVITE_COLUMNS} FROM invites WHERE invite_id = ?1"
    ))?;
    let record = stmt.query_row([id.as_str()], invite_row).optional()?;
    Ok(record.map(|r| r.status_at(now)))
}

#[async_trait::async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        self.pool
            .read(|conn| Ok(conn.query_row("SELECT 1", [], |_| Ok(()))?))
            .await
    }

    async fn credential(&self, username: &str) -> StoreResult<Option<CredentialRecord>> {
        let username = username.to_owned();
        self.pool
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT site_id, password_digest, revoked_at IS NOT NULL
                     FROM credentials WHERE username = ?1",
                )?;
                let row = stmt
                    .query_row([&username], |row| {
                        let digest: Vec<u8> = row.get(1)?;
                        Ok((site_id_column(row, 0)?, digest, row.get::<_, bool>(2)?))
                    })
                    .optional()?;
                row.map(|(site_id, digest, revoked)| {
                    let digest = PasswordDigest::from_slice(&digest)
                        .ok_or_else(|| StoreError::Corrupt("password digest length".into()))?;
                    Ok(CredentialRecord {
                        site_id,
                        digest,
                        revoked,
                    })
                })
                .transpose()
            })
            .await
    }

    async fn insert_invite(&self, invite: NewInvite) -> StoreResult<()> {
        self.pool
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at)
                     VALUES (?1, ?2, ?3, 'pending', ?4, ?5)",
                )?
                .execute(params![
                    invite.id.as_str(),
                    invite.site_id.to_string(),
                    invite.custom_id.as_ref().map(|c| c.as_str()),
                    invite.created_at,
                    invite.expires_at
                ])?;
                Ok(())
            })
            .await
    }

    async fn invite(&self, site: SiteId, id: &InviteId) -> StoreResult<Option<InviteRecord>> {
        let id = id.clone();
        self.pool
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {INVITE_COLUMNS} FROM invites WHERE invite_id = ?1 AND site_id = ?2"
                ))?;
                Ok(stmt
                    .query_row(params![id.as_str(), site.to_string()], invite_row)
                    .optional()?)
            })
            .await
    }

    async fn verify_invite(
        &self,
        id: &InviteId,
        method: VerifyMethod,
        now: UnixTime,
    ) -> StoreResult<VerifyOutcome> {
        let id = id.clone();
        self.pool
            .write(move |conn| verify_in(conn, &id, method, now))
            .await
    }

    async fn gateway_invite(&self, id: &InviteId) -> StoreResult<Option<GatewayInvite>> {
        let id = id.clone();
        self.pool
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT i.invite_id, i.site_id, i.custom_id, i.status, i.expires_at,
                            i.verified_method, s.name, s.redirect_url, s.sandbox, s.min_age
                     FROM invites i JOIN sites s ON s.site_id = i.site_id
                     WHERE i.invite_id = ?1",
                )?;
                Ok(stmt
                    .query_row([id.as_str()], |row| {
                        Ok(GatewayInvite {
                            invite: invite_row(row)?,
                            site_name: row.get(6)?,
                            redirect_url: row.get(7)?,
                            sandbox: row.get(8)?,
                            min_age: min_age_column(row, 9)?,
                        })
                    })
                    .optional()?)
            })
            .await
    }

    async fn live_request(
        &self,
        invite: &InviteId,
        now: UnixTime,
    ) -> StoreResult<Option<PresentationRequest>> {
        let invite = invite.clone();
        self.pool
            .read(move |conn| presentations::live(conn, &invite, now))
            .await
    }

    async fn open_request(
        &self,
        invite: &InviteId,
        fresh: PresentationRequest,
    ) -> StoreResult<PresentationRequest> {
        let invite = invite.clone();
        self.pool
            .write(move |conn| presentations::open(conn, &invite, fresh))
            .await
    }

    async fn request(
        &self,
        invite: &InviteId,
        state: &str,
    ) -> StoreResult<Option<PresentationRequest>> {
        let (invite, state) = (invite.clone(), state.to_owned());
        self.pool
            .read(move |conn| presentations::by_state(conn, &invite, &state))
            .await
    }

    async fn answer_request(
        &self,
        invite: &InviteId,
        state: &str,
        now: UnixTime,
    ) -> StoreResult<AnswerOutcome> {
        let (invite, state) = (invite.clone(), state.to_owned());
        self.pool
            .write(move |conn| presentations::answer(conn, &invite, &state, now))
            .await
    }

    async fn expire_due(&self, now: UnixTime, limit: usize) -> StoreResult<usize> {
        self.pool
            .write(move |conn| webhooks::expire_due(conn, now, limit))
            .await
    }

    async fn claim_events(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> StoreResult<Vec<DueEvent>> {
        self.pool
            .write(move |conn| webhooks::claim(conn, now_ms, lease_ms, limit))
            .await
    }

    async fn finish_attempt(
        &self,
        event_id: &str,
        attempt: Attempt,
        after: AfterAttempt,
        now: UnixTime,
    ) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.pool
            .write(move |conn| webhooks::finish_attempt(conn, &event_id, &attempt, after, now))
            .await
    }

    async fn deliveries(&self, site: SiteId, limit: usize) -> StoreResult<Vec<EventRecord>> {
        self.pool
            .read(move |conn| webhooks::deliveries(conn, site, limit))
            .await
    }

    async fn redeliver(&self, event_id: &str, now_ms: i64) -> StoreResult<bool> {
        let event_id = event_id.to_owned();
        self.pool
            .write(move |conn| webhooks::redeliver(conn, &event_id, now_ms))
            .await
    }

    async fn create_site(&self, site: NewSite) -> StoreResult<()> {
        self.pool
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO sites (site_id, name, redirect_url, webhook_url, sandbox, created_at, min_age)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?
                .execute(params![
                    site.id.to_string(),
                    site.name.as_str(),
                    site.redirect_url.as_ref().map(|u| u.as_str()),
                    site.webhook_url.as_ref().map(|u| u.as_str()),
                    site.sandbox,
                    site.created_at,
                    site.min_age.get()
                ])?;
                insert_credential(conn, site.id, &site.credential)?;
                conn.prepare_cached(
                    "INSERT INTO webhook_secrets (site_id, secret, created_at) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![
                    site.id.to_string(),
                    site.webhook_secret.expose(),
                    site.created_at
                ])?;
                Ok(())
            })
            .await
    }

    async fn sites(&self) -> StoreResult<Vec<SiteRecord>> {
        self.pool
            .read(|conn| {
                let mut stmt =
                    conn.prepare_cached("SELECT site_id FROM sites ORDER BY created_at, site_id")?;
                let ids = stmt
                    .query_map([], |row| site_id_column(row, 0))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                let mut sites = Vec::with_capacity(ids.len());
                for id in ids {
                    sites.extend(load_site(conn, id)?);
                }
                Ok(sites)
            })
            .await
    }

    async fn site(&self, id: SiteId) -> StoreResult<Option<SiteRecord>> {
        self.pool.read(move |conn| load_site(conn, id)).await
    }

    async fn update_site(&self, id: SiteId, update: SiteUpdate) -> StoreResult<bool> {
        self.pool
            .write(move |conn| {
                if !site_exists(conn, id)? {
                    return Ok(false);
                }
                if let Some(url) = update.redirect_url {
                    conn.execute(
                        "UPDATE sites SET redirect_url = ?2 WHERE site_id = ?1",
                        params![id.to_string(), url.as_ref().map(|u| u.as_str())],
                    )?;
                }
                if let Some(url) = update.webhook_url {
                    conn.execute(
                        "UPDATE sites SET webhook_url = ?2 WHERE site_id = ?1",
                        params![id.to_string(), url.as_ref().map(|u| u.as_str())],
                    )?;
                }
                if let Some(min_age) = update.min_age {
                    conn.execute(
                        "UPDATE sites SET min_age = ?2 WHERE site_id = ?1",
                        params![id.to_string(), min_age.get()],
                    )?;
                }
                Ok(true)
            })
            .await
    }

    async fn add_credential(&self, site: SiteId, credential: NewCredential) -> StoreResult<bool> {
        self.pool
            .write(move |conn| {
                if !site_exists(conn, site)? {
                    return Ok(false);
                }
                insert_credential(conn, site, &credential)?;
                Ok(true)
            })
            .await
    }

    async fn revoke_credential(
        &self,
        site: SiteId,
        username: &str,
        now: UnixTime,
    ) -> StoreResult<RevokeOutcome> {
        let username = username.to_owned();
        self.pool
            .write(move |conn| {
                let revoked_at: Option<Option<UnixTime>> = conn
                    .query_row(
                        "SELECT revoked_at FROM credentials WHERE username = ?1 AND site_id = ?2",
                        params![username, site.to_string()],
                        |row| row.get(0),
                    )
                    .optional()?;
                match revoked_at {
                    None => Ok(RevokeOutcome::NotFound),
                    Some(Some(_)) => Ok(RevokeOutcome::AlreadyRevoked),
                    Some(None) => {
                        conn.execute(
                            "UPDATE credentials SET revoked_at = ?2 WHERE username = ?1",
                            params![username, now],
                        )?;
                        Ok(RevokeOutcome::Revoked)
                    }
                }
            })
            .await
    }

    async fn rotate_webhook_secret(
        &self,
        site: SiteId,
        secret: WebhookSecret,
        now: UnixTime,
    ) -> StoreResult<bool> {
        self.pool
            .write(move |conn| {
                if !site_exists(conn, site)? {
                    return Ok(false);
                }
                conn.execute(
                    "UPDATE webhook_secrets SET retired_at = ?2
                     WHERE site_id = ?1 AND retired_at IS NULL",
                    params![site.to_string(), now],
                )?;
                conn.execute(
                    "INSERT INTO webhook_secrets (site_id, secret, created_at) VALUES (?1, ?2, ?3)",
                    params![site.to_string(), secret.expose(), now],
                )?;
                Ok(true)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::{connect, path_of};

    #[test]
    fn connections_are_wal_and_fsync_every_commit() {
        let dir = tempfile::tempdir().unwrap();
        let conn = connect(&dir.path().join("t.db"), false).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        // 2 = FULL: in WAL mode NORMAL would skip the fsync at commit.
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2);
    }

    #[test]
    fn sqlite_urls_name_a_file() {
        assert_eq!(path_of("sqlite:agegate.db"), Some("agegate.db"));
        assert_eq!(path_of("sqlite://data/a.db"), Some("data/a.db"));
        assert_eq!(path_of("sqlite:///var/lib/a.db"), Some("/var/lib/a.db"));
        assert_eq!(path_of("sqlite:a.db?mode=rwc"), Some("a.db"));
        assert_eq!(path_of("postgres://x"), None);
    }
}
