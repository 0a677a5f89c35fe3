//! Test harness: spawns the real router on a real socket (port 0) with an injected
//! clock, or the real binary as a separate process, and talks HTTP to it.

use agegate::cli::SiteSettings;
use agegate::clock::{Clock, ManualClock, SystemClock};
use agegate::config::Settings;
use agegate::domain::{MinAge, SiteName, SiteUrl, WebhookFormat};
use agegate::startup::Application;
use agegate::store::{self, Store};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

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
    shutdown: CancellationToken,
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

async fn spawn(dir: TempDir, real_time: bool, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let db_url = TestDb::in_dir(dir.path()).url;
    spawn_on(dir, db_url, real_time, configure).await
}

/// A fresh, empty database of the backend under test: a SQLite file in a temporary
/// directory, or (with `AGEGATE_TEST_BACKEND=postgres`) a new database on the suite's
/// throwaway PostgreSQL cluster.
#[derive(Debug, Clone)]
pub struct TestDb {
    pub url: String,
    /// The SQLite file, when the backend is SQLite.
    pub path: Option<PathBuf>,
}

impl TestDb {
    pub fn in_dir(dir: &Path) -> Self {
        if crate::pg::postgres_backend() {
            Self {
                url: crate::pg::shared().create_database(),
                path: None,
            }
        } else {
            let path = dir.join("agegate.db");
            Self {
                url: format!("sqlite:{}", path.display()),
                path: Some(path),
            }
        }
    }
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
    let app = Application::build(settings, store.clone(), app_clock)
        .await
        .unwrap();
    let base = format!("http://{}", app.local_addr());
    let metrics_base = app.metrics_addr().map(|a| format!("http://{a}"));
    let admin_base = app.admin_addr().map(|a| format!("http://{a}"));
    let shutdown = CancellationToken::new();
    tokio::spawn(app.run_until_stopped(shutdown.clone()));
    TestApp {
        base,
        metrics_base,
        admin_base,
        client: client(),
        clock,
        real_time,
        store,
        db_url,
        shutdown,
        _dir: dir,
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl TestApp {
    pub async fn create_site(&self) -> TestSite {
        self.create_site_with(SiteOptions::default()).await
    }

    pub async fn create_site_with(&self, options: SiteOptions<'_>) -> TestSite {
        let url = |u: Option<&str>| u.map(|u| SiteUrl::parse(u).unwrap());
        let created = agegate::cli::create_site(
            self.store.as_ref(),
            self.clock.as_ref(),
            SiteSettings {
                name: SiteName::parse(options.name.unwrap_or("Test shop")).unwrap(),
                redirect_url: url(options.redirect_url),
                webhook_url: url(options.webhook_url),
                sandbox: options.sandbox,
                min_age: MinAge::new(options.min_age.unwrap_or(18)).unwrap(),
                webhook_format: options.webhook_format,
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
        let resp = self.get_invite(site, invite_id).await;
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        let records = body.as_array().expect("an array");
        assert_eq!(records.len(), 1);
        records[0].clone()
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

/// The real `agegate` binary.
pub fn agegate() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agegate"));
    cmd.env_remove("AGEGATE_DATABASE_URL")
        .env_remove("AGEGATE_LISTEN")
        .env_remove("AGEGATE_PUBLIC_URL")
        .env_remove("AGEGATE_VERIFIER_TOKEN")
        .env_remove("AGEGATE_EU_AV_TRUST_ANCHORS")
        .env_remove("AGEGATE_EU_AV_WALLET_SCHEME")
        .env_remove("AGEGATE_RETENTION")
        .env_remove("RUST_LOG");
    cmd
}

/// Runs a CLI command to completion: (exit code, stdout, stderr).
pub fn run_cli(db: &TestDb, args: &[&str]) -> (i32, String, String) {
    let out = agegate()
        .arg("--database-url")
        .arg(&db.url)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Creates a site through the CLI and returns it.
pub fn cli_site(db: &TestDb, extra: &[&str]) -> (TestSite, Value) {
    let mut args = vec!["site", "create", "--name", "CLI shop", "--json"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = run_cli(db, &args);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    (
        TestSite {
            site_id: v["siteId"].as_str().unwrap().into(),
            username: v["username"].as_str().unwrap().into(),
            password: v["password"].as_str().unwrap().into(),
            webhook_secret: v["webhookSecret"].as_str().unwrap().into(),
        },
        v,
    )
}

/// `agegate serve` as a child process on a free port.
pub struct ServerProcess {
    pub child: Child,
    pub base: String,
    pub first_line: String,
}

impl ServerProcess {
    pub fn start(db: &TestDb, extra: &[&str]) -> Self {
        Self::start_with_env(db, extra, &[("AGEGATE_LISTEN", "127.0.0.1:0")])
    }

    /// `agegate serve` with `extra` flags and environment variables (which must include
    /// a listen address, e.g. `AGEGATE_LISTEN=127.0.0.1:0`).
    pub fn start_with_env(db: &TestDb, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = agegate()
            .arg("--database-url")
            .arg(&db.url)
            .arg("serve")
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let first_line = lines.next().expect("a first log line").unwrap();
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let addr = first_line
            .split("listening on http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in first line: {first_line}"))
            .to_owned();
        Self {
            child,
            base: format!("http://{addr}"),
            first_line,
        }
    }

    /// Creates an invite on this server and returns its JSON, asserting success.
    pub async fn new_invite(&self, site: &TestSite, body: Option<Value>) -> Value {
        let req = client()
            .post(format!("{}/v1/website/{}/invite", self.base, site.site_id))
            .basic_auth(&site.username, Some(&site.password));
        let req = match body {
            Some(body) => req.json(&body),
            None => req,
        };
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    }

    /// The status API's read of one invite, on this server.
    pub async fn get_invite(&self, site: &TestSite, invite_id: &str) -> reqwest::Response {
        client()
            .get(format!(
                "{}/v1/website/{}/invite/{invite_id}",
                self.base, site.site_id
            ))
            .basic_auth(&site.username, Some(&site.password))
            .send()
            .await
            .unwrap()
    }

    /// Reports an invite verified to this server (started with `--verifier-token`).
    pub async fn verify(&self, invite_id: &str) -> reqwest::Response {
        client()
            .post(format!("{}/v1/verifier/invite/{invite_id}", self.base))
            .bearer_auth(VERIFIER_TOKEN)
            .json(&serde_json::json!({"outcome": "verified"}))
            .send()
            .await
            .unwrap()
    }

    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits up to 10 s for the process to exit; its exit code.
    pub fn wait(&mut self) -> Option<i32> {
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("server did not exit within 10 s");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh database of the backend under test, and the directory that holds it.
pub fn temp_db() -> (TempDir, TestDb) {
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::in_dir(dir.path());
    (dir, db)
}
