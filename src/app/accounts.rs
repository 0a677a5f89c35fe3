//! The console's accounts.

use serde::Serialize;

use super::Services;
use crate::domain::console::{ConsolePassword, ConsoleUsername, PasswordHashError};
use crate::store::{NewConsoleUser, StoreError};

/// Why an account operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("a console user named '{0}' exists already")]
    Exists(ConsoleUsername),
    #[error("no console user named '{0}'")]
    NoSuchUser(ConsoleUsername),
    #[error(transparent)]
    Hash(#[from] PasswordHashError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new account; the password is shown only once.
#[derive(Serialize)]
pub struct CreatedUser {
    pub username: String,
    pub password: String,
}

/// The console's accounts, as the command line reaches them.
pub struct Accounts<'a>(&'a Services);

impl Services {
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts(self)
    }
}

impl Accounts<'_> {
    /// Creates a console account with a generated password.
    pub async fn create(&self, name: ConsoleUsername) -> Result<CreatedUser, AccountError> {
        // Argon2 is slow on purpose; keep it off the async workers.
        let (password, hashed) = tokio::task::spawn_blocking(|| {
            let password = ConsolePassword::generate();
            let hashed = password.hash();
            (password, hashed)
        })
        .await
        .map_err(|e| PasswordHashError(e.to_string()))?;
        let created = self
            .0
            .store
            .create_console_user(NewConsoleUser {
                username: name.clone(),
                password_hash: hashed?,
                created_at: self.0.clock.now(),
            })
            .await?;
        if !created {
            return Err(AccountError::Exists(name));
        }
        Ok(CreatedUser {
            username: name.as_str().to_owned(),
            password: password.expose().to_owned(),
        })
    }

    /// Deletes an account; every node reads sessions from the database on each request, so
    /// its sessions end at once.
    pub async fn delete(&self, name: &ConsoleUsername) -> Result<(), AccountError> {
        if !self.0.store.delete_console_user(name).await? {
            return Err(AccountError::NoSuchUser(name.clone()));
        }
        Ok(())
    }
}
