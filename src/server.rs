//! The HTTP/1 accept loop, with the protections a public server needs and no flag
//! controls: a cap on open connections, a deadline for a request's headers (a slow
//! client cannot hold a connection forever; bodies have theirs in the router), and
//! graceful shutdown that lets in-flight requests finish; and a connection that stays
//! usable, or says it closes, after an answer given before the request's body was read
//! (`unread`).

mod unread;

pub use unread::{Watched, DRAIN_LIMIT};

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use axum::{Extension, Router};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

/// Open connections at most; further clients wait in the kernel's accept queue.
pub const MAX_CONNECTIONS: usize = 4096;
/// Time a client has to send a request's headers, on a new or a kept-alive connection.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for in-flight requests before it gives up on them.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `service` on `listener` until `shutdown` is cancelled, then stops accepting and
/// waits for the connections' in-flight requests.
pub async fn serve<S>(listener: TcpListener, service: S, shutdown: CancellationToken)
where
    S: Service<Request<Watched<Incoming>>, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    serve_each(listener, move |_| service.clone(), shutdown).await
}

/// [`serve`] for a router whose requests need their client's address
/// (`ConnectInfo<SocketAddr>`): the operator console's sign-in throttle. Each connection
/// gets its own layered copy of the router, which costs a little per connection, so the
/// public listener does without.
pub async fn serve_with_client_addr(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) {
    let with_addr = move |peer: SocketAddr| router.clone().layer(Extension(ConnectInfo(peer)));
    serve_each(listener, with_addr, shutdown).await
}

async fn serve_each<S>(
    listener: TcpListener,
    router_for: impl Fn(SocketAddr) -> S,
    shutdown: CancellationToken,
) where
    S: Service<Request<Watched<Incoming>>, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before accept:
                    // wait a moment instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(unread::Settled(router_for(peer)));
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Errors here are the client's (reset, timeout, malformed HTTP): nothing to do.
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("shutdown: gave up waiting for in-flight requests");
    }
}
