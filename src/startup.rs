//! Wires a server together: binds the listener first (so callers learn the port, and
//! tests can bind port 0), then serves, with the background workers, until told to stop.

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::{parse_public_url, Settings};
use crate::http::{self, AppParts};
use crate::store::Store;
use crate::webhooks::{client::WebhookClient, sweeper, worker::Worker};

pub struct Application {
    listener: TcpListener,
    router: axum::Router,
    local_addr: SocketAddr,
    public_url: String,
    settings: Settings,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    deliveries: Arc<Notify>,
}

impl Application {
    pub async fn build(
        settings: Settings,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(&settings.listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", settings.listen))?;
        let local_addr = listener.local_addr()?;
        let public_url = match &settings.public_url {
            Some(url) => parse_public_url(url).map_err(anyhow::Error::msg)?,
            None => format!("http://{local_addr}"),
        };
        let deliveries = Arc::new(Notify::new());
        let router = http::router(AppParts {
            store: store.clone(),
            clock: clock.clone(),
            public_url: public_url.clone(),
            verifier_token: settings.verifier_token.clone(),
            deliveries: deliveries.clone(),
            eu_av: settings.eu_av.clone(),
        });
        Ok(Self {
            listener,
            router,
            local_addr,
            public_url,
            settings,
            store,
            clock,
            deliveries,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// Serves until `shutdown` is cancelled, then stops accepting, lets in-flight
    /// requests and webhook attempts finish, and returns.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let mut workers = JoinSet::new();
        let worker = Worker {
            store: self.store.clone(),
            clock: self.clock.clone(),
            client: WebhookClient::new(self.settings.allow_private_webhooks),
            schedule: self.settings.webhook_retry_schedule.clone(),
            public_url: self.public_url.clone(),
            wake: self.deliveries.clone(),
            poll: self.settings.webhook_poll_interval,
            lease: self.settings.webhook_lease,
        };
        workers.spawn(worker.run(shutdown.clone()));
        workers.spawn(sweeper::run(
            self.store.clone(),
            self.clock.clone(),
            self.deliveries.clone(),
            self.settings.sweep_interval,
            shutdown.clone(),
        ));
        let served = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown.clone().cancelled_owned())
            .await;
        // If serving failed, stop the workers too.
        shutdown.cancel();
        while workers.join_next().await.is_some() {}
        served
    }
}
