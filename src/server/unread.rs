//! A request body its route left unread, and what becomes of its connection.
//!
//! hyper reads a keep-alive connection's next request only after the last one's body.
//! When a route answers before the body has arrived (a wrong password, a rate limit, an
//! unknown route or invite) and drops it, hyper takes what has already arrived and
//! otherwise closes the connection after the answer without saying so: a client that
//! sent its next request on it gets no answer. So the edge takes back every body a route
//! left unread, and either
//! - reads it to its end in the background and throws it away, so the connection stays
//!   usable: a body of known length with at most [`DRAIN_LIMIT`] still to come; or
//! - marks the answer `Connection: close`, so the client knows to open another
//!   connection: a body of unknown length (chunked), more than that still to come, a
//!   client that waits for `100 Continue`, and answers about the body itself (413, 408).
//!
//! This is the accept loop's, for every listener (the public one and the console's), so no
//! route can forget it. A wallet answer turned away because the proof pool is full is
//! always over the limit (docs/reliability.md#connections-after-an-early-answer): it is
//! answered unread and its connection closed, which costs no more than its request line
//! and headers.

use axum::body::{Body, Bytes};
use axum::http::header::{CONNECTION, EXPECT};
use axum::http::{HeaderValue, Request, StatusCode};
use axum::response::Response;
use axum::BoxError;
use http_body::{Body as _, Frame, SizeHint};
use pin_project_lite::pin_project;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use tower_service::Service;

/// Most of a body still to come that is read and dropped to keep its connection: the
/// ordinary body limit (`http::body::BODY_LIMIT`, which a test holds equal), so that
/// draining costs no more than a route that reads its body.
pub const DRAIN_LIMIT: u64 = 64 * 1024;
/// Time a drained body has to arrive: what a route gives a body (`http::body::BODY_READ_TIMEOUT`).
const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where a body left unread ends up when its route drops it.
type Slot = Arc<Mutex<Option<Body>>>;

/// What the edge takes as a request body (hyper's `Incoming` is one).
pub trait Unwatched:
    http_body::Body<Data = Bytes, Error: Into<BoxError>> + Send + Unpin + 'static
{
}

impl<B> Unwatched for B where
    B: http_body::Body<Data = Bytes, Error: Into<BoxError>> + Send + Unpin + 'static
{
}

/// `S` with every request's body watched, and every answer settled (see [`settle`]).
#[derive(Clone)]
pub struct Settled<S>(pub S);

impl<S, B> Service<Request<B>> for Settled<S>
where
    S: Service<Request<Watched<B>>, Response = Response, Error = Infallible>,
    B: Unwatched,
{
    type Response = Response;
    type Error = Infallible;
    type Future = SettledFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let expects_continue = expects_continue(&req);
        let (req, unread) = watch(req);
        SettledFuture {
            inner: self.0.call(req),
            unread,
            expects_continue,
        }
    }
}

pin_project! {
    /// The route's answer, settled once it is ready.
    pub struct SettledFuture<F> {
        #[pin]
        inner: F,
        // Where the route leaves the request's body if it drops it unread.
        unread: Option<Slot>,
        expects_continue: bool,
    }
}

impl<F> Future for SettledFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(mut response) = ready!(this.inner.poll(cx));
        if let Some(slot) = this.unread.take() {
            settle(&mut response, &slot, *this.expects_continue);
        }
        Poll::Ready(Ok(response))
    }
}

/// A request body that, dropped before its end, puts itself in its slot. Requests without
/// a body have no slot and cost nothing more.
pub struct Watched<B: Unwatched> {
    inner: Option<B>,
    slot: Option<Slot>,
    ended: bool,
}

/// `req` with its body watched, and the slot to look into once it is answered (`None`:
/// no body).
fn watch<B: Unwatched>(req: Request<B>) -> (Request<Watched<B>>, Option<Slot>) {
    let has_body = !req.body().is_end_stream();
    let slot = has_body.then(Slot::default);
    let watched = req.map(|inner| Watched {
        inner: Some(inner),
        slot: slot.clone(),
        ended: false,
    });
    (watched, slot)
}

impl<B: Unwatched> http_body::Body for Watched<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = ready!(Pin::new(inner).poll_frame(cx));
        // Its end, or an error (the client went away): nothing left to drain.
        if !matches!(polled, Some(Ok(_))) {
            self.ended = true;
        }
        Poll::Ready(polled)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), |b| b.size_hint())
    }
}

impl<B: Unwatched> Drop for Watched<B> {
    fn drop(&mut self) {
        // Moved out only here: dropped unread, the body goes to its slot.
        let (Some(slot), Some(inner)) = (self.slot.take(), self.inner.take()) else {
            return;
        };
        if self.ended {
            return;
        }
        if let Ok(mut unread) = slot.lock() {
            *unread = Some(Body::new(inner));
        };
    }
}

/// After the route answered: drains a body it left unread or closes the connection.
/// `expects_continue`: the client waits for `100 Continue` before it sends the body.
fn settle(response: &mut Response, slot: &Slot, expects_continue: bool) {
    let Some(body) = slot.lock().ok().and_then(|mut s| s.take()) else {
        return;
    };
    let about_body = matches!(
        response.status(),
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
    );
    let closing = response
        .headers()
        .get(CONNECTION)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
    let small = body.size_hint().exact().is_some_and(|n| n <= DRAIN_LIMIT);
    let runtime = tokio::runtime::Handle::try_current();
    match runtime {
        Ok(runtime) if small && !about_body && !closing && !expects_continue => {
            runtime.spawn(drain(body));
        }
        _ => {
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
    }
}

/// Whether `req`'s client waits for `100 Continue` before it sends the body.
fn expects_continue<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// Reads `body` to its end, throwing it away, within the time a route gives a body; a
/// client that stops sending loses its connection then, as it would in a route.
async fn drain(mut body: Body) {
    let read = std::future::poll_fn(|cx| loop {
        match ready!(Pin::new(&mut body).poll_frame(cx)) {
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return Poll::Ready(()),
        }
    });
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, read).await;
}
