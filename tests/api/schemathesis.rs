//! The OpenAPI document against the server it describes: schemathesis (from PyPI, in the
//! venv `scripts/setup.sh` makes) generates requests from `GET /v1/openapi.json` (valid
//! ones, invalid ones, every status and header they may meet, sequences that follow one
//! invite through its operations) and runs every check it has on every answer. Any
//! finding fails the test, with schemathesis's report.
//!
//! Alone: `cargo test --test api schemathesis -- --nocapture`.

use crate::helpers::{cli_site, poll_blocking, temp_db, ServerProcess, TestSite, VERIFIER_TOKEN};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The versions `scripts/setup.sh` installs; the venv keeps a copy of the list it was
/// made from, so a venv of other versions is noticed.
const REQUIREMENTS: &str = include_str!("../../scripts/schemathesis-requirements.txt");
/// Fixed, so a run generates the same requests each time.
const SEED: u32 = 20_251_122;
/// Test cases per operation and phase: enough to meet every parameter, status and
/// check; a run takes well under a minute.
const MAX_EXAMPLES: u32 = 50;
/// A run that takes longer than this is stopped and fails.
const DEADLINE: Duration = Duration::from_secs(600);

/// `${XDG_CACHE_HOME:-$HOME/.cache}/agegate-schemathesis-<hash>`, as `scripts/setup.sh`
/// has it: the first 16 hex digits of the requirements' SHA-256, so each list of
/// versions has a venv of its own.
pub fn venv() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    let digest = sha2::Sha256::digest(REQUIREMENTS.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    cache.join(format!("agegate-schemathesis-{hash}"))
}

/// The `st` command of the venv, or why it cannot be used.
fn schemathesis() -> Result<PathBuf, String> {
    let venv = venv();
    let st = venv.join("bin/st");
    let installed = std::fs::read_to_string(venv.join("requirements.txt")).unwrap_or_default();
    if !st.is_file() || installed != REQUIREMENTS {
        return Err(format!(
            "schemathesis ({}) is not installed in {}: run `bash scripts/setup.sh`",
            pinned_version(),
            venv.display()
        ));
    }
    Ok(st)
}

fn pinned_version() -> &'static str {
    REQUIREMENTS
        .lines()
        .find_map(|line| line.strip_prefix("schemathesis=="))
        .unwrap_or("schemathesis")
}

/// A TOML basic string.
fn toml(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The run's configuration: the site's credentials for every generated request, and the
/// site's id for every `siteId` (a credential only opens its own site's routes; any
/// other siteId is 403 before anything else is looked at).
fn config(site: &TestSite) -> String {
    format!(
        r#"# Written by tests/api/schemathesis.rs.
workers = 1
request-timeout = 20

[generation]
max-examples = {MAX_EXAMPLES}
# Nothing remembered between runs: the seed alone decides what is generated.
database = "none"

[cache]
enabled = false

[parameters]
"path.siteId" = {site_id}

[auth.openapi.basicAuth]
username = {username}
password = {password}

[auth.openapi.verifierToken]
bearer = {bearer}

# positive_data_acceptance takes a schema-valid request answered 4xx as a finding,
# unless the status is one that depends on state rather than on the request (401, 403,
# 404, 409, 429). More of those, for exactly the operations that answer them (each block
# names its operation: the filters within one block select what matches any of them, so
# a path and a method apart would select every operation of that method):

# An expired invite's page is 410 Gone (README, "The gateway page").
[[operations]]
include-name = "GET /gateway/{{inviteId}}"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", 401, 403, 404, 409, 410, 429, "5xx"]

# docs/api.md#retrying-a-create-safely-idempotency-key: an Idempotency-Key used in the last 24 hours with another body is 422.
# Generated keys repeat (the same short strings come up again with other bodies), so the
# valid request meets a key of an earlier one.
[[operations]]
include-name = "POST /v1/website/{{siteId}}/invite"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", 401, 403, 404, 409, 422, 429, "5xx"]

# docs/presentations.md#what-is-checked: the wallets' endpoints refuse an answer to a request that is not
# live (any generated state) with 400, however well-formed the body.
[[operations]]
include-path-regex = "^/gateway/\\{{inviteId\\}}/(openid4vp|dc-api)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", 400, 401, 403, 404, 409, 429, "5xx"]
"#,
        site_id = toml(&site.site_id),
        username = toml(&site.username),
        password = toml(&site.password),
        bearer = toml(VERIFIER_TOKEN),
    )
}

/// Runs `st` in `dir` until it exits or [`DEADLINE`] passes: (exit code, its output).
fn run(st: &Path, dir: &Path, schema: &str) -> (Option<i32>, String) {
    let log_path = dir.join("schemathesis.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut child = Command::new(st)
        .arg("--config-file")
        .arg(dir.join("schemathesis.toml"))
        .args(["run", schema, "--checks", "all", "--no-color"])
        .args(["--phases", "examples,coverage,fuzzing,stateful"])
        .arg(format!("--seed={SEED}"))
        .current_dir(dir)
        // Only loopback: no proxy may be asked to reach the server.
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("all_proxy")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("COLUMNS", "120")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", st.display()));
    let exited = poll_blocking(DEADLINE, || child.try_wait().unwrap());
    if exited.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let code = exited.and_then(|status| status.code());
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    (code, output)
}

#[test]
fn schemathesis_finds_nothing_with_every_check_on() {
    if crate::pg::postgres_backend() {
        // The document and the HTTP layer are the same on every backend; the SQLite pass
        // runs this.
        eprintln!("skipped on PostgreSQL: schemathesis runs in the SQLite pass");
        return;
    }
    // Like the browser and PostgreSQL tests: fails, saying so, where setup.sh has not run.
    let st = schemathesis().unwrap_or_else(|why| panic!("{why}"));
    let (dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    // With a wallet method on, so the wallets' endpoints (docs/presentations.md#what-is-checked) check what they get.
    let now = crate::helpers::now();
    let anchors = dir.path().join("anchors.pem");
    std::fs::write(&anchors, crate::wallet::TestIssuer::new(now).ca_pem).unwrap();
    let anchors = anchors.to_str().unwrap();
    let server = ServerProcess::start(
        &db,
        &[
            "--verifier-token",
            VERIFIER_TOKEN,
            "--eu-av-trust-anchors",
            anchors,
        ],
    );
    std::fs::write(dir.path().join("schemathesis.toml"), config(&site)).unwrap();
    let schema = format!("{}/v1/openapi.json", server.base);
    let started = Instant::now();
    let (code, output) = run(&st, dir.path(), &schema);
    drop(server);
    match code {
        Some(0) => eprintln!(
            "schemathesis: no findings in {:.0?}\n{}",
            started.elapsed(),
            summary(&output)
        ),
        None => panic!("schemathesis did not finish within {DEADLINE:?}:\n{output}"),
        Some(code) => panic!("schemathesis found something (exit {code}):\n{output}"),
    }
}

/// The summary at the end of a run's report.
fn summary(output: &str) -> &str {
    output
        .find("SUMMARY")
        .and_then(|at| output[..at].rfind('\n'))
        .map_or(output, |at| &output[at + 1..])
}
