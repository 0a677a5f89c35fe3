//! The README's driving-licence walkthrough, run as written against the real binary.

use crate::helpers::{client, eventually, gateway_page};
use crate::kinds_ops::*;
use crate::trust_reload::{answer_with_mdl, free_port};
use crate::wallet::{AuthorizationRequest, TestIssuer, MDL_DOCTYPE};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// A `bash` without the parent's `AGEGATE_*` variables, with `agegate` a function that
/// runs the binary under test (`exec`s it, for the server).
fn bash(script: &str, dir: &Path, exec: bool) -> std::process::Command {
    let mut cmd = std::process::Command::new("bash");
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"AGEGATE_") {
            cmd.env_remove(name);
        }
    }
    let run = if exec { "exec " } else { "" };
    cmd.current_dir(dir)
        .env("AGEGATE_BIN", env!("CARGO_BIN_EXE_agegate"))
        .arg("-c")
        .arg(format!(
            "set -euo pipefail\nagegate() {{ {run}\"$AGEGATE_BIN\" \"$@\"; }}\n{script}"
        ));
    cmd
}

/// The first ```sh block after the heading `heading` in README.md.
fn readme_block(readme: &str, heading: &str) -> String {
    let from = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README has {heading:?}"));
    let rest = &readme[from..];
    let start = rest.find("```sh\n").expect("a sh block") + 6;
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].to_owned()
}

#[tokio::test]
async fn readme_mdl_walkthrough_works() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let helpers: String = readme_block(&readme, "## A worked session")
        .lines()
        .filter(|l| l.starts_with("field() "))
        .collect();
    assert!(!helpers.is_empty(), "the worked session defines field()");
    let port = free_port();
    let block = readme_block(&readme, "## Accept mobile driving licences")
        .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
    // The block as a person runs it: up to `agegate serve`, the server in another
    // terminal, then the rest.
    let lines: Vec<&str> = block.lines().collect();
    let serve_at = lines
        .iter()
        .position(|l| l.starts_with("agegate serve "))
        .expect("the walkthrough runs agegate serve");
    let (before, serve, after) = (
        lines[..serve_at].join("\n"),
        lines[serve_at],
        lines[serve_at + 1..].join("\n"),
    );
    let dir = tempfile::tempdir().unwrap();

    let out = bash(&before, dir.path(), false).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("mdl: on, 1 anchor(s)"),
        "trust show says: {said}"
    );

    let mut server = bash(serve, dir.path(), true)
        .env("AGEGATE_LISTEN", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = BufReader::new(server.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in log.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let health = format!("http://127.0.0.1:{port}/healthz");
    eventually(
        "the README's server answers",
        Duration::from_secs(10),
        || {
            let health = health.clone();
            async move { matches!(client().get(&health).send().await, Ok(r) if r.status() == 200) }
        },
    )
    .await;
    let startup: Vec<String> = rx.try_iter().collect();
    assert!(
        startup
            .iter()
            .any(|l| l.contains("credential kind mdl: on, 1 trust anchor(s)")),
        "{startup:#?}"
    );

    let out = bash(&format!("{helpers}\n{after}"), dir.path(), false)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let invite: Value = serde_json::from_str(said.lines().last().unwrap())
        .unwrap_or_else(|e| panic!("{e}: the invite in {said}"));
    let page = gateway_page(&client(), invite["url"].as_str().unwrap()).await;
    assert!(
        page.contains("Accepted here: Mobile driving licence (mDL)"),
        "{page}"
    );
    assert!(page.contains("Open your wallet app"), "{page}");
    assert!(page.contains("id=\"dc-api-button\""), "{page}");
    let req = AuthorizationRequest::from_gateway_html(&page);
    assert!(req.uri.starts_with("openid4vp://authorize?"), "{}", req.uri);
    assert_eq!(req.credentials.len(), 1, "{}", req.uri);
    assert_eq!(req.credentials[0].doc_type, MDL_DOCTYPE);
    assert_eq!(req.credentials[0].claim, "age_over_18");

    // "A licence signed under one of your roots verifies the invite": the test wallet's
    // state root put in the anchor file, reloaded by SIGHUP as the README says.
    let state = TestIssuer::named("agegate test IACA root", now());
    std::fs::write(dir.path().join("mdl-anchors.pem"), &state.ca_pem).unwrap();
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let reloaded = crate::helpers::poll_blocking(Duration::from_secs(10), || {
        rx.try_iter()
            .any(|l| l.contains("SIGHUP: trust anchors reloaded"))
            .then_some(())
    });
    assert!(reloaded.is_some(), "the server logs the reload");
    assert_eq!(answer_with_mdl(&state, &req).await, 200);
    let site: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("site.json")).unwrap()).unwrap();
    let status: Value = client()
        .get(format!(
            "http://127.0.0.1:{port}/v1/website/{}/invite/{}",
            site["siteId"].as_str().unwrap(),
            invite["inviteId"].as_str().unwrap()
        ))
        .basic_auth(
            site["username"].as_str().unwrap(),
            site["password"].as_str(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status[0]["status"], "verified", "{status}");
    let _ = server.kill();
    let _ = server.wait();
}
