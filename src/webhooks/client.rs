//! The HTTP client that sends webhooks: a timeout (10 s by default), no redirects, no
//! proxies, only public addresses (unless allowed), and at most a few KiB of any
//! response read.

use std::sync::Arc;
use std::time::Duration;

use super::formats::Outgoing;
use super::guard::{check_literal, GuardedResolver};

/// How long an attempt may take, connecting included (`Settings::webhook_timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_RESPONSE_BYTES: usize = 4 * 1024;

/// What one attempt came to.
#[derive(Debug)]
pub enum Sent {
    /// The receiver answered with this status.
    Answered(u16),
    /// No answer: refused, timed out, not allowed, …
    Failed(String),
    /// Not sent, and never will be (the event has nothing to send in the site's format).
    Refused(String),
}

pub struct WebhookClient {
    http: reqwest::Client,
    allow_private: bool,
}

impl WebhookClient {
    pub fn new(allow_private: bool, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("agegate-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the webhook client builds");
        Self {
            http,
            allow_private,
        }
    }

    /// POSTs `outgoing` as `application/json` to `target`.
    pub async fn send(&self, target: &str, outgoing: Outgoing) -> Sent {
        let url = match url::Url::parse(target) {
            Ok(url) => url,
            Err(e) => return Sent::Failed(format!("invalid webhook URL: {e}")),
        };
        if let Err(e) = check_literal(&url, self.allow_private) {
            return Sent::Failed(e.to_string());
        }
        let mut request = self
            .http
            .post(url)
            .header("content-type", "application/json");
        for (name, value) in outgoing.headers {
            request = request.header(name, value);
        }
        let result = request.body(outgoing.body).send().await;
        match result {
            Ok(mut response) => {
                let status = response.status().as_u16();
                // Read a little, so the connection can be reused; never the whole body.
                let mut read = 0;
                while read < MAX_RESPONSE_BYTES {
                    match response.chunk().await {
                        Ok(Some(chunk)) => read += chunk.len(),
                        _ => break,
                    }
                }
                Sent::Answered(status)
            }
            Err(e) => Sent::Failed(describe(&e)),
        }
    }
}

/// An error and its causes on one line ("timed out", "connection refused", the guard's refusal).
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
