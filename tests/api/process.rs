//! The real binary as a separate process: persistence across restarts, signals, logs.

use crate::helpers::{
    agegate, cli_site, client, eventually, gateway_page, poll_blocking, run_cli, serve_outcome,
    temp_db, ServerProcess,
};
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn an_acknowledged_invite_survives_a_killed_process() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let mut first = ServerProcess::start(&db, &[]);
    let invite = first
        .new_invite(&site, Some(json!({"customId": "survivor"})))
        .await;
    // No graceful shutdown: the answer must already have been on disk.
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    let second = ServerProcess::start(&db, &[]);
    let resp = client()
        .get(format!(
            "{}/v1/website/{}/invite/{}",
            second.base,
            site.site_id,
            invite["inviteId"].as_str().unwrap()
        ))
        .basic_auth(&site.username, Some(&site.password))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body[0]["customId"], "survivor");
    assert_eq!(body[0]["status"], "pending");
}

#[test]
fn the_binary_is_run_without_the_parents_agegate_variables() {
    let cmd = agegate();
    let cleared: Vec<_> = cmd.get_envs().filter(|(_, v)| v.is_none()).collect();
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"AGEGATE_") {
            assert!(
                cleared.iter().any(|(n, _)| *n == name),
                "{name:?} is passed on"
            );
        }
    }
    assert!(cleared.iter().any(|(n, _)| *n == "RUST_LOG"));
}

#[test]
fn first_log_line_names_the_address_and_the_database() {
    let (_dir, db) = temp_db();
    let server = ServerProcess::start(&db, &[]);
    assert!(server.first_line.contains("listening on http://127.0.0.1:"));
    assert!(server.first_line.contains(&db.url));
}

#[test]
fn sigterm_and_sigint_stop_the_server_with_exit_0() {
    for signal in ["TERM", "INT"] {
        let (_dir, db) = temp_db();
        let mut server = ServerProcess::start(&db, &[]);
        server.signal(signal);
        assert_eq!(server.wait(), Some(0), "after SIG{signal}");
    }
}

#[tokio::test]
async fn an_in_flight_request_finishes_during_shutdown() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    // Its debug log says when a request has arrived.
    let mut server = ServerProcess::start_with_env(
        &db,
        &[],
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("RUST_LOG", "info,agegate::http=debug"),
        ],
    );
    // A request whose body arrives in two parts, with SIGTERM in between.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<&'static str, std::io::Error>>(2);
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let request = client()
        .post(format!(
            "{}/v1/website/{}/invite",
            server.base, site.site_id
        ))
        .basic_auth(&site.username, Some(&site.password))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(stream))
        .send();
    let pending = tokio::spawn(request);
    tx.send(Ok("{\"customId\":")).await.unwrap();
    server.logged("started processing request").await;
    server.signal("TERM");
    server.logged("shutting down").await;
    tx.send(Ok("\"late\"}")).await.unwrap();
    drop(tx);
    let resp = pending.await.unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(server.wait(), Some(0));
}

#[tokio::test]
async fn a_key_revoked_with_the_cli_is_refused_by_a_running_server_within_5s() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let server = ServerProcess::start(&db, &[]);
    let http = client();
    let create = || {
        http.post(format!(
            "{}/v1/website/{}/invite",
            server.base, site.site_id
        ))
        .basic_auth(&site.username, Some(&site.password))
        .send()
    };
    assert_eq!(create().await.unwrap().status(), 200);
    let (code, _, stderr) = run_cli(
        &db,
        &["site", "key", "revoke", &site.site_id, &site.username],
    );
    assert_eq!(code, 0, "{stderr}");
    eventually(
        "the revoked key refused",
        Duration::from_secs(5),
        || async { create().await.unwrap().status() == 401 },
    )
    .await;
}

#[tokio::test]
async fn health_and_public_url_flags_and_env_are_honoured() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let server = ServerProcess::start(&db, &["--public-url", "https://verify.example"]);
    let http = client();
    let health = http
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let invite = server.new_invite(&site, None).await;
    assert!(invite["url"]
        .as_str()
        .unwrap()
        .starts_with("https://verify.example/gateway/"));
}

#[test]
fn a_second_start_on_the_same_database_is_a_no_op_migration() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    for _ in 0..2 {
        let (code, stdout, stderr) = run_cli(&db, &["site", "show", &site.site_id, "--json"]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains(&site.site_id));
    }
}

#[test]
fn an_unreachable_database_is_a_one_line_error_with_the_password_masked() {
    let out = agegate()
        .args([
            "--database-url",
            "postgres://app:hunter2@127.0.0.1:1/agegate",
            "site",
            "list",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("hunter2"));
    assert!(stderr.contains("app:***@"));
}

/// `serve --eu-av-trust-anchors` with a file that cannot serve: (started, stderr).
fn serve_with_anchors(anchors: &std::path::Path) -> (bool, String) {
    serve_outcome(
        &[
            "--eu-av-trust-anchors".into(),
            anchors.as_os_str().to_owned(),
        ],
        &[],
    )
}

#[test]
fn a_missing_empty_or_malformed_trust_anchor_file_stops_the_server_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let malformed = dir.path().join("malformed.pem");
    std::fs::write(
        &malformed,
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    for file in [&missing, &empty, &malformed] {
        let (ok, stderr) = serve_with_anchors(file);
        assert!(!ok, "{} must stop the server", file.display());
        let lines: Vec<_> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(
            lines[0].contains(&file.display().to_string()),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("trust anchors"), "{}", lines[0]);
    }
}

#[tokio::test]
async fn with_trust_anchors_the_server_says_the_method_is_on() {
    let issuer = crate::wallet::TestIssuer::new(crate::helpers::T0);
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("anchors.pem");
    std::fs::write(&anchors, &issuer.ca_pem).unwrap();
    let (_db_dir, db) = temp_db();
    let server = ServerProcess::start_with_env(
        &db,
        &[],
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("AGEGATE_EU_AV_TRUST_ANCHORS", anchors.to_str().unwrap()),
            ("AGEGATE_EU_AV_WALLET_SCHEME", "openid4vp"),
        ],
    );
    let (site, _) = cli_site(&db, &[]);
    let invite = server.new_invite(&site, None).await;
    let html = gateway_page(&client(), invite["url"].as_str().unwrap()).await;
    assert!(
        html.contains("href=\"openid4vp://authorize?"),
        "the wallet scheme is used"
    );
}

/// Each thread of process `pid`: its name and its scheduling policy (field 41 of
/// `/proc/PID/task/TID/stat`; sched(7): 0 is `SCHED_OTHER`, 3 `SCHED_BATCH`).
#[cfg(target_os = "linux")]
fn thread_policies(pid: u32) -> Vec<(String, u32)> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let (Ok(name), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue; // the thread ended meanwhile
        };
        // After the name in parentheses, the fields from the 3rd on.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        threads.push((name.trim().to_owned(), fields[41 - 3].parse().unwrap()));
    }
    threads
}

#[cfg(target_os = "linux")]
#[test]
fn the_sqlite_writer_and_checkpointer_yield_the_cpu_to_the_threads_serving_requests() {
    if crate::pg::postgres_backend() {
        return; // the threads are SQLite's
    }
    const OTHER: u32 = 0;
    const BATCH: u32 = 3;
    let (_dir, db) = temp_db();
    let server = ServerProcess::start(&db, &[]);
    let pid = server.child.id();
    // Each sets its policy as it starts: wait until both have.
    let threads = poll_blocking(Duration::from_secs(10), || {
        let threads = thread_policies(pid);
        let batch = |name: &str| threads.iter().any(|(n, p)| n == name && *p == BATCH);
        (batch("sqlite-writer") && batch("sqlite-checkpoi")).then_some(threads)
    })
    .unwrap_or_else(|| panic!("not both under SCHED_BATCH: {:?}", thread_policies(pid)));
    let workers: Vec<_> = threads
        .iter()
        .filter(|(name, _)| {
            name.starts_with("tokio-rt-worker") || name.starts_with("sqlite-reader")
        })
        .collect();
    assert!(!workers.is_empty(), "{threads:?}");
    assert!(
        workers.iter().all(|(_, policy)| *policy == OTHER),
        "the threads that answer requests keep the default: {threads:?}"
    );
}
