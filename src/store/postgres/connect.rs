//! How connections are made: the pool's, and the status sync's own.

use std::time::Duration;

use deadpool_postgres::{
    ClientWrapper, Hook, HookError, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime,
};
use tokio_postgres::NoTls;

use crate::store::{describe, DbOptions, StoreError, StoreResult};

/// How long to wait for a connection (a new one, or a free one from the pool): short, so
/// requests fail fast with 503 while PostgreSQL is away instead of piling up.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// Idle time before TCP keepalive probes start, so a silently dropped connection is
/// noticed in about a minute rather than the system's two hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);

/// How every connection is made: the pool's, and the status sync's own.
pub fn config(database_url: &str) -> StoreResult<tokio_postgres::Config> {
    let mut config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e: tokio_postgres::Error| StoreError::UnsupportedUrl(describe(&e)))?;
    config.connect_timeout(CONNECTION_TIMEOUT);
    config.keepalives_idle(KEEPALIVE_IDLE);
    if config.get_application_name().is_none() {
        config.application_name("agegate");
    }
    Ok(config)
}

pub fn pool(config: tokio_postgres::Config, options: &DbOptions) -> StoreResult<Pool> {
    let manager = Manager::from_config(
        config,
        NoTls,
        // `Fast` only checks that a connection is open: no round trip per checkout. A
        // connection PostgreSQL dropped is closed on its first failed use and replaced.
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    // Set on every connection the pool makes, new or re-made after PostgreSQL comes back.
    // A SET rather than a start-up option, which poolers such as PgBouncer refuse.
    let set_timeout = format!(
        "SET statement_timeout = {}",
        options.statement_timeout.as_millis()
    );
    let post_create = Hook::async_fn(move |client: &mut ClientWrapper, _| {
        let sql = set_timeout.clone();
        Box::pin(async move { client.batch_execute(&sql).await.map_err(HookError::Backend) })
    });
    Pool::builder(manager)
        .max_size(options.pool_size.max(1))
        .post_create(post_create)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(CONNECTION_TIMEOUT))
        .create_timeout(Some(CONNECTION_TIMEOUT))
        .recycle_timeout(Some(CONNECTION_TIMEOUT))
        .build()
        .map_err(|e| StoreError::database(&e))
}
