//! End to end in a real browser: headless Chromium, driven through chromedriver, walks
//! a sandbox site's gateway page and lands back on the site's redirect URL.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`bash scripts/setup.sh`, which
//! `scripts/test.sh` runs first, installs them); without them the tests fail and say so.

use crate::helpers::{self, poll, poll_blocking, spawn_app, TestSite};
use crate::webdriver::Session;
use agegate::domain::{SiteName, SiteUrl};
use axum::routing::get;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CUSTOM_ID: &str = "user 42&x";

#[tokio::test]
async fn sandbox_flow_in_a_real_browser_lands_on_the_redirect_url_with_vs_and_cid() {
    // The site's own page that the visitor is sent back to, on a port of its own.
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver_addr = receiver.local_addr().unwrap();
    let back = axum::Router::new().route("/back", get(|| async { "welcome back" }));
    tokio::spawn(async move { axum::serve(receiver, back).await });
    let back_url = format!("http://{receiver_addr}/back");
    let redirect = format!("{back_url}?from=agegate");

    let app = spawn_app().await;
    let created = agegate::app::create_site(
        app.store.as_ref(),
        app.clock.as_ref(),
        agegate::app::SiteSettings {
            redirect_url: Some(SiteUrl::parse(&redirect).unwrap()),
            sandbox: true,
            ..agegate::app::SiteSettings::named(SiteName::parse("Browser shop").unwrap())
        },
    )
    .await
    .unwrap();
    let site = TestSite {
        site_id: created.site_id,
        username: created.username,
        password: created.password,
        webhook_secret: created.webhook_secret,
    };
    let invite = app
        .new_invite(&site, Some(json!({ "customId": CUSTOM_ID })))
        .await;
    let invite_id = invite["inviteId"].as_str().unwrap().to_owned();
    let gateway_url = invite["url"].as_str().unwrap().to_owned();
    assert!(
        gateway_url.starts_with("http://127.0.0.1:"),
        "only loopback URLs are opened: {gateway_url}"
    );

    let driver = Chromedriver::start().await;
    let browser = driver.session().await;
    // Drive first, close the session whatever happened, then judge.
    let walked = walk_sandbox_flow(&browser, &gateway_url, &back_url).await;
    let closed = browser.close().await;
    let final_url = walked.unwrap_or_else(|e| panic!("{e}"));
    closed.expect("closing the browser session");

    let final_url = url::Url::parse(&final_url).unwrap();
    assert_eq!(
        format!(
            "{}{}",
            final_url.origin().ascii_serialization(),
            final_url.path()
        ),
        back_url
    );
    let query: Vec<(String, String)> = final_url.query_pairs().into_owned().collect();
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    assert_eq!(
        query,
        [
            pair("from", "agegate"),
            pair("vs", &invite_id),
            pair("cid", CUSTOM_ID)
        ],
        "query of {final_url}"
    );

    let record = app.status_record(&site, &invite_id).await;
    assert_eq!(record["status"], "verified", "{record}");
}

/// Opens the gateway page, presses the sandbox control and waits for the browser to
/// arrive at `back_url`; the URL it ends on.
async fn walk_sandbox_flow(
    browser: &Session,
    gateway_url: &str,
    back_url: &str,
) -> Result<String, String> {
    browser
        .goto(gateway_url)
        .await
        .map_err(|e| format!("opening {gateway_url}: {e}"))?;
    let approve = browser
        .find("button#approve")
        .await
        .map_err(|e| format!("no sandbox control (button#approve) on the gateway page: {e}"))?;
    approve
        .click()
        .await
        .map_err(|e| format!("clicking the sandbox control: {e}"))?;
    if let Some(arrived) = arrival(browser, back_url, Duration::from_secs(10)).await {
        return arrived;
    }
    let text = match browser.find("body").await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let current = browser.current_url().await.unwrap_or_default();
    Err(format!(
        "after 10 s the browser is still on {current}, not {back_url}; the page says: {text}"
    ))
}

/// Waits up to `within` for the browser to be on a URL that starts with `prefix`: that
/// URL, an error reading it, or `None` if it never got there.
pub async fn arrival(
    browser: &Session,
    prefix: &str,
    within: Duration,
) -> Option<Result<String, String>> {
    poll(within, || async {
        match browser.current_url().await {
            Ok(url) if url.starts_with(prefix) => Some(Ok(url)),
            Ok(_) => None,
            Err(e) => Some(Err(format!("reading the current URL: {e}"))),
        }
    })
    .await
}

/// A CDP command reaches Chromium through chromedriver and its result comes back (the
/// browser tests drive the DevTools Protocol this way, e.g. a virtual wallet).
#[tokio::test]
async fn a_devtools_protocol_command_round_trips_through_chromedriver() {
    let driver = Chromedriver::start().await;
    let browser = driver.session().await;
    let evaluated = browser
        .cdp(
            "Runtime.evaluate",
            json!({"expression": "1 + 1", "returnByValue": true}),
        )
        .await;
    let version = browser.cdp("Browser.getVersion", json!({})).await;
    let closed = browser.close().await;
    let evaluated = evaluated.unwrap_or_else(|e| panic!("Runtime.evaluate: {e}"));
    assert_eq!(evaluated["result"]["value"], 2, "{evaluated}");
    let version = version.unwrap_or_else(|e| panic!("Browser.getVersion: {e}"));
    assert!(
        version["product"]
            .as_str()
            .is_some_and(|p| p.contains("Chrom")),
        "{version}"
    );
    closed.expect("closing the browser session");
}

/// Fails the test, saying how to fix it, where Chromium or chromedriver is missing.
fn require_browser() {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|path| !Path::new(path).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "{} not found; run `bash scripts/setup.sh` to install chromium and chromium-driver",
        missing.join(" and ")
    );
}

pub fn chromium_capabilities(
    profile: &Path,
    extra_args: &[&str],
) -> serde_json::Map<String, Value> {
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    .iter()
    .chain(extra_args)
    .map(|a| (*a).to_owned())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let options = json!({ "binary": CHROMIUM, "args": args });
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), options);
    caps
}

/// chromedriver as a child process on a free loopback port, in a process group of its
/// own so that dropping it also ends any Chromium it started.
pub struct Chromedriver {
    child: Child,
    pub url: String,
    /// Chromium's profile; removed after the processes are gone (fields drop after `drop`).
    pub profile: TempDir,
    _logs: TempDir,
}

impl Chromedriver {
    pub async fn start() -> Self {
        require_browser();
        // The port is free when asked for but could be taken before chromedriver binds
        // it; chromedriver then exits, and another port is tried.
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .unwrap()
                .port();
            let logs = tempfile::tempdir().unwrap();
            let log_path = logs.path().join("chromedriver.log");
            let child = Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .arg(format!("--log-path={}", log_path.display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
            let mut driver = Self {
                child,
                url: format!("http://127.0.0.1:{port}"),
                profile: tempfile::tempdir().unwrap(),
                _logs: logs,
            };
            if driver.wait_until_ready().await {
                return driver;
            }
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            eprintln!("chromedriver on port {port} did not get ready; its log:\n{log}");
        }
        panic!("chromedriver did not get ready in 3 tries");
    }

    /// A browser session of headless Chromium, with a profile of its own.
    pub async fn session(&self) -> Session {
        self.session_in("default", &[]).await
    }

    /// A session with the profile `name` (one per session that must not share state)
    /// and Chromium flags beyond the usual ones.
    pub async fn session_in(&self, name: &str, extra_args: &[&str]) -> Session {
        let profile = self.profile.path().join(name);
        Session::start(&self.url, chromium_capabilities(&profile, extra_args))
            .await
            .unwrap_or_else(|e| panic!("a chromedriver session: {e}"))
    }

    /// Polls `/status` for up to 10 s; false if chromedriver exited or never got ready.
    async fn wait_until_ready(&mut self) -> bool {
        let client = helpers::client();
        let status = format!("{}/status", self.url);
        let child = &mut self.child;
        let ready = poll(Duration::from_secs(10), || {
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            let request = client.get(&status).send();
            async move {
                if exited {
                    return Some(false);
                }
                let body: Value = request.await.ok()?.json().await.ok()?;
                (body["value"]["ready"] == true).then_some(true)
            }
        })
        .await;
        ready == Some(true)
    }

    /// Stops chromedriver and the browsers it started, and reaps it. chromedriver gives
    /// Chromium a process group of its own, so killing chromedriver alone would leave a
    /// session that was never closed running: ask it to shut down (it quits its browsers
    /// first), and kill its process group only if it does not exit.
    fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.request_shutdown();
            let child = &mut self.child;
            poll_blocking(Duration::from_secs(5), || {
                (!matches!(child.try_wait(), Ok(None))).then_some(())
            });
        }
        // Not yet reaped, so its process group id cannot have been reused.
        if matches!(self.child.try_wait(), Ok(None)) {
            // `-s KILL -- -PGID`: procps-ng 4.0's `kill -KILL -1234` signals process group
            // -1 (its first digit), not -1234 — every process the user may signal.
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--"])
                .arg(format!("-{}", self.child.id()))
                .stderr(Stdio::null())
                .status();
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// `GET /shutdown`, blocking (this runs in `drop`, possibly while unwinding).
    fn request_shutdown(&self) {
        let Some(addr) = self.url.strip_prefix("http://") else {
            return;
        };
        let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
            return;
        };
        let timeout = Duration::from_secs(5);
        if let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, timeout) {
            let _ = stream.set_read_timeout(Some(timeout));
            let _ = stream.set_write_timeout(Some(timeout));
            let request =
                format!("GET /shutdown HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
            if stream.write_all(request.as_bytes()).is_ok() {
                let _ = stream.read_to_end(&mut Vec::new());
            }
        }
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        self.stop();
    }
}
