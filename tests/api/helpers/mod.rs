//! Test harness: spawns the real router on a real socket (port 0) with an injected
//! clock, or the real binary as a separate process, and talks HTTP to it.

use agegate::app::SiteSettings;
use agegate::clock::{Clock, ManualClock, SystemClock};
use agegate::config::Settings;
use agegate::domain::{MinAge, SiteName, SiteUrl, WebhookFormat};
use agegate::startup::Application;
use agegate::store::{self, Store};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod raw;
mod serve;
mod signing;
mod wait;

pub use raw::RawConnection;
pub use serve::{
    agegate, cli_site, json_output, run_cli, serve_outcome, succeeded, temp_db, trust_show_json,
    ServerProcess, TestDb,
};
pub use signing::{spawn_signing_app, x5c, Identity};
pub use wait::{eventually, poll, poll_blocking, until};

pub const VERIFIER_TOKEN: &str = "test-verifier-token";
/// A fixed start time, so expected `expires` values are exact.
pub const T0: i64 = 1_800_000_000;

pub struct TestApp {
    pub base: String,
    /// `http://` + the `--metrics-listen` address, when the test asked for one.
    pub metrics_base: Option<String>,
    /// `http://` + the `--admin-listen` address (the console), when the test asked for one.
    pub admin_base: Option<String>,
    pub client: reqwest::Client,
    /// The app's clock, unless it runs on the wall clock (`real_time`).
    pub clock: Arc<ManualClock>,
    pub real_time: bool,
    pub store: Arc<dyn Store>,
    pub db_url: String,
    /// The clock the app runs on: `clock`, or the wall clock.
    app_clock: Arc<dyn Clock>,
    shutdown: CancellationToken,
    running: Option<JoinHandle<std::io::Result<()>>>,
    _dir: TempDir,
}

#[derive(Debug, Clone, Default)]
pub struct TestSite {
    pub site_id: String,
    pub username: String,
    pub password: String,
    pub webhook_secret: String,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SiteOptions<'a> {
    pub name: Option<&'a str>,
    pub redirect_url: Option<&'a str>,
    pub webhook_url: Option<&'a str>,
    pub sandbox: bool,
    pub min_age: Option<i64>,
    pub webhook_format: WebhookFormat,
    /// The kinds the site accepts (`all` by default).
    pub accept: agegate::domain::Accept,
    /// The zero-knowledge policy (`prefer` by default).
    pub zk: agegate::domain::ZkPolicy,
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    spawn(tempfile::tempdir().unwrap(), false, configure).await
}

/// An app on the wall clock, for tests that wait for real retries.
pub async fn spawn_real_time_app(configure: impl FnOnce(&mut Settings)) -> TestApp {
    spawn(tempfile::tempdir().unwrap(), true, configure).await
}

/// A second server on the database of `other`, as when several servers share one.
pub async fn spawn_beside(other: &TestApp, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut app = spawn_on(dir, other.db_url.clone(), other.real_time, configure).await;
    app.clock = other.clock.clone();
    app
}

/// A server on the database at `db_url` (e.g. a PostgreSQL cluster of the test's own).
pub async fn spawn_on_url(db_url: String) -> TestApp {
    spawn_on(tempfile::tempdir().unwrap(), db_url, false, |_| {}).await
}

/// [`spawn_on_url`] with settings of the test's own.
pub async fn spawn_on_url_with(db_url: String, configure: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_on(tempfile::tempdir().unwrap(), db_url, false, configure).await
}

async fn spawn(dir: TempDir, real_time: bool, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let db_url = TestDb::in_dir(dir.path()).url;
    spawn_on(dir, db_url, real_time, configure).await
}

async fn spawn_on(
    dir: TempDir,
    db_url: String,
    real_time: bool,
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    let store = store::open(&db_url).await.unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let app_clock: Arc<dyn Clock> = if real_time {
        Arc::new(SystemClock)
    } else {
        clock.clone()
    };
    let mut settings = Settings::new("127.0.0.1:0");
    settings.verifier_token = Some(VERIFIER_TOKEN.into());
    settings.sweep_interval = Duration::from_millis(200);
    settings.webhook_poll_interval = Duration::from_millis(200);
    configure(&mut settings);
    let app = Application::build(settings, store.clone(), app_clock.clone())
        .await
        .unwrap();
    let base = format!("http://{}", app.local_addr());
    let metrics_base = app.metrics_addr().map(|a| format!("http://{a}"));
    let admin_base = app.admin_addr().map(|a| format!("http://{a}"));
    let shutdown = CancellationToken::new();
    let running = Some(tokio::spawn(app.run_until_stopped(shutdown.clone())));
    TestApp {
        base,
        metrics_base,
        admin_base,
        client: client(),
        clock,
        real_time,
        store,
        db_url,
        app_clock,
        shutdown,
        running,
        _dir: dir,
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl TestApp {
    /// Stops the server as a signal would and waits until it has: webhook attempts under
    /// way have finished and been recorded, and nothing more is sent.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(running) = self.running.take() {
            running.await.unwrap().unwrap();
        }
    }

    /// One expiry sweep on the app's clock, as the server's sweeper makes them; how many
    /// invites it expired. Once it returns, every invite due has its event in the outbox.
    pub async fn sweep(&self) -> usize {
        agegate::webhooks::sweeper::run_once(self.store.as_ref(), self.app_clock.as_ref())
            .await
            .unwrap()
    }

    /// `/metrics` (the app must have been spawned with `metrics_listen`).
    pub async fn metrics(&self) -> String {
        scrape(
            self.metrics_base
                .as_deref()
                .expect("spawned with metrics_listen"),
        )
        .await
    }

    pub async fn create_site(&self) -> TestSite {
        self.create_site_with(SiteOptions::default()).await
    }

    pub async fn create_site_with(&self, options: SiteOptions<'_>) -> TestSite {
        let url = |u: Option<&str>| u.map(|u| SiteUrl::parse(u).unwrap());
        let created = agegate::app::create_site(
            self.store.as_ref(),
            self.clock.as_ref(),
            SiteSettings {
                name: SiteName::parse(options.name.unwrap_or("Test shop")).unwrap(),
                redirect_url: url(options.redirect_url),
                webhook_url: url(options.webhook_url),
                sandbox: options.sandbox,
                min_age: MinAge::new(options.min_age.unwrap_or(18)).unwrap(),
                webhook_format: options.webhook_format,
                accept: options.accept,
                zk: options.zk,
            },
        )
        .await
        .unwrap();
        TestSite {
            site_id: created.site_id,
            username: created.username,
            password: created.password,
            webhook_secret: created.webhook_secret,
        }
    }

    /// Creates an invite and returns its id.
    pub async fn new_invite_id(&self, site: &TestSite, body: Option<Value>) -> String {
        self.new_invite(site, body).await["inviteId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn create_invite(&self, site: &TestSite, body: Option<Value>) -> reqwest::Response {
        let req = self
            .client
            .post(self.url(&format!("/v1/website/{}/invite", site.site_id)))
            .basic_auth(&site.username, Some(&site.password));
        let req = match body {
            Some(body) => req.json(&body),
            None => req,
        };
        req.send().await.unwrap()
    }

    /// Creates an invite and returns its JSON, asserting success.
    pub async fn new_invite(&self, site: &TestSite, body: Option<Value>) -> Value {
        let resp = self.create_invite(site, body).await;
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    }

    pub async fn get_invite(&self, site: &TestSite, invite_id: &str) -> reqwest::Response {
        self.client
            .get(self.url(&format!(
                "/v1/website/{}/invite/{}",
                site.site_id, invite_id
            )))
            .basic_auth(&site.username, Some(&site.password))
            .send()
            .await
            .unwrap()
    }

    /// The single status record of an invite, asserting success.
    pub async fn status_record(&self, site: &TestSite, invite_id: &str) -> Value {
        one_record(self.get_invite(site, invite_id).await).await
    }

    pub async fn verify(&self, invite_id: &str) -> reqwest::Response {
        self.client
            .post(self.url(&format!("/v1/verifier/invite/{invite_id}")))
            .bearer_auth(VERIFIER_TOKEN)
            .json(&serde_json::json!({"outcome": "verified"}))
            .send()
            .await
            .unwrap()
    }
}

/// The one record of a status read's answer (200, an array of one).
pub async fn one_record(resp: reqwest::Response) -> Value {
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    let records = body.as_array().expect("an array");
    assert_eq!(records.len(), 1);
    records[0].clone()
}

/// `{base}/metrics`' text: `base` is `http://` and a `--metrics-listen` address.
pub async fn scrape(base: &str) -> String {
    let resp = client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap();
    resp.text().await.unwrap()
}

/// The wall clock in Unix seconds, for a server run on it (the binary's).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Asserts an API error: status, JSON content type, and the exact body.
pub async fn assert_error(resp: reqwest::Response, status: u16, code: u32) -> Value {
    assert_eq!(resp.status().as_u16(), status, "status");
    assert_eq!(
        resp.headers()["content-type"],
        "application/json",
        "content type"
    );
    let body: Value = resp.json().await.unwrap();
    let obj = body.as_object().expect("an object");
    assert_eq!(obj.len(), 2, "only error and message: {body}");
    assert_eq!(body["error"], code, "error code in {body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "message in {body}"
    );
    body
}

/// A wallet's answer, whatever it held: accepted (200 with a `redirect_uri`) or refused
/// (400 with the JSON error body), never another status; `round` names the input.
pub async fn assert_accepted_or_refused(resp: reqwest::Response, round: usize) {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    match status {
        200 => assert!(body["redirect_uri"].is_string(), "round {round}: {body}"),
        400 => assert!(
            body["error"].is_u64() && body["message"].is_string(),
            "round {round}: {body}"
        ),
        other => panic!("round {round}: status {other}: {body}"),
    }
}

/// The gateway page at `url` (an invite's `url`): answered 200, its HTML.
pub async fn gateway_page(client: &reqwest::Client, url: &str) -> String {
    let resp = client.get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{url}");
    resp.text().await.unwrap()
}

/// An app whose trust is each `(kind, pem)`: `pem`'s CA certificates for `kind`, as
/// `serve`'s anchor flags give them; then `configure`d.
pub async fn spawn_app_trusting(
    sources: &[(agegate::domain::Kind, &str)],
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    use agegate::trust::{AnchorSource, Trust, TrustHandle};
    let sources = sources
        .iter()
        .map(|(kind, pem)| AnchorSource {
            kind: *kind,
            origin: format!("(test {kind})"),
            anchors: Arc::new(agegate::mdoc::TrustAnchors::from_pem(pem).expect("the test CA")),
        })
        .collect();
    let trust = TrustHandle::fixed(Trust::from_sources(sources));
    spawn_app_with(move |s| {
        s.trust = trust;
        configure(s);
    })
    .await
}

/// Trust in `pem`'s CA certificates for `kind` only, as `serve`'s trust flag of that kind.
pub fn trusting(
    kind: agegate::domain::Kind,
    pem: &str,
) -> std::sync::Arc<agegate::trust::TrustHandle> {
    let anchors = agegate::mdoc::TrustAnchors::from_pem(pem).expect("the test CA parses");
    agegate::trust::TrustHandle::fixed(agegate::trust::Trust::single(kind, anchors, "(test)"))
}
