//! The console's capability on SQLite: its SQL (accounts, sessions, the sign-in throttle,
//! tallies, the invite page's reads) and the trait's implementation. Writes run on the
//! single writer; sessions are read in a fresh read transaction, so a change made by
//! another process (the command line deleting an account) is seen at once.

use rusqlite::{params, Connection};
use std::ops::Range;

use super::writer_conn::Snapshot;
use super::{all, one, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::console::{ConsoleUsername, Failures, SessionDigest};
use crate::domain::{InviteId, SiteId};
use crate::store::rows::{
    self, ATTEMPT_COLUMNS, CONSOLE_USER_COLUMNS, EVENT_COLUMNS, FAILURES_COLUMNS,
    INVITE_DETAIL_COLUMNS, SESSION_COLUMNS, TALLY_COLUMNS,
};
use crate::store::{
    ConsoleStore, ConsoleUserRecord, EventRecord, InviteDetail, NewConsoleUser, NewSession,
    SessionRecord, StoreResult, Tally,
};

fn create_user(conn: &Connection, user: &NewConsoleUser) -> StoreResult<bool> {
    let added = conn
        .prepare_cached(
            "INSERT INTO console_users (username, password_hash, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (username) DO NOTHING",
        )?
        .execute(params![
            user.username.as_str(),
            user.password_hash.as_str(),
            user.created_at
        ])?;
    Ok(added == 1)
}

fn delete_user(conn: &Connection, username: &ConsoleUsername) -> StoreResult<bool> {
    conn.prepare_cached("DELETE FROM console_sessions WHERE username = ?1")?
        .execute([username.as_str()])?;
    let deleted = conn
        .prepare_cached("DELETE FROM console_users WHERE username = ?1")?
        .execute([username.as_str()])?;
    Ok(deleted == 1)
}

fn failures(
    conn: &Connection,
    username: &ConsoleUsername,
    address: &str,
) -> StoreResult<Option<Failures>> {
    let sql = format!(
        "SELECT {FAILURES_COLUMNS} FROM console_sign_in_failures
         WHERE username = ?1 AND address = ?2"
    );
    one(
        conn,
        &sql,
        params![username.as_str(), address],
        rows::failures,
    )
}

/// Read and written in one job: the single writer makes it one step.
fn record_failure(
    conn: &Connection,
    username: &ConsoleUsername,
    address: &str,
    now: UnixTime,
) -> StoreResult<Failures> {
    let streak = Failures::after(failures(conn, username, address)?, now);
    conn.prepare_cached(
        "INSERT INTO console_sign_in_failures (username, address, failures, last_failure_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (username, address)
         DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at",
    )?
    .execute(params![
        username.as_str(),
        address,
        streak.count,
        streak.last_at
    ])?;
    Ok(streak)
}

fn start_session(conn: &Connection, session: &NewSession, address: &str) -> StoreResult<bool> {
    let started = conn
        .prepare_cached(
            "INSERT INTO console_sessions (session_digest, username, created_at, expires_at)
             SELECT ?1, username, ?3, ?4 FROM console_users WHERE username = ?2",
        )?
        .execute(params![
            &session.digest.0[..],
            session.username.as_str(),
            session.created_at,
            session.expires_at
        ])?;
    conn.prepare_cached(
        "DELETE FROM console_sign_in_failures WHERE username = ?1 AND address = ?2",
    )?
    .execute(params![session.username.as_str(), address])?;
    Ok(started == 1)
}

fn session(
    conn: &Connection,
    digest: &SessionDigest,
    now: UnixTime,
) -> StoreResult<Option<SessionRecord>> {
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM console_sessions s
         JOIN console_users u ON u.username = s.username
         WHERE s.session_digest = ?1 AND s.expires_at > ?2"
    );
    one(conn, &sql, params![&digest.0[..], now], rows::session)
}

fn tallies(conn: &Connection, days: &Range<i64>) -> StoreResult<Vec<Tally>> {
    let sql = format!(
        "SELECT {TALLY_COLUMNS} FROM invite_tallies WHERE day >= ?1 AND day < ?2
         GROUP BY day, event, method ORDER BY day, event, method"
    );
    all(conn, &sql, params![days.start, days.end], rows::tally)
}

fn invite_detail(
    conn: &Connection,
    site: SiteId,
    id: &InviteId,
) -> StoreResult<Option<InviteDetail>> {
    let sql = format!(
        "SELECT {INVITE_DETAIL_COLUMNS} FROM invites i WHERE i.invite_id = ?1 AND i.site_id = ?2"
    );
    one(
        conn,
        &sql,
        params![id.as_str(), site.to_string()],
        rows::invite_detail,
    )
}

fn invite_events(conn: &Connection, site: SiteId, id: &InviteId) -> StoreResult<Vec<EventRecord>> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM webhook_events WHERE invite_id = ?1 AND site_id = ?2
         ORDER BY occurred_at, event_id"
    );
    let mut events = all(
        conn,
        &sql,
        params![id.as_str(), site.to_string()],
        rows::event,
    )?;
    let sql = format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = ?1 ORDER BY attempt"
    );
    for event in &mut events {
        event.attempts = all(conn, &sql, [event.event_id.as_str()], rows::attempt)?;
    }
    Ok(events)
}

#[async_trait::async_trait]
impl ConsoleStore for SqliteStore {
    async fn create_console_user(&self, user: NewConsoleUser) -> StoreResult<bool> {
        self.pool.write(move |conn| create_user(conn, &user)).await
    }

    async fn delete_console_user(&self, username: &ConsoleUsername) -> StoreResult<bool> {
        let username = username.clone();
        self.pool
            .write(move |conn| delete_user(conn, &username))
            .await
    }

    async fn console_user(
        &self,
        username: &ConsoleUsername,
    ) -> StoreResult<Option<ConsoleUserRecord>> {
        let username = username.clone();
        self.pool
            .read_now(Snapshot::Latest, move |conn| {
                let sql =
                    format!("SELECT {CONSOLE_USER_COLUMNS} FROM console_users WHERE username = ?1");
                one(conn, &sql, [username.as_str()], rows::console_user)
            })
            .await
    }

    async fn sign_in_failures(
        &self,
        username: &ConsoleUsername,
        address: &str,
    ) -> StoreResult<Option<Failures>> {
        let (username, address) = (username.clone(), address.to_owned());
        self.pool
            .read_now(Snapshot::Latest, move |conn| {
                failures(conn, &username, &address)
            })
            .await
    }

    async fn record_sign_in_failure(
        &self,
        username: &ConsoleUsername,
        address: &str,
        now: UnixTime,
    ) -> StoreResult<Failures> {
        let (username, address) = (username.clone(), address.to_owned());
        self.pool
            .write(move |conn| record_failure(conn, &username, &address, now))
            .await
    }

    async fn start_session(&self, session: NewSession, address: &str) -> StoreResult<bool> {
        let address = address.to_owned();
        self.pool
            .write(move |conn| start_session(conn, &session, &address))
            .await
    }

    async fn console_session(
        &self,
        digest: &SessionDigest,
        now: UnixTime,
    ) -> StoreResult<Option<SessionRecord>> {
        let digest = *digest;
        self.pool
            .read_now(Snapshot::Latest, move |conn| session(conn, &digest, now))
            .await
    }

    async fn end_session(&self, digest: &SessionDigest) -> StoreResult<()> {
        let digest = *digest;
        self.pool
            .write(move |conn| {
                conn.prepare_cached("DELETE FROM console_sessions WHERE session_digest = ?1")?
                    .execute([&digest.0[..]])?;
                Ok(())
            })
            .await
    }

    async fn tallies(&self, days: Range<i64>) -> StoreResult<Vec<Tally>> {
        self.pool.read(move |conn| tallies(conn, &days)).await
    }

    async fn invite_detail(
        &self,
        site: SiteId,
        id: &InviteId,
    ) -> StoreResult<Option<InviteDetail>> {
        let id = id.clone();
        self.pool
            .read(move |conn| invite_detail(conn, site, &id))
            .await
    }

    async fn invite_events(&self, site: SiteId, id: &InviteId) -> StoreResult<Vec<EventRecord>> {
        let id = id.clone();
        self.pool
            .read(move |conn| invite_events(conn, site, &id))
            .await
    }
}
