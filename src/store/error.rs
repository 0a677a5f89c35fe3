//! What can go wrong in a store, told apart by what the caller should do about it:
//! [`StoreError::Unavailable`] and [`StoreError::Closed`] are worth a retry later (HTTP 503),
//! the others are faults (HTTP 500) or bad input at start.

use std::sync::Arc;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(Arc<dyn std::error::Error + Send + Sync>),
    #[error("the database connection is closed")]
    Closed,
    /// The database cannot be reached, lost the connection, is out of resources, refuses
    /// writes, or did not answer in time; it may well answer again later.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    #[error("unsupported database URL: {0}")]
    UnsupportedUrl(String),
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
    /// A write for a site that was deleted after its credential was checked (credentials
    /// are trusted for a moment without a database read).
    #[error("the site no longer exists")]
    SiteGone,
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// A [`StoreError::Database`] whose message is `e` with its causes, on one line.
    pub fn database(e: &(dyn std::error::Error + 'static)) -> Self {
        let message: Box<dyn std::error::Error + Send + Sync> = describe(e).into();
        StoreError::Database(Arc::from(message))
    }
}

/// An error and its chain of causes, on one line (callers print start-up errors as one).
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let part = c.to_string();
        // Some errors repeat their cause in their own message.
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = c.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_described_on_one_line() {
        let io = std::io::Error::other("refused\nby peer");
        assert_eq!(describe(&io), "refused by peer");
    }
}
