//! The EU age-verification trusted list from a file (docs/trust.md#where-trust-anchors-come-from)
//! against the real binary: `trust show` lists the recognised providers and the list
//! itself, `serve` starts without a list that does not verify and says why in one line
//! naming it, a plain-http source off loopback stops the start, and SIGHUP takes a newer
//! list but never an older one. The lists are signed by xmlsec1 (src/trustlist/testdata,
//! made by scripts/trustlist-fixtures.py). Lists from URLs: tests/api/trust_refresh.rs.

use crate::helpers::{
    agegate, eventually, json_output, scrape, serve_outcome, succeeded, temp_db, trust_show_json,
    ServerProcess,
};
use crate::wallet::sha256;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/trustlist/testdata")
        .join(name)
}

/// Lowercase hex SHA-256 of a PEM certificate's DER.
pub fn fingerprint_of_pem(name: &str) -> String {
    use base64::Engine;
    let pem = std::fs::read_to_string(testdata(name)).unwrap();
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    sha256(&der).iter().map(|b| format!("{b:02x}")).collect()
}

/// The anchors' fingerprints under list A (providers a and b) and under list B (a, b
/// and g, which B adds), each sorted as [`eu_av_gauge`] gives them.
pub fn lists_a_and_b() -> (Vec<String>, Vec<String>) {
    let (a, b, g) = (
        fingerprint_of_pem("provider-a.pem"),
        fingerprint_of_pem("provider-b.pem"),
        fingerprint_of_pem("provider-g-added.pem"),
    );
    (sorted(vec![a.clone(), b.clone()]), sorted(vec![a, b, g]))
}

pub fn list_args(list: impl std::fmt::Display, signer: &str) -> Vec<String> {
    vec![
        "--eu-av-trusted-list".into(),
        list.to_string(),
        "--eu-av-trusted-list-signer".into(),
        testdata(signer).display().to_string(),
    ]
}

pub fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn trust_show_lists_the_recognised_providers_of_the_list_and_the_list_itself() {
    let list = testdata("xmlsec-rsa-filter2-exc.xml");
    let (_db_dir, db) = temp_db();
    let (shown, _) =
        json_output(trust_show_json(&db.url).args(list_args(list.display(), "signer-ca.pem")));
    assert_eq!(shown["kindsOn"], serde_json::json!(["eu-av"]));
    let anchors: Vec<String> = shown["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["kind"], "eu-av");
            assert_eq!(
                a["source"],
                format!("eu-av-trusted-list:{}", list.display())
            );
            a["sha256"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        sorted(anchors),
        sorted(vec![
            fingerprint_of_pem("provider-a.pem"),
            fingerprint_of_pem("provider-b.pem")
        ])
    );
    let sources = shown["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1);
    let s = &sources[0];
    assert_eq!(s["list"], "eu-av-trusted-list");
    assert_eq!(s["kind"], "eu-av");
    assert_eq!(s["location"], list.display().to_string());
    assert_eq!(s["sequence"], 1);
    assert_eq!(s["issued"], "2026-01-01T00:00:00Z");
    assert_eq!(s["nextUpdate"], "2099-01-01T00:00:00Z");
    assert_eq!(s["anchors"], 2);
    assert!(s["lastSuccess"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn serve_refuses_a_list_file_that_does_not_verify_with_one_line_naming_the_list_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(testdata("xmlsec-rsa-filter2-exc.xml")).unwrap();
    let tampered = dir.path().join("av-tl.xml");
    std::fs::write(
        &tampered,
        good.replacen("service-status/deprecated", "service-status/recognized", 1),
    )
    .unwrap();
    for (list, signer, why) in [
        (
            &tampered,
            "signer-ca.pem",
            "refused (signature): signature refused: digest of the document does not match",
        ),
        (
            &testdata("xmlsec-rsa-filter2-exc.xml"),
            "signer-ec.pem",
            "refused (signature): signature refused: signer is not a pinned certificate and \
             does not chain",
        ),
        (
            &dir.path().join("missing.xml"),
            "signer-ca.pem",
            "refused (unreachable): cannot read:",
        ),
    ] {
        let (started, stderr) = serve_outcome(&os_args(list_args(list.display(), signer)), &[]);
        assert!(!started, "serve must not start");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        let named = format!("trusted list eu-av-trusted-list {}", list.display());
        assert!(lines[0].contains(&named), "{stderr}");
        assert!(lines[0].contains(why), "{stderr}");
    }
}

#[test]
fn plain_http_off_loopback_and_an_unreadable_signer_stop_the_start_in_one_line() {
    for (args, why) in [
        (
            list_args("http://192.0.2.1/av-tl.xml", "signer-ca.pem"),
            "http:// is allowed on a loopback address only",
        ),
        (
            list_args(testdata("xmlsec-rsa-filter2-exc.xml").display(), "nope.pem"),
            "cannot read eu-av-trusted-list signer",
        ),
    ] {
        let (started, stderr) = serve_outcome(&os_args(args), &[]);
        assert!(!started, "serve must not start");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].contains(why), "{stderr}");
    }
}

fn os_args(args: Vec<String>) -> Vec<std::ffi::OsString> {
    args.into_iter().map(Into::into).collect()
}

/// The eu-av anchors `/metrics`' expiry gauge shows, by fingerprint.
pub async fn eu_av_gauge(metrics: &str) -> Vec<String> {
    let found = scrape(metrics)
        .await
        .lines()
        .filter(|l| {
            l.starts_with("agegate_trust_anchor_expiry_seconds{") && l.contains("kind=\"eu-av\"")
        })
        .filter_map(|l| {
            let start = l.find("sha256=\"")? + 8;
            Some(l[start..start + 64].to_owned())
        })
        .collect();
    sorted(found)
}

#[tokio::test]
async fn sighup_takes_a_newer_list_and_keeps_it_against_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("av-tl.xml");
    std::fs::copy(testdata("xmlsec-rsa-filter2-exc.xml"), &list).unwrap();
    let metrics_addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let metrics = format!("http://{metrics_addr}");
    let (_db_dir, db) = temp_db();
    let mut args = list_args(list.display(), "signer-ca.pem");
    args.extend(["--metrics-listen".into(), metrics_addr.to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = ServerProcess::start(&db, &args);
    let (list_a, list_b) = lists_a_and_b();
    assert_eq!(eu_av_gauge(&metrics).await, list_a);

    // List B (sequence 2) adds provider g.
    std::fs::copy(testdata("xmlsec-rsa-filter2-exc-b.xml"), &list).unwrap();
    server.signal("HUP");
    let want = list_b;
    eventually(
        "B's providers are in force",
        Duration::from_secs(10),
        || {
            let (metrics, want) = (metrics.clone(), want.clone());
            async move { eu_av_gauge(&metrics).await == want }
        },
    )
    .await;

    // A again (sequence 1): refused as older, B stays.
    std::fs::copy(testdata("xmlsec-rsa-filter2-exc.xml"), &list).unwrap();
    server.signal("HUP");
    server.logged("refused (older)").await;
    let why = server.log_lines("refused (older)");
    assert_eq!(why.len(), 1, "{why:?}");
    assert_eq!(
        why[0].split_once("trusted list ").map(|(_, l)| l),
        Some(
            format!(
                "eu-av-trusted-list {} refused (older): sequence number 1 is lower than the \
                 2 in force; sequence 2 stays in force",
                list.display()
            )
            .as_str()
        ),
        "{}",
        why[0]
    );
    assert_eq!(eu_av_gauge(&metrics).await, want, "B stays in force");
}

#[test]
fn trust_show_takes_the_pid_and_mdl_lists_of_trusted_entities_as_their_kinds_anchors() {
    let (pid, mdl) = (
        testdata("lote-pid-rs256.jwt"),
        testdata("lote-mdl-es384.jwt"),
    );
    let (_db_dir, db) = temp_db();
    let (shown, _) = json_output(
        trust_show_json(&db.url)
            .arg("--eudi-pid-lote")
            .arg(&pid)
            .arg("--eudi-pid-lote-signer")
            .arg(testdata("signer-ca.pem"))
            .arg("--mdl-lote")
            .arg(&mdl)
            .arg("--mdl-lote-signer")
            .arg(testdata("signer-ec384.pem")),
    );
    assert_eq!(shown["kindsOn"], serde_json::json!(["eudi-pid", "mdl"]));
    let of = |kind: &str| -> Vec<(String, String)> {
        shown["anchors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["kind"] == kind)
            .map(|a| {
                (
                    a["sha256"].as_str().unwrap().to_owned(),
                    a["source"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        of("eudi-pid"),
        vec![(
            fingerprint_of_pem("provider-a.pem"),
            format!("lote:{}", pid.display())
        )]
    );
    assert_eq!(
        of("mdl"),
        vec![(
            fingerprint_of_pem("provider-b.pem"),
            format!("lote:{}", mdl.display())
        )]
    );
    let sequences: Vec<(&str, u64)> = shown["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap(), s["sequence"].as_u64().unwrap()))
        .collect();
    assert_eq!(sequences, vec![("eudi-pid", 1), ("mdl", 3)]);
}

#[test]
fn the_statement_names_the_lists_in_force() {
    let list = testdata("xmlsec-rsa-filter2-exc.xml");
    let (_db_dir, db) = temp_db();
    let (md, _) = succeeded(
        agegate()
            .arg("--database-url")
            .arg(&db.url)
            .arg("statement")
            .args(list_args(list.display(), "signer-ca.pem")),
    );
    let row = format!(
        "| eu-av-trusted-list | `eu-av` | {} | 1 | 2026-01-01T00:00:00Z | 2099-01-01T00:00:00Z | 2 |",
        list.display()
    );
    assert!(md.contains("## Trust lists\n"), "{md}");
    assert!(md.contains(&row), "{row} in\n{md}");
}
