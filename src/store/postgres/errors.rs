//! PostgreSQL's failures sorted into [`StoreError`]: what says the database cannot serve
//! now (unreachable, connection lost, shutting down, out of resources, read-only, too
//! slow) is [`StoreError::Unavailable`] — HTTP 503, and the pool heals once it is back;
//! everything else is a fault of ours or of the data.

use deadpool_postgres::{HookError, PoolError, TimeoutType};

use super::connect::CONNECTION_TIMEOUT;

use crate::store::{describe, StoreError};

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        if is_unavailable(&e) {
            StoreError::Unavailable(describe(&e))
        } else {
            StoreError::database(&e)
        }
    }
}

impl From<PoolError> for StoreError {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Backend(e) => e.into(),
            PoolError::Closed => StoreError::Closed,
            PoolError::Timeout(TimeoutType::Create) => StoreError::Unavailable(format!(
                "could not connect within {}s",
                CONNECTION_TIMEOUT.as_secs()
            )),
            PoolError::Timeout(TimeoutType::Wait) => StoreError::Unavailable(format!(
                "every pooled connection stayed busy for {}s",
                CONNECTION_TIMEOUT.as_secs()
            )),
            PoolError::Timeout(TimeoutType::Recycle) => {
                StoreError::Unavailable("checking a pooled connection timed out".into())
            }
            PoolError::PostCreateHook(HookError::Backend(e)) => e.into(),
            PoolError::PostCreateHook(HookError::Message(_)) | PoolError::NoRuntimeSpecified => {
                StoreError::database(&e)
            }
        }
    }
}

fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(state) = e.code() {
        return is_unavailable_state(state.code());
    }
    // Without a SQLSTATE the failure is the client's own: a connection that could not be
    // made or broke (an I/O error underneath), or a bug (types, row counts).
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.is::<std::io::Error>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// SQLSTATEs that say "not now" rather than "not so".
fn is_unavailable_state(code: &str) -> bool {
    // 08: connection exception; 53: insufficient resources (disk full, out of memory,
    // too many connections).
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(
            code,
            // admin_shutdown, crash_shutdown, cannot_connect_now (starting up)
            "57P01" | "57P02" | "57P03"
            // query_canceled: the statement timeout fired
            | "57014"
            // read_only_sql_transaction: a standby, or a primary set read-only
            | "25006"
        )
}

#[cfg(test)]
mod tests {
    use super::is_unavailable_state;

    #[test]
    fn connection_resource_and_shutdown_states_are_unavailable() {
        for code in [
            "08006", "08001", "53100", "53300", "57P01", "57014", "25006",
        ] {
            assert!(is_unavailable_state(code), "{code}");
        }
        for code in ["23505", "23503", "42P01", "40P01", "22P02"] {
            assert!(!is_unavailable_state(code), "{code}");
        }
    }
}
