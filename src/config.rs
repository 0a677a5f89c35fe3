//! The server's settings, independent of where they came from (flags, env, tests).

use std::path::Path;
use std::time::Duration;

use crate::dcapi::{RequestSigner, SignerFileError};

pub const DEFAULT_DATABASE_URL: &str = "sqlite:agegate.db";
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_RETRY_SCHEDULE: &str = "5s,5m,30m,2h,5h,10h,10h";

#[derive(Debug, Clone)]
pub struct Settings {
    /// Address to bind; port 0 picks a free one.
    pub listen: String,
    /// Base of gateway URLs; `None` means `http://` + the bound address.
    pub public_url: Option<String>,
    pub verifier_token: Option<String>,
    pub allow_private_webhooks: bool,
    pub webhook_retry_schedule: Vec<Duration>,
    /// How often expired invites are swept (their events are due within 60 s).
    pub sweep_interval: Duration,
    /// `--retention`: how long settled invites are kept.
    pub retention: crate::retention::Retention,
    /// How often retention runs (after a first round at start).
    pub retention_interval: Duration,
    /// How often the webhook worker looks for due events when nothing wakes it.
    pub webhook_poll_interval: Duration,
    /// At most this many authenticated requests per second per site (bursts up to it);
    /// 0 is no limit.
    pub rate_limit: u32,
    /// `--metrics-listen`: where `/metrics` is served; `None` is off.
    pub metrics_listen: Option<String>,
    /// How long a worker's claim on an event lasts (a dead node's events are taken over
    /// after it).
    pub webhook_lease: Duration,
    /// The trust anchors per credential kind (docs/kinds.md#credential-kinds): a kind with anchors is
    /// on. Reloaded from its files on SIGHUP.
    pub trust: std::sync::Arc<crate::trust::TrustHandle>,
    /// `--trust-refresh`: how often the signed lists are fetched again, at most.
    pub trust_refresh: Duration,
    /// `--eu-av-wallet-scheme`: the scheme of the same-device link (`av`).
    pub wallet_scheme: String,
    /// `--signed-wallet-scheme`: the by-reference link's scheme.
    pub signed_wallet_scheme: String,
    /// `--wallet-links`: which links the gateway page shows.
    pub wallet_links: crate::domain::presentation::WalletLinks,
    /// How long a webhook attempt may take (no flag: see [`webhook_timeout`]).
    pub webhook_timeout: Duration,
    /// Signs the Digital Credentials API requests (docs/dc-api.md#signed-and-unsigned-requests); `None`: unsigned.
    pub dc_api_signer: Option<RequestSigner>,
    /// `--admin-listen`: where the operator console is served; `None` is off.
    pub admin_listen: Option<String>,
    /// `--zk-circuits` and `--zk-workers`: the loaded circuits and their pool; `None` is
    /// off (docs/zk.md#zero-knowledge-proofs).
    pub zk: Option<std::sync::Arc<crate::zk::Zk>>,
    /// `--credential-status`: what is done with a credential's status list
    /// (docs/credential-status.md).
    pub credential_status: crate::domain::StatusMode,
}

impl Settings {
    /// Defaults for a server on `listen`; what tests and embedders start from.
    pub fn new(listen: impl Into<String>) -> Self {
        Self {
            listen: listen.into(),
            public_url: None,
            verifier_token: None,
            allow_private_webhooks: false,
            webhook_retry_schedule: parse_retry_schedule(DEFAULT_RETRY_SCHEDULE)
                .expect("the default schedule parses"),
            sweep_interval: Duration::from_secs(5),
            retention: crate::retention::Retention::days(90),
            retention_interval: crate::retention::DEFAULT_INTERVAL,
            webhook_poll_interval: Duration::from_secs(1),
            trust: crate::trust::TrustHandle::none(),
            trust_refresh: Duration::from_secs(3600),
            wallet_scheme: crate::domain::presentation::DEFAULT_WALLET_SCHEME.to_owned(),
            signed_wallet_scheme: crate::domain::presentation::DEFAULT_SIGNED_WALLET_SCHEME
                .to_owned(),
            wallet_links: crate::domain::presentation::WalletLinks::Both,
            dc_api_signer: None,
            webhook_lease: crate::webhooks::worker::DEFAULT_LEASE,
            webhook_timeout: crate::webhooks::client::DEFAULT_TIMEOUT,
            rate_limit: 0,
            metrics_listen: None,
            admin_listen: None,
            zk: None,
            credential_status: crate::domain::StatusMode::Check,
        }
    }
}

/// `5s,5m,30m` → the delays between delivery attempts.
pub fn parse_retry_schedule(s: &str) -> Result<Vec<Duration>, String> {
    let delays = s
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| humantime::parse_duration(d).map_err(|e| format!("'{d}': {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    if delays.is_empty() {
        return Err("the retry schedule must list at least one delay".into());
    }
    Ok(delays)
}

/// The webhook client's timeout for `serve`: [`crate::webhooks::client::DEFAULT_TIMEOUT`].
///
/// Internal, for the integration tests only: in debug builds (what `cargo test` runs),
/// `AGEGATE_TEST_WEBHOOK_TIMEOUT_MS` shortens it, so a test of a stuck receiver or of a
/// lease running out need not wait 10 s. Deliberately not a flag and not documented;
/// release builds never read it.
pub fn webhook_timeout() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("AGEGATE_TEST_WEBHOOK_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
    {
        return Duration::from_millis(ms);
    }
    crate::webhooks::client::DEFAULT_TIMEOUT
}

/// A webhook lease: at least the client's timeout plus a margin (11s), so a live worker
/// never loses its claim mid-send.
pub fn parse_webhook_lease(s: &str) -> Result<Duration, String> {
    parse_lease_for(s, webhook_timeout())
}

fn parse_lease_for(s: &str, timeout: Duration) -> Result<Duration, String> {
    let lease = humantime::parse_duration(s).map_err(|e| format!("'{s}': {e}"))?;
    let min = crate::webhooks::worker::min_lease(timeout);
    if lease < min {
        return Err(format!(
            "'{s}' is shorter than the webhook client's timeout plus a margin ({})",
            humantime::format_duration(min)
        ));
    }
    Ok(lease)
}

/// An absolute http(s) URL, returned without a trailing slash.
pub fn parse_public_url(s: &str) -> Result<String, String> {
    let url = url::Url::parse(s).map_err(|e| format!("'{s}' is not a valid URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("'{s}' must be an absolute http or https URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("'{s}' must not have a query or fragment"));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// The signing identity of `--dc-api-signing-key` and `--dc-api-signing-cert` (PEM: a
/// P-256 private key, PKCS#8 or SEC1; its chain, leaf first): the key must be the
/// leaf's and the leaf valid at `now`. Errors are one line naming the file at fault
/// (for a mismatch, both).
pub fn load_dc_api_signer(
    key_path: &Path,
    cert_path: &Path,
    now: i64,
) -> Result<RequestSigner, String> {
    let (key_shown, cert_shown) = (key_path.display(), cert_path.display());
    let key_pem = std::fs::read_to_string(key_path)
        .map_err(|e| format!("cannot read request signing key '{key_shown}': {e}"))?;
    let cert_pem = std::fs::read_to_string(cert_path)
        .map_err(|e| format!("cannot read request signing certificate '{cert_shown}': {e}"))?;
    let signer = crate::dcapi::signer_from_pem(&key_pem, &cert_pem).map_err(|e| match e {
        SignerFileError::Key(why) => format!("request signing key '{key_shown}': {why}"),
        SignerFileError::Chain(why) => format!("request signing certificate '{cert_shown}': {why}"),
        SignerFileError::Mismatch => format!(
            "request signing key '{key_shown}' does not match the leaf certificate of \
             '{cert_shown}'"
        ),
    })?;
    let (not_before, not_after) = signer.leaf_validity();
    if now < not_before || now > not_after {
        return Err(format!(
            "request signing certificate '{cert_shown}': the leaf certificate is not valid now \
             (valid from {} until {})",
            crate::clock::rfc3339(not_before),
            crate::clock::rfc3339(not_after)
        ));
    }
    Ok(signer)
}

/// `--verifier-info`: a JSON array of OpenID4VP 1.0 `verifier_info` objects, each with a
/// string `format` and a `data`, and optionally `credential_ids` (an array of strings).
/// The array is kept as read, to be put verbatim into signed requests; anything else is
/// one line naming the file.
pub fn load_verifier_info(path: &Path) -> Result<serde_json::Value, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read verifier info '{shown}': {e}"))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("verifier info '{shown}' is not JSON: {e}"))?;
    check_verifier_info(&value).map_err(|why| format!("verifier info '{shown}': {why}"))?;
    Ok(value)
}

fn check_verifier_info(value: &serde_json::Value) -> Result<(), String> {
    let items = value
        .as_array()
        .ok_or("not a JSON array of verifier_info objects")?;
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let object = item
            .as_object()
            .ok_or_else(|| format!("entry {n} is not a JSON object"))?;
        if !object
            .get("format")
            .is_some_and(serde_json::Value::is_string)
        {
            return Err(format!("entry {n} has no string \"format\""));
        }
        if !object.contains_key("data") {
            return Err(format!("entry {n} has no \"data\""));
        }
        if let Some(ids) = object.get("credential_ids") {
            let strings = ids
                .as_array()
                .is_some_and(|ids| ids.iter().all(serde_json::Value::is_string));
            if !strings {
                return Err(format!(
                    "entry {n}'s \"credential_ids\" is not an array of strings"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_schedule_spans_more_than_a_day() {
        let total: Duration = parse_retry_schedule(DEFAULT_RETRY_SCHEDULE)
            .unwrap()
            .iter()
            .sum();
        assert!(total > Duration::from_secs(24 * 3600));
    }

    #[test]
    fn schedules_parse_and_reject_nonsense() {
        assert_eq!(
            parse_retry_schedule("1s, 2s,4s").unwrap(),
            vec![
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(4)
            ]
        );
        assert!(parse_retry_schedule("").is_err());
        assert!(parse_retry_schedule("soon").is_err());
    }

    #[test]
    fn a_lease_is_at_least_the_webhook_timeout_plus_a_second() {
        let default = crate::webhooks::client::DEFAULT_TIMEOUT;
        assert_eq!(
            parse_lease_for("10s", default),
            Err("'10s' is shorter than the webhook client's timeout plus a margin (11s)".into())
        );
        assert_eq!(parse_lease_for("11s", default), Ok(Duration::from_secs(11)));
        let short = Duration::from_secs(2);
        assert_eq!(parse_lease_for("3s", short), Ok(Duration::from_secs(3)));
        assert!(parse_lease_for("2s", short).is_err());
    }

    #[test]
    fn verifier_info_is_an_array_of_objects_with_format_and_data() {
        let ok = serde_json::json!([
            {"format": "registration_cert", "data": "eyJ...", "credential_ids": ["pid"]},
            {"format": "x", "data": {"a": 1}},
        ]);
        assert_eq!(check_verifier_info(&ok), Ok(()));
        assert_eq!(check_verifier_info(&serde_json::json!([])), Ok(()));
        for bad in [
            serde_json::json!({"format": "x", "data": 1}),
            serde_json::json!(["x"]),
            serde_json::json!([{"data": 1}]),
            serde_json::json!([{"format": 1, "data": 1}]),
            serde_json::json!([{"format": "x"}]),
            serde_json::json!([{"format": "x", "data": 1, "credential_ids": "pid"}]),
            serde_json::json!([{"format": "x", "data": 1, "credential_ids": [1]}]),
        ] {
            assert!(check_verifier_info(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn public_urls_lose_their_trailing_slash() {
        assert_eq!(
            parse_public_url("https://verify.example/").unwrap(),
            "https://verify.example"
        );
        assert_eq!(
            parse_public_url("https://x.example/age/").unwrap(),
            "https://x.example/age"
        );
        assert!(parse_public_url("verify.example").is_err());
        assert!(parse_public_url("https://x.example/?a=1").is_err());
    }
}
