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
use crate::metrics::Metrics;
use crate::server;
use crate::store::Store;
use crate::webhooks::{client::WebhookClient, sweeper, worker::Worker};

/// The first start creates the receipt key every node then signs with. A database that
/// refuses writes now (a standby) does not stop the server: the first verification
/// creates the key instead (`store::transitions::receipt_key`).
async fn ensure_receipt_key(store: &dyn Store, now: crate::clock::UnixTime) {
    let key = crate::receipt::ReceiptKey::generate();
    let record = crate::store::ReceiptKeyRecord {
        kid: key.kid(),
        private_key: key.to_bytes(),
        created_at: now,
    };
    match store.add_receipt_key(record, true).await {
        Ok(true) => tracing::info!(kid = %key.kid(), "created the receipt signing key"),
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "could not create the receipt signing key yet"),
    }
}

/// The database a server runs on, opened: the command line hands it to the trust
/// refresher and to [`Application::build`], which gives the edges their services; it
/// offers nothing else, so the command that starts a server cannot call the store.
pub struct Database(Arc<dyn Store>);

impl Database {
    pub async fn open(
        url: &crate::store::DatabaseUrl,
        options: &crate::store::DbOptions,
    ) -> crate::store::StoreResult<Self> {
        Ok(Self(crate::store::open_with(url, options).await?))
    }

    /// The trust anchors and lists of `files`, a list that cannot be fetched taken from
    /// the database's copy ([`TrustHandle::start`](crate::trust::TrustHandle::start)).
    pub async fn load_trust(
        &self,
        files: crate::trust::TrustFiles,
        now: crate::clock::UnixTime,
    ) -> Result<
        (
            Arc<crate::trust::TrustHandle>,
            Vec<crate::trust::refresh::Outcome>,
        ),
        String,
    > {
        let fetcher = crate::trust::Fetcher::default();
        crate::trust::TrustHandle::start(files, self.0.as_ref(), &fetcher, now).await
    }

    /// [`Application::build`] over this database.
    pub async fn build(
        self,
        settings: Settings,
        clock: Arc<dyn Clock>,
    ) -> Result<Application, StartupError> {
        Application::build(settings, self.0, clock).await
    }
}

pub struct Application {
    listener: TcpListener,
    router: http::edge::Edge,
    local_addr: SocketAddr,
    public_url: String,
    settings: Settings,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    deliveries: Arc<Notify>,
    metrics: Arc<Metrics>,
    /// `--metrics-listen`: `/metrics` is served here only, never on the public port.
    metrics_listener: Option<TcpListener>,
    /// `--admin-listen`: the operator console, here only, never on the public port.
    admin: Option<(TcpListener, axum::Router)>,
}

/// Why a server could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// `flag` names the option the address came from (empty for `--listen`).
    #[error("cannot listen on {addr}{flag}: {cause}")]
    Listen {
        addr: String,
        flag: &'static str,
        cause: std::io::Error,
    },
    #[error("{0}")]
    PublicUrl(String),
}

impl Application {
    pub async fn build(
        settings: Settings,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StartupError> {
        let listen_error = |addr: &str, flag: &'static str| {
            let addr = addr.to_owned();
            move |cause| StartupError::Listen { addr, flag, cause }
        };
        let listener = TcpListener::bind(&settings.listen)
            .await
            .map_err(listen_error(&settings.listen, ""))?;
        let local_addr = listener
            .local_addr()
            .map_err(listen_error(&settings.listen, ""))?;
        let public_url = match &settings.public_url {
            Some(url) => parse_public_url(url).map_err(StartupError::PublicUrl)?,
            None => format!("http://{local_addr}"),
        };
        let metrics_listener = match &settings.metrics_listen {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(listen_error(addr, " (--metrics-listen)"))?,
            ),
            None => None,
        };
        let admin_listener = match &settings.admin_listen {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .map_err(listen_error(addr, " (--admin-listen)"))?,
            ),
            None => None,
        };
        let metrics = Metrics::new();
        let deliveries = Arc::new(Notify::new());
        let counted = metrics.clone();
        let status_lists = crate::trust::status_lists::StatusLists::new(
            store.clone(),
            clock.clone(),
            Box::new(move |result| counted.status_list_fetch(result)),
        );
        let services = crate::app::Services::new(store.clone(), clock.clone(), deliveries.clone());
        let admin = admin_listener.map(|listener| {
            let router = http::console::router(http::console::ConsoleParts {
                services: services.clone(),
                clock: clock.clone(),
                public_url: public_url.clone(),
                trust: settings.trust.clone(),
            });
            (listener, router)
        });
        let router = http::router(AppParts {
            metrics: metrics.clone(),
            services,
            clock: clock.clone(),
            public_url: public_url.clone(),
            verifier_token: settings.verifier_token.clone(),
            trust: settings.trust.clone(),
            wallet_scheme: settings.wallet_scheme.clone(),
            signed_wallet_scheme: settings.signed_wallet_scheme.clone(),
            wallet_links: settings.wallet_links,
            dc_api_signer: settings.dc_api_signer.clone(),
            zk: settings.zk.clone(),
            status_mode: settings.credential_status,
            status_lists: status_lists.clone(),
            rate_limit: settings.rate_limit,
            observe: metrics_listener.is_some(),
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
            metrics,
            metrics_listener,
            admin,
        })
    }

    /// Where the operator console is served, if anywhere.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin.as_ref().and_then(|(l, _)| l.local_addr().ok())
    }

    /// Where `/metrics` is served, if anywhere.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
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
        ensure_receipt_key(self.store.as_ref(), self.clock.now()).await;
        let mut workers = JoinSet::new();
        let worker = Worker {
            store: self.store.clone(),
            clock: self.clock.clone(),
            client: WebhookClient::new(
                self.settings.allow_private_webhooks,
                self.settings.webhook_timeout,
            ),
            schedule: self.settings.webhook_retry_schedule.clone(),
            public_url: self.public_url.clone(),
            wake: self.deliveries.clone(),
            poll: self.settings.webhook_poll_interval,
            lease: self.settings.webhook_lease,
            metrics: self.metrics.clone(),
        };
        workers.spawn(worker.run(shutdown.clone()));
        workers.spawn(sweeper::run(
            self.store.clone(),
            self.clock.clone(),
            self.deliveries.clone(),
            self.settings.sweep_interval,
            shutdown.clone(),
        ));
        workers.spawn(crate::retention::run(
            self.store.clone(),
            self.clock.clone(),
            self.settings.retention,
            self.settings.retention_interval,
            shutdown.clone(),
        ));
        workers.spawn(crate::trust::refresh::run(
            self.settings.trust.clone(),
            self.store.clone(),
            self.clock.clone(),
            self.settings.trust_refresh,
            shutdown.clone(),
        ));
        if let Some(listener) = self.metrics_listener {
            let metrics = self.metrics.clone();
            let (trust, clock) = (self.settings.trust.clone(), self.clock.clone());
            let router = axum::Router::new().route(
                "/metrics",
                axum::routing::get(move || async move {
                    let text = metrics.render_with_trust(&trust, clock.now());
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        text,
                    )
                }),
            );
            workers.spawn(server::serve(listener, router, shutdown.clone()));
        }
        if let Some((listener, router)) = self.admin {
            workers.spawn(server::serve_with_client_addr(
                listener,
                router,
                shutdown.clone(),
            ));
        }
        server::serve(self.listener, self.router, shutdown.clone()).await;
        shutdown.cancel();
        while workers.join_next().await.is_some() {}
        Ok(())
    }
}
