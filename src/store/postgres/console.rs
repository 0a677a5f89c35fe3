//! The console's capability on PostgreSQL: its SQL (accounts, sessions, the sign-in
//! throttle, tallies, the invite page's reads) and the trait's implementation. The
//! tallies are written by the database's triggers (migration 6).

use deadpool_postgres::GenericClient;
use std::ops::Range;

use super::{all, execute, one, PostgresStore};
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

async fn failures(
    client: &impl GenericClient,
    username: &ConsoleUsername,
    address: &str,
    lock: &str,
) -> StoreResult<Option<Failures>> {
    let sql = format!(
        "SELECT {FAILURES_COLUMNS} FROM console_sign_in_failures
         WHERE username = $1 AND address = $2 {lock}"
    );
    one(
        client,
        &sql,
        &[&username.as_str(), &address],
        rows::failures,
    )
    .await
}

#[async_trait::async_trait]
impl ConsoleStore for PostgresStore {
    async fn create_console_user(&self, user: NewConsoleUser) -> StoreResult<bool> {
        let added = execute(
            &self.client().await?,
            "INSERT INTO console_users (username, password_hash, created_at) VALUES ($1, $2, $3)
             ON CONFLICT (username) DO NOTHING",
            &[
                &user.username.as_str(),
                &user.password_hash.as_str(),
                &user.created_at,
            ],
        )
        .await?;
        Ok(added == 1)
    }

    async fn delete_console_user(&self, username: &ConsoleUsername) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let name = username.as_str();
        execute(
            &tx,
            "DELETE FROM console_sessions WHERE username = $1",
            &[&name],
        )
        .await?;
        let deleted = execute(
            &tx,
            "DELETE FROM console_users WHERE username = $1",
            &[&name],
        )
        .await?;
        tx.commit().await?;
        Ok(deleted == 1)
    }

    async fn console_user(
        &self,
        username: &ConsoleUsername,
    ) -> StoreResult<Option<ConsoleUserRecord>> {
        let sql = format!("SELECT {CONSOLE_USER_COLUMNS} FROM console_users WHERE username = $1");
        let client = self.client().await?;
        one(&client, &sql, &[&username.as_str()], rows::console_user).await
    }

    async fn sign_in_failures(
        &self,
        username: &ConsoleUsername,
        address: &str,
    ) -> StoreResult<Option<Failures>> {
        failures(&self.client().await?, username, address, "").await
    }

    /// The row is made if missing, then locked, so concurrent failures count one by one.
    async fn record_sign_in_failure(
        &self,
        username: &ConsoleUsername,
        address: &str,
        now: UnixTime,
    ) -> StoreResult<Failures> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let name = username.as_str();
        execute(
            &tx,
            "INSERT INTO console_sign_in_failures (username, address, failures, last_failure_at)
             VALUES ($1, $2, 0, $3) ON CONFLICT (username, address) DO NOTHING",
            &[&name, &address, &now],
        )
        .await?;
        let streak = Failures::after(failures(&tx, username, address, "FOR UPDATE").await?, now);
        execute(
            &tx,
            "UPDATE console_sign_in_failures SET failures = $3, last_failure_at = $4
             WHERE username = $1 AND address = $2",
            &[&name, &address, &i64::from(streak.count), &streak.last_at],
        )
        .await?;
        tx.commit().await?;
        Ok(streak)
    }

    async fn start_session(&self, session: NewSession, address: &str) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let name = session.username.as_str();
        let started = execute(
            &tx,
            "INSERT INTO console_sessions (session_digest, username, created_at, expires_at)
             SELECT $1, username, $3, $4 FROM console_users WHERE username = $2",
            &[
                &&session.digest.0[..],
                &name,
                &session.created_at,
                &session.expires_at,
            ],
        )
        .await?;
        execute(
            &tx,
            "DELETE FROM console_sign_in_failures WHERE username = $1 AND address = $2",
            &[&name, &address],
        )
        .await?;
        tx.commit().await?;
        Ok(started == 1)
    }

    async fn console_session(
        &self,
        digest: &SessionDigest,
        now: UnixTime,
    ) -> StoreResult<Option<SessionRecord>> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM console_sessions s
             JOIN console_users u ON u.username = s.username
             WHERE s.session_digest = $1 AND s.expires_at > $2"
        );
        let client = self.client().await?;
        one(&client, &sql, &[&&digest.0[..], &now], rows::session).await
    }

    async fn end_session(&self, digest: &SessionDigest) -> StoreResult<()> {
        execute(
            &self.client().await?,
            "DELETE FROM console_sessions WHERE session_digest = $1",
            &[&&digest.0[..]],
        )
        .await?;
        Ok(())
    }

    async fn tallies(&self, days: Range<i64>) -> StoreResult<Vec<Tally>> {
        let sql = format!(
            "SELECT {TALLY_COLUMNS} FROM invite_tallies WHERE day >= $1 AND day < $2
             GROUP BY day, event, method ORDER BY day, event, method"
        );
        let client = self.client().await?;
        all(&client, &sql, &[&days.start, &days.end], rows::tally).await
    }

    async fn invite_detail(
        &self,
        site: SiteId,
        id: &InviteId,
    ) -> StoreResult<Option<InviteDetail>> {
        let sql = format!(
            "SELECT {INVITE_DETAIL_COLUMNS} FROM invites i
             WHERE i.invite_id = $1 AND i.site_id = $2"
        );
        let client = self.client().await?;
        one(
            &client,
            &sql,
            &[&id.as_str(), &site.to_string()],
            rows::invite_detail,
        )
        .await
    }

    async fn invite_events(&self, site: SiteId, id: &InviteId) -> StoreResult<Vec<EventRecord>> {
        let client = self.client().await?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM webhook_events WHERE invite_id = $1 AND site_id = $2
             ORDER BY occurred_at, event_id COLLATE \"C\""
        );
        let mut events = all(
            &client,
            &sql,
            &[&id.as_str(), &site.to_string()],
            rows::event,
        )
        .await?;
        let sql = format!(
            "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt"
        );
        for event in &mut events {
            event.attempts = all(&client, &sql, &[&event.event_id.as_str()], rows::attempt).await?;
        }
        Ok(events)
    }
}
