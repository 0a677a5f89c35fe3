//! Wires a server together: binds the listener first (so callers learn the port, and
//! tests can bind port 0), then serves until told to stop.

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::{parse_public_url, Settings};
use crate::http::{self, AppParts};
use crate::store::Store;

pub struct Application {
    listener: TcpListener,
    router: axum::Router,
    local_addr: SocketAddr,
    public_url: String,
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
        let router = http::router(AppParts {
            store,
            clock,
            public_url: public_url.clone(),
            verifier_token: settings.verifier_token.clone(),
        });
        Ok(Self {
            listener,
            router,
            local_addr,
            public_url,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// Serves until `shutdown` is cancelled, then stops accepting and lets in-flight
    /// requests finish.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> std::io::Result<()> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    }
}
