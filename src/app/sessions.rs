//! Signing in to the console, who a session belongs to, and signing out. A session is a
//! random id whose digest names a row in the database, read afresh on every request, so
//! a deleted account or a sign-out ends it on every node at once. Failed sign-ins are
//! counted per typed name and client address in the database, where every node sees
//! them. The console's HTTP edge keeps the cookie, the CSRF check and the pages.

use super::Services;
use crate::domain::console::{ConsoleUsername, PasswordHash, SessionId, SESSION_LIFETIME_SECS};
use crate::store::{NewSession, StoreError};

/// Why a sign-in did not start a session.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Five failures in a row for this name from this address: nothing is checked until
    /// `wait` seconds have passed.
    #[error("too many failed sign-ins; try again in {wait} s")]
    Throttled { wait: u64 },
    /// No account of that name, or another password (told apart by nothing, not even
    /// time: an unknown name is checked against a decoy hash).
    #[error("that name and password do not match an account")]
    Refused,
    #[error("the password check did not finish: {0}")]
    Internal(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A session just started: the id for the cookie, shown once, and who it is.
#[derive(Debug)]
pub struct Started {
    pub id: SessionId,
    pub username: ConsoleUsername,
}

/// Console sign-in, as the console reaches it.
pub struct Sessions<'a>(&'a Services);

impl Services {
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions(self)
    }
}

impl Sessions<'_> {
    /// Signs `typed` in with `password` from `address`: throttled after five failures in a
    /// row for one name and address, a failure counted, success ending the streak and
    /// starting a session of [`SESSION_LIFETIME_SECS`].
    pub async fn sign_in(
        &self,
        typed: &str,
        password: String,
        address: &str,
    ) -> Result<Started, SignInError> {
        let now = self.0.clock.now();
        let name = ConsoleUsername::parse(typed).ok();
        if let Some(name) = &name {
            let failures = self.0.store.sign_in_failures(name, address).await?;
            if let Some(wait) = failures.and_then(|f| f.locked_for(now)) {
                return Err(SignInError::Throttled { wait });
            }
        }
        let hash = match &name {
            Some(name) => self
                .0
                .store
                .console_user(name)
                .await?
                .map(|u| u.password_hash),
            None => None,
        };
        // Argon2 is slow on purpose: off the async workers.
        let matches = tokio::task::spawn_blocking(move || match &hash {
            Some(hash) => hash.verify(&password),
            None => {
                PasswordHash::decoy().verify(&password);
                false
            }
        })
        .await
        .map_err(|e| SignInError::Internal(e.to_string()))?;
        let Some(name) = name.filter(|_| matches) else {
            if let Ok(name) = ConsoleUsername::parse(typed) {
                self.0
                    .store
                    .record_sign_in_failure(&name, address, now)
                    .await?;
            }
            // The typed name stays out of the log: people type passwords there by mistake.
            tracing::info!(client = %address, "console sign-in refused");
            return Err(SignInError::Refused);
        };
        let id = SessionId::generate();
        let session = NewSession {
            digest: id.digest(),
            username: name.clone(),
            created_at: now,
            expires_at: now + SESSION_LIFETIME_SECS,
        };
        if !self.0.store.start_session(session, address).await? {
            // Deleted between the check and now.
            return Err(SignInError::Refused);
        }
        tracing::info!(user = %name, client = %address, "console sign-in");
        Ok(Started { id, username: name })
    }

    /// Who session `id` belongs to, if it is live now and its account exists.
    pub async fn operator(&self, id: &SessionId) -> Result<Option<ConsoleUsername>, StoreError> {
        let session = self
            .0
            .store
            .console_session(&id.digest(), self.0.clock.now())
            .await?;
        Ok(session.map(|s| s.username))
    }

    /// Ends session `id` in the database, for every node.
    pub async fn sign_out(&self, id: &SessionId) -> Result<(), StoreError> {
        self.0.store.end_session(&id.digest()).await
    }
}
