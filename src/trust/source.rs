//! Where a signed list comes from (docs/trust.md#where-trust-anchors-come-from): a file,
//! or a URL fetched with a timeout and a size cap. `https://` anywhere; `http://` only on
//! a loopback address, where nothing on the way can change the list (tests, a local
//! mirror). Parsed once, from the flag, so nothing downstream checks a string again.

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A list's source, as its flag gave it. `Debug` is `Display`: masked.
#[derive(Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Url(url::Url),
}

impl Source {
    /// A flag's value: `https://…`, `http://` on loopback, or else a file path. A URL of
    /// any other scheme, or plain http elsewhere, is refused.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((scheme, _)) = text.split_once("://") else {
            return Ok(Self::File(PathBuf::from(text)));
        };
        let shown = crate::store::mask_password(text);
        let url = url::Url::parse(text).map_err(|e| format!("'{shown}' is not a URL: {e}"))?;
        match scheme.to_ascii_lowercase().as_str() {
            "https" => Ok(Self::Url(url)),
            "http" if is_loopback(&url) => Ok(Self::Url(url)),
            "http" => Err(format!(
                "'{shown}': http:// is allowed on a loopback address only; use https://"
            )),
            _ => Err(format!(
                "'{shown}': a list comes from a file or an https:// URL"
            )),
        }
    }

    pub fn is_url(&self) -> bool {
        matches!(self, Self::Url(_))
    }
}

/// The location as people, logs, metrics and the database know it: the path, or the URL
/// with any password replaced by `***` (it is a secret; the fetch uses the real one).
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            // A password in the user information or a `password=` parameter is masked:
            // this is what logs, `trust show`, metrics labels and `statement` print.
            Self::Url(url) => f.write_str(&crate::store::mask_password(url.as_str())),
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Source({self})")
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// How long a fetch may take, whole (connect, headers, body).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a list's bytes could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("larger than {0} bytes")]
    TooLarge(usize),
    #[error("answered HTTP {0}")]
    Status(u16),
    #[error("cannot fetch: {0}")]
    Network(String),
    #[error("cannot read: {0}")]
    Read(String),
}

/// Reads sources: files from disk, URLs over HTTP(S) with a whole-request timeout and a
/// cap on the body enforced while it streams (a huge answer is cut off, not buffered).
#[derive(Debug, Clone)]
pub struct Fetcher {
    http: reqwest::Client,
    timeout: Duration,
    cap: usize,
}

impl Default for Fetcher {
    fn default() -> Self {
        Self::new(FETCH_TIMEOUT, crate::trustlist::MAX_LIST_BYTES)
    }
}

impl Fetcher {
    pub fn new(timeout: Duration, cap: usize) -> Self {
        // Redirects are followed only to https (a list must not wander onto plain http).
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.url().scheme() == "https" && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let http = reqwest::Client::builder()
            .redirect(redirects)
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("agegate/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the list client builds");
        Self { http, timeout, cap }
    }

    /// The source's bytes, at most the cap.
    pub async fn get(&self, source: &Source) -> Result<Vec<u8>, FetchError> {
        match source {
            Source::File(path) => {
                let path = path.clone();
                let bytes = tokio::task::spawn_blocking(move || std::fs::read(path))
                    .await
                    .map_err(|e| FetchError::Read(e.to_string()))?
                    .map_err(|e| FetchError::Read(e.to_string()))?;
                if bytes.len() > self.cap {
                    return Err(FetchError::TooLarge(self.cap));
                }
                Ok(bytes)
            }
            Source::Url(url) => self.get_url(url, None).await,
        }
    }

    /// A URL's bytes, at most the cap, asking for `accept` (a media type) when given.
    pub async fn get_url(
        &self,
        url: &url::Url,
        accept: Option<&str>,
    ) -> Result<Vec<u8>, FetchError> {
        match tokio::time::timeout(self.timeout, self.download(url, accept)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout(self.timeout)),
        }
    }

    async fn download(&self, url: &url::Url, accept: Option<&str>) -> Result<Vec<u8>, FetchError> {
        let timeout = self.timeout;
        let network = move |e: reqwest::Error| {
            if e.is_timeout() {
                FetchError::Timeout(timeout)
            } else {
                FetchError::Network(without_url(e))
            }
        };
        let mut request = self.http.get(url.clone());
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT, accept);
        }
        let mut response = request.send().await.map_err(network)?;
        if !response.status().is_success() {
            return Err(FetchError::Status(response.status().as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > self.cap as u64)
        {
            return Err(FetchError::TooLarge(self.cap));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(network)? {
            if body.len() + chunk.len() > self.cap {
                return Err(FetchError::TooLarge(self.cap));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// reqwest's message and its causes, without the URL it repeats (the log line names it).
fn without_url(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
