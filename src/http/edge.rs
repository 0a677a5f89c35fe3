//! What every request to the public listener passes through before its route, as one
//! service: a span named by the method and path, a JSON 500 for a handler that panics,
//! compression for clients that ask for it (of answers from 1 KiB on), and the limits on a request's body (its size
//! for axum's extractors, a deadline for the rest of it).
//!
//! tower-http's trace, compression and panic layers did this before, stacked. Each one
//! wrapped every request's future and body, whether or not anyone compressed or logged.
//! Together they cost about a fifth of a status read's CPU (BENCHMARKS.md, "Measured design choices").
//! Here a request without `Accept-Encoding` is routed around the compression layer. Its
//! answer still carries the `Vary: accept-encoding` the layer would have added, so caches
//! see the same headers whichever way a request went.
//!
//! The body's limits wrap the router once, not each route: `Router::layer` boxes every
//! route again per layer, and each box is cloned and its future boxed on every request
//! (bench/journal/2026-11-27-status-reads-third-session.md).

use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_RANGE, VARY};
use axum::http::HeaderValue;
use axum::http::Request;
use axum::response::{IntoResponse, Response};
use axum::routing::future::RouteFuture;
use axum::BoxError;
use axum::Router;
use futures_util::future::{CatchUnwind, Either, FutureExt};
use pin_project_lite::pin_project;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Instant;
use tower_http::compression::predicate::{DefaultPredicate, Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;
use tower_http::timeout::RequestBodyTimeout;
use tower_layer::Layer;
use tower_service::Service;
use tracing::instrument::Instrumented;
use tracing::Instrument;

use super::body::{BODY_LIMIT, BODY_READ_TIMEOUT};
use super::error::ApiError;

/// The public service: `routes` behind the edge.
#[derive(Clone)]
pub struct Edge {
    plain: Guarded,
    compressed: Guarded,
}

/// A router behind the body's limits. A client that stops sending its body is cut off
/// (its headers have their own deadline: see `server`).
type Guarded = RequestBodyTimeout<<DefaultBodyLimit as Layer<Router>>::Service>;

fn guarded(routes: Router) -> Guarded {
    RequestBodyTimeout::new(
        DefaultBodyLimit::max(BODY_LIMIT).layer(routes),
        BODY_READ_TIMEOUT,
    )
}

impl Edge {
    pub fn new(routes: Router) -> Self {
        Self {
            compressed: guarded(
                routes
                    .clone()
                    .layer(CompressionLayer::new().compress_when(worth_compressing())),
            ),
            plain: guarded(routes),
        }
    }
}

type Routed = Either<RouteFuture<Infallible>, WithVary>;

impl<B> Service<Request<B>> for Edge
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> EdgeFuture {
        // The path only: query strings and headers may carry customIds or secrets.
        let span = tracing::info_span!("request", method = %req.method(), path = %req.uri().path());
        tracing::debug!(parent: &span, "started processing request");
        let started = tracing::enabled!(tracing::Level::DEBUG).then(Instant::now);
        let routed: Routed = if req.headers().contains_key(ACCEPT_ENCODING) {
            Either::Left(self.compressed.call(req))
        } else {
            Either::Right(WithVary {
                inner: self.plain.call(req),
            })
        };
        EdgeFuture {
            inner: AssertUnwindSafe(routed).catch_unwind().instrument(span),
            started,
        }
    }
}

pin_project! {
    /// A request's answer: the route's, or a JSON 500 if its handler panicked.
    pub struct EdgeFuture {
        #[pin]
        inner: Instrumented<CatchUnwind<AssertUnwindSafe<Routed>>>,
        started: Option<Instant>,
    }
}

impl Future for EdgeFuture {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let response = match ready!(this.inner.as_mut().poll(cx)) {
            Ok(Ok(response)) => response,
            Ok(Err(never)) => match never {},
            // Logged as the request's failure by `ApiError`, like any internal error.
            Err(_) => ApiError::Internal("handler panicked".into()).into_response(),
        };
        if let Some(started) = *this.started {
            tracing::debug!(
                parent: this.inner.span(),
                status = response.status().as_u16(),
                latency_ms = started.elapsed().as_secs_f64() * 1e3,
                "finished processing request"
            );
        }
        Poll::Ready(Ok(response))
    }
}

pin_project! {
    /// An answer not compressed because its request did not ask, with the `Vary` header
    /// the compression layer adds to every answer it could have compressed.
    pub struct WithVary {
        #[pin]
        inner: RouteFuture<Infallible>,
    }
}

impl Future for WithVary {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Ok(mut response) = ready!(self.project().inner.poll(cx));
        let headers = response.headers();
        let compressible = !headers.contains_key(CONTENT_ENCODING)
            && !headers.contains_key(CONTENT_RANGE)
            && worth_compressing().should_compress(&response);
        let named = headers
            .get_all(VARY)
            .iter()
            .any(|v| names_accept_encoding(v.as_bytes()));
        if compressible && !named {
            response
                .headers_mut()
                .append(VARY, HeaderValue::from_static("accept-encoding"));
        }
        Poll::Ready(Ok(response))
    }
}

/// Answers shorter than this go as they are, whatever the client accepts: under one TCP
/// segment compression saves no packet, while starting a gzip or Brotli stream (their
/// tables allocated and zeroed) cost a status read's 152-byte record 3.7 times the CPU of
/// the whole read (BENCHMARKS.md, "Measured design choices"). Most HTTP clients ask for
/// compression by default (Python's requests, Node's fetch, browsers).
pub const COMPRESS_FROM_BYTES: u16 = 1024;

/// What the compression layer takes on: tower-http's default (no images, gRPC or event
/// streams) from [`COMPRESS_FROM_BYTES`] on.
fn worth_compressing() -> impl Predicate {
    DefaultPredicate::new().and(SizeAbove::new(COMPRESS_FROM_BYTES))
}

/// Whether a `Vary` value already names `Accept-Encoding` (in a list, in any case).
fn names_accept_encoding(value: &[u8]) -> bool {
    value
        .windows(ACCEPT_ENCODING.as_str().len())
        .any(|w| w.eq_ignore_ascii_case(ACCEPT_ENCODING.as_str().as_bytes()))
}

#[cfg(test)]
#[path = "edge_tests.rs"]
mod tests;
