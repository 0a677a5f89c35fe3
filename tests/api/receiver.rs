//! `TestReceiver`: a real HTTP server on loopback that records every webhook it gets and
//! answers with statuses a test chooses; and an independent signature check.

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct Received {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header"))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    /// Statuses for the next requests, in order; then `default_status`.
    script: Mutex<VecDeque<u16>>,
    default_status: Mutex<u16>,
    /// How many of the next requests are held unanswered (as a stuck receiver would).
    hold: Mutex<usize>,
    arrived: Notify,
}

pub struct TestReceiver {
    /// The URL to give a site as its webhook URL.
    pub url: String,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl TestReceiver {
    pub async fn start() -> Self {
        Self::start_on("127.0.0.1:0".parse().unwrap()).await
    }

    pub async fn start_on(addr: SocketAddr) -> Self {
        let shared = Arc::new(Shared::default());
        *shared.default_status.lock().unwrap() = 200;
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = shared.clone();
        let stop = CancellationToken::new();
        let released = stop.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = state.clone();
                let released = released.clone();
                async move {
                    state.received.lock().unwrap().push(Received {
                        method,
                        path: uri.path().to_owned(),
                        headers,
                        body,
                        at: Instant::now(),
                    });
                    state.arrived.notify_waiters();
                    let held = {
                        let mut hold = state.hold.lock().unwrap();
                        let held = *hold > 0;
                        *hold = hold.saturating_sub(1);
                        held
                    };
                    if held {
                        released.cancelled().await;
                    }
                    let status = state
                        .script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or(*state.default_status.lock().unwrap());
                    let status = StatusCode::from_u16(status).unwrap();
                    if status.is_redirection() {
                        (status, [("location", "/elsewhere")], "moved").into_response()
                    } else {
                        (status, "ok").into_response()
                    }
                }
            },
        );
        let until = stop.clone().cancelled_owned();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(until)
                .await
                .unwrap()
        });
        Self {
            url: format!("http://{addr}/hook"),
            shared,
            stop,
        }
    }

    /// The next requests are answered with these statuses, in order.
    pub fn answer_next(&self, statuses: &[u16]) {
        self.shared.script.lock().unwrap().extend(statuses);
    }

    /// The next `n` requests are recorded but never answered (as by a stuck receiver),
    /// until the receiver is dropped.
    pub fn hold_next(&self, n: usize) {
        *self.shared.hold.lock().unwrap() += n;
    }

    pub fn answer_always(&self, status: u16) {
        *self.shared.default_status.lock().unwrap() = status;
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests arrived, or `timeout` passed; returns them all.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.shared.arrived.notified();
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self.received();
            }
        }
    }
}

impl Drop for TestReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Checks a received webhook the way a site would (Standard Webhooks): some `v1,`
/// signature in the header must be the HMAC-SHA256 of `{id}.{timestamp}.{raw body}` under
/// the base64-decoded part of `whsec_…`.
pub fn signed_by(secret: &str, r: &Received) -> bool {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(
        format!(
            "{}.{}.",
            r.header("webhook-id"),
            r.header("webhook-timestamp")
        )
        .as_bytes(),
    );
    mac.update(&r.body);
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    r.header("webhook-signature")
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .any(|sig| sig == expected)
}
