//! The real binary: CLI commands and `agegate serve` as child processes, on a database
//! of the backend under test.

use super::wait::{eventually, poll, poll_blocking};
use super::{client, TestSite, VERIFIER_TOKEN};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;

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

/// The real `agegate` binary, with none of the parent's `AGEGATE_*` variables (nor
/// `RUST_LOG`): a developer's shell must not change what a test sees.
pub fn agegate() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agegate"));
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"AGEGATE_") {
            cmd.env_remove(name);
        }
    }
    cmd.env_remove("RUST_LOG");
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

/// `agegate --database-url URL trust show --json`, for more arguments: what a node on
/// that database would start with.
pub fn trust_show_json(db_url: &str) -> Command {
    let mut cmd = agegate();
    cmd.arg("--database-url")
        .arg(db_url)
        .args(["trust", "show", "--json"]);
    cmd
}

/// Runs `cmd` to its end and asserts it succeeded (showing its stderr if not): (stdout,
/// stderr).
pub fn succeeded(cmd: &mut Command) -> (String, String) {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// [`succeeded`], its stdout read as JSON.
pub fn json_output(cmd: &mut Command) -> (Value, String) {
    let (stdout, stderr) = succeeded(cmd);
    (serde_json::from_str(&stdout).unwrap(), stderr)
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

/// `agegate serve` on a fresh database with `extra` arguments and `env`, for a start it
/// must refuse: (started, stderr). A server that starts anyway runs until
/// stopped: after [`EXIT_WITHIN`] it is killed, and counts as not refused.
pub fn serve_outcome(extra: &[std::ffi::OsString], env: &[(&str, &Path)]) -> (bool, String) {
    let (_dir, db) = temp_db();
    let mut child = agegate()
        .arg("--database-url")
        .arg(&db.url)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stopped = poll_blocking(EXIT_WITHIN, || child.try_wait().unwrap().map(|_| ())).is_some();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    // Refused: it exited by itself, unsuccessfully. Killed while running, it started.
    (
        !stopped || out.status.success(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// How long a server may take to exit, or to log a line.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

/// `agegate serve` as a child process on a free port.
pub struct ServerProcess {
    pub child: Child,
    pub base: String,
    pub first_line: String,
    /// Every log line after the first, as it arrives.
    log: Arc<Mutex<Vec<String>>>,
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
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
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
            log,
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

    /// The invite's status record, as [`super::TestApp::status_record`].
    pub async fn status_record(&self, site: &TestSite, invite_id: &str) -> Value {
        super::one_record(self.get_invite(site, invite_id).await).await
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
        let child = &mut self.child;
        poll_blocking(EXIT_WITHIN, || child.try_wait().unwrap())
            .expect("the server exits within 10 s")
            .code()
    }

    /// [`Self::wait`] without blocking the test's runtime (which may run the receiver
    /// that the server's last webhook attempts are waiting on).
    pub async fn exited(&mut self) -> Option<i32> {
        let child = &mut self.child;
        poll(EXIT_WITHIN, || {
            std::future::ready(child.try_wait().unwrap())
        })
        .await
        .expect("the server exits within 10 s")
        .code()
    }

    /// SIGTERM, then waits for the graceful exit: requests and webhook attempts under
    /// way have finished and been recorded. Asserts exit code 0.
    pub async fn stop(&mut self) {
        self.signal("TERM");
        assert_eq!(self.exited().await, Some(0), "exit code after SIGTERM");
    }

    /// How many log lines so far contain `needle`.
    pub fn log_count(&self, needle: &str) -> usize {
        let log = self.log.lock().unwrap();
        log.iter().filter(|line| line.contains(needle)).count()
    }

    /// The log lines so far that contain `needle`.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|line| line.contains(needle))
            .cloned()
            .collect()
    }

    /// Waits up to 10 s until `n` log lines contain `needle`.
    pub async fn logged_times(&self, needle: &str, n: usize) {
        let what = format!("{n} log line(s) with {needle:?}");
        eventually(&what, EXIT_WITHIN, || {
            std::future::ready(self.log_count(needle) >= n)
        })
        .await;
    }

    /// Waits up to 10 s for a log line containing `needle`.
    pub async fn logged(&self, needle: &str) {
        self.logged_times(needle, 1).await;
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
