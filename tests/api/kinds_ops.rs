//! The operations of docs/trust.md#where-trust-anchors-come-from and docs/trust.md#trust-show-reloading-and-expiry against the real binary: trust files that stop `serve`
//! (VICALs that do not verify, bad PEM files, a VICAL flag without its anchor), what a
//! valid VICAL turns on, `agegate trust show` (text, JSON, the serve envs), and SIGHUP
//! reloading the anchors of a running server — seen in `/metrics`' expiry gauge, the log
//! and the verification of a driving licence.

use crate::helpers::{
    agegate, cli_site, client, eventually, gateway_page, serve_outcome, temp_db, ServerProcess,
};
use crate::wallet::{
    rfc3339, sha256, AuthorizationRequest, Presentation, TestIssuer, VicalEntry, VicalKnobs,
    VicalPublisher, MDL_DOCTYPE, MDL_NAMESPACE, PID_DOCTYPE,
};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const DAY: i64 = 86_400;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex of the SHA-256 of a certificate's DER: its fingerprint.
fn fingerprint(der: &[u8]) -> String {
    hex(&sha256(der))
}

fn args(list: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    list.iter().map(|a| a.as_ref().to_owned()).collect()
}

/// Asserts that `serve` with these arguments stops at once, non-zero, with exactly one
/// line on stderr that contains every one of `names`.
fn assert_refused(what: &str, extra: &[OsString], env: &[(&str, &Path)], names: &[&str]) {
    let (ok, stderr) = serve_outcome(extra, env);
    assert!(!ok, "{what}: serve must not start ({stderr})");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line on stderr, got {stderr:?}");
    for name in names {
        assert!(
            lines[0].contains(name),
            "{what}: {:?} names {name}",
            lines[0]
        );
    }
}

/// `agegate trust show` with `extra` arguments and `env`: (exit code, stdout, stderr).
fn trust_show(extra: &[OsString], env: &[(&str, &Path)]) -> (i32, String, String) {
    let out = agegate()
        .args(["trust", "show"])
        .args(extra)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `trust show --json`, asserting success.
fn trust_show_json(extra: &[OsString], env: &[(&str, &Path)]) -> Value {
    let mut extra = extra.to_vec();
    extra.push("--json".into());
    let (code, stdout, stderr) = trust_show(&extra, env);
    assert_eq!(code, 0, "trust show --json: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn kinds_on(shown: &Value) -> Vec<&str> {
    shown["kindsOn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect()
}

/// The listed anchors of `kind`: (sha256, source).
fn anchors_of<'a>(shown: &'a Value, kind: &str) -> Vec<(&'a str, &'a str)> {
    let mut found: Vec<_> = shown["anchors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == kind)
        .map(|a| (a["sha256"].as_str().unwrap(), a["source"].as_str().unwrap()))
        .collect();
    found.sort_unstable();
    found
}

// ---------------------------------------------------------------------------------------
// Start-up refusals
// ---------------------------------------------------------------------------------------

#[test]
fn a_vical_that_does_not_verify_stops_serve_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = now();
    let state = TestIssuer::named("agegate test IACA root", t);
    let publisher = VicalPublisher::new(t);
    let anchor = write(dir.path(), "vical-anchor.pem", &publisher.anchor_pem);
    let entries = [VicalEntry::mdl(&state.ca_der)];
    let spoiled = [
        (
            "bad signature",
            VicalKnobs {
                bad_signature: true,
                ..Default::default()
            },
        ),
        (
            "tampered payload",
            VicalKnobs {
                tamper_payload: true,
                ..Default::default()
            },
        ),
        (
            "no x5chain (unsigned)",
            VicalKnobs {
                no_x5chain: true,
                ..Default::default()
            },
        ),
        (
            "signer not under the anchor",
            VicalKnobs {
                wrong_signer: true,
                ..Default::default()
            },
        ),
    ];
    for (i, (what, knobs)) in spoiled.iter().enumerate() {
        let vical = write(
            dir.path(),
            &format!("vical-{i}.cbor"),
            publisher.vical(&entries, knobs),
        );
        let shown = vical.display().to_string();
        assert_refused(
            what,
            &args(&[&"--mdl-vical", &vical, &"--mdl-vical-anchor", &anchor]),
            &[],
            &[&shown],
        );
        // trust show reads the same files and refuses them alike.
        let (code, _, stderr) = trust_show(
            &args(&[&"--mdl-vical", &vical, &"--mdl-vical-anchor", &anchor]),
            &[],
        );
        assert_ne!(code, 0, "trust show with a VICAL with {what}");
        assert!(stderr.contains(&shown), "{what}: {stderr}");
    }
    // Not a VICAL at all, or no file.
    let garbage = write(dir.path(), "garbage.cbor", b"not CBOR at all");
    let missing = dir.path().join("missing.cbor");
    for vical in [&garbage, &missing] {
        let shown = vical.display().to_string();
        assert_refused(
            &shown,
            &args(&[&"--mdl-vical", vical, &"--mdl-vical-anchor", &anchor]),
            &[],
            &[&shown],
        );
    }
    // And through the environment.
    let bad = dir.path().join("vical-0.cbor");
    assert_refused(
        "a bad VICAL by env",
        &[],
        &[
            ("AGEGATE_MDL_VICAL", &bad),
            ("AGEGATE_MDL_VICAL_ANCHOR", &anchor),
        ],
        &[&bad.display().to_string()],
    );
}

#[test]
fn mdl_vical_and_mdl_vical_anchor_are_refused_one_without_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let t = now();
    let state = TestIssuer::named("agegate test IACA root", t);
    let publisher = VicalPublisher::new(t);
    let anchor = write(dir.path(), "vical-anchor.pem", &publisher.anchor_pem);
    let vical = write(
        dir.path(),
        "vical.cbor",
        publisher.vical(&[VicalEntry::mdl(&state.ca_der)], &VicalKnobs::default()),
    );
    for (given, missing, path) in [
        ("--mdl-vical", "--mdl-vical-anchor", &vical),
        ("--mdl-vical-anchor", "--mdl-vical", &anchor),
    ] {
        let (ok, stderr) = serve_outcome(&args(&[&given, path]), &[]);
        assert!(!ok, "{given} alone must not start: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{given} alone: one line, got {stderr:?}");
        assert!(lines[0].contains(missing), "{given} alone: {}", lines[0]);
    }
    for (given, missing, path) in [
        ("AGEGATE_MDL_VICAL", "--mdl-vical-anchor", &vical),
        ("AGEGATE_MDL_VICAL_ANCHOR", "--mdl-vical", &anchor),
    ] {
        let (ok, stderr) = serve_outcome(&[], &[(given, path)]);
        assert!(!ok, "{given} alone must not start: {stderr}");
        assert!(stderr.contains(missing), "{given} alone: {stderr}");
    }
}

#[test]
fn a_bad_mdl_or_pid_trust_anchor_file_stops_serve_with_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = write(dir.path(), "garbage.pem", "not a PEM file");
    let empty = write(dir.path(), "empty.pem", "");
    let key_only = write(
        dir.path(),
        "key.pem",
        "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n",
    );
    let missing = dir.path().join("missing.pem");
    for (flag, env) in [
        ("--mdl-trust-anchors", "AGEGATE_MDL_TRUST_ANCHORS"),
        ("--eudi-pid-trust-anchors", "AGEGATE_EUDI_PID_TRUST_ANCHORS"),
    ] {
        for bad in [&garbage, &empty, &key_only, &missing] {
            let shown = bad.display().to_string();
            let what = format!("{flag} {shown}");
            assert_refused(&what, &args(&[&flag, bad]), &[], &[&shown]);
            assert_refused(&format!("{env}={shown}"), &[], &[(env, bad)], &[&shown]);
            let (code, _, stderr) = trust_show(&args(&[&flag, bad]), &[]);
            assert_ne!(code, 0, "trust show {what}");
            assert!(stderr.contains(&shown), "trust show {what}: {stderr}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// What a valid VICAL turns on
// ---------------------------------------------------------------------------------------

#[test]
fn a_valid_vical_turns_mdl_on_with_the_roots_it_admits_for_mdl_listed_from_the_vical() {
    let dir = tempfile::tempdir().unwrap();
    let t = now();
    let for_mdl = TestIssuer::named("agegate test IACA root A", t);
    let for_pid_only = TestIssuer::named("agegate test PID provider CA", t);
    let for_any = TestIssuer::named("agegate test IACA root C", t);
    let publisher = VicalPublisher::with_intermediate(t);
    let anchor = write(dir.path(), "vical-anchor.pem", &publisher.anchor_pem);
    let vical = write(
        dir.path(),
        "vical.cbor",
        publisher.vical(
            &[
                VicalEntry::mdl(&for_mdl.ca_der),
                VicalEntry::for_doc_types(&for_pid_only.ca_der, &[PID_DOCTYPE]),
                VicalEntry::any_doc_type(&for_any.ca_der),
            ],
            &VicalKnobs::default(),
        ),
    );
    let source = format!("vical:{}", vical.display());
    let flags = args(&[&"--mdl-vical", &vical, &"--mdl-vical-anchor", &anchor]);
    let shown = trust_show_json(&flags, &[]);
    assert_eq!(kinds_on(&shown), ["mdl"], "{shown}");
    let mut expected = vec![
        (fingerprint(&for_mdl.ca_der), source.clone()),
        (fingerprint(&for_any.ca_der), source.clone()),
    ];
    expected.sort_unstable();
    let listed: Vec<(String, String)> = anchors_of(&shown, "mdl")
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
    assert_eq!(listed, expected, "the mDL and any-docType entries: {shown}");
    assert_eq!(shown["anchors"].as_array().unwrap().len(), 2, "{shown}");
    let pid_only = fingerprint(&for_pid_only.ca_der);
    assert!(!shown.to_string().contains(&pid_only), "{shown}");

    // serve says so at start.
    let (_db_dir, db) = temp_db();
    let mut flags_serve: Vec<&str> = vec!["--mdl-vical"];
    let (vical_s, anchor_s) = (vical.display().to_string(), anchor.display().to_string());
    flags_serve.extend([vical_s.as_str(), "--mdl-vical-anchor", anchor_s.as_str()]);
    let server = ServerProcess::start(&db, &flags_serve);
    let on = format!("credential kind mdl: on, 2 trust anchor(s) from {source}");
    let said = poll_log(&server, &on);
    assert!(said, "start-up says {on:?}");
}

#[test]
fn a_valid_vical_with_no_mdl_entry_leaves_mdl_off() {
    let dir = tempfile::tempdir().unwrap();
    let t = now();
    let pid = TestIssuer::named("agegate test PID provider CA", t);
    let publisher = VicalPublisher::new(t);
    let anchor = write(dir.path(), "vical-anchor.pem", &publisher.anchor_pem);
    let vical = write(
        dir.path(),
        "vical.cbor",
        publisher.vical(
            &[VicalEntry::for_doc_types(&pid.ca_der, &[PID_DOCTYPE])],
            &VicalKnobs::default(),
        ),
    );
    let flags = args(&[&"--mdl-vical", &vical, &"--mdl-vical-anchor", &anchor]);
    let shown = trust_show_json(&flags, &[]);
    assert!(!kinds_on(&shown).contains(&"mdl"), "{shown}");
    assert!(anchors_of(&shown, "mdl").is_empty(), "{shown}");

    // serve starts (a valid list is no error) with mdl off.
    let (_db_dir, db) = temp_db();
    let (vical_s, anchor_s) = (vical.display().to_string(), anchor.display().to_string());
    let server = ServerProcess::start(
        &db,
        &["--mdl-vical", &vical_s, "--mdl-vical-anchor", &anchor_s],
    );
    assert!(
        poll_log(&server, "credential kind mdl: off"),
        "start-up says mdl is off"
    );
    assert_eq!(server.log_count("credential kind mdl: on"), 0);
}

/// Waits up to 10 s for a log line with `needle`; whether one came.
fn poll_log(server: &ServerProcess, needle: &str) -> bool {
    crate::helpers::poll_blocking(Duration::from_secs(10), || {
        (server.log_count(needle) > 0).then_some(())
    })
    .is_some()
}

// ---------------------------------------------------------------------------------------
// trust show
// ---------------------------------------------------------------------------------------

/// Anchor files of every kind: eu-av and eudi-pid one CA each; mdl a state's CA and a
/// certificate that expires in 10 days.
struct AnchorFiles {
    _dir: tempfile::TempDir,
    eu_av: PathBuf,
    pid: PathBuf,
    mdl: PathBuf,
    /// (der, kind, path) of each anchor, in file order.
    expected: Vec<(Vec<u8>, &'static str, PathBuf)>,
    /// The fingerprint of the one that expires within 30 days, and its notAfter.
    soon: (String, i64),
}

fn anchor_files(t: i64) -> AnchorFiles {
    let dir = tempfile::tempdir().unwrap();
    let av = TestIssuer::new(t);
    let pid = TestIssuer::named("agegate test PID provider CA", t);
    let state = TestIssuer::named("agegate test IACA root", t);
    let short = state.with_signer_validity(t - DAY, t + 10 * DAY);
    let eu_av = write(dir.path(), "eu-av.pem", &av.ca_pem);
    let pid_path = write(dir.path(), "eudi-pid.pem", &pid.ca_pem);
    let mdl = write(
        dir.path(),
        "mdl.pem",
        format!("{}{}", state.ca_pem, short.ds_cert_pem),
    );
    AnchorFiles {
        expected: vec![
            (av.ca_der.clone(), "eu-av", eu_av.clone()),
            (pid.ca_der.clone(), "eudi-pid", pid_path.clone()),
            (state.ca_der.clone(), "mdl", mdl.clone()),
            (short.ds_cert_der.clone(), "mdl", mdl.clone()),
        ],
        soon: (fingerprint(&short.ds_cert_der), t + 10 * DAY),
        _dir: dir,
        eu_av,
        pid: pid_path,
        mdl,
    }
}

#[test]
fn trust_show_lists_every_anchor_by_kind_with_subject_not_after_fingerprint_and_source_and_flags_one_expiring_within_30_days(
) {
    let t = now();
    let files = anchor_files(t);
    let flags = args(&[
        &"--eu-av-trust-anchors",
        &files.eu_av,
        &"--eudi-pid-trust-anchors",
        &files.pid,
        &"--mdl-trust-anchors",
        &files.mdl,
    ]);

    let shown = trust_show_json(&flags, &[]);
    assert_eq!(kinds_on(&shown), ["eu-av", "eudi-pid", "mdl"], "{shown}");
    let listed = shown["anchors"].as_array().unwrap();
    assert_eq!(listed.len(), files.expected.len(), "{shown}");
    for (der, kind, path) in &files.expected {
        let sha = fingerprint(der);
        let a = listed
            .iter()
            .find(|a| a["sha256"] == sha.as_str())
            .unwrap_or_else(|| panic!("{kind} anchor {sha} listed: {shown}"));
        assert_eq!(a["kind"], *kind, "{a}");
        assert_eq!(a["source"], path.display().to_string(), "{a}");
        assert!(a["subject"].as_str().unwrap().contains("CN="), "{a}");
        let soon = sha == files.soon.0;
        assert_eq!(a["expiresSoon"], soon, "{a}");
        assert_eq!(a["expired"], false, "{a}");
        if soon {
            assert_eq!(a["notAfter"], rfc3339(files.soon.1), "{a}");
        } else {
            // The test CAs are valid for 365 days.
            assert_eq!(a["notAfter"], rfc3339(t + 365 * DAY), "{a}");
        }
    }
    // Subjects as the certificates say them.
    let subjects: Vec<&str> = listed
        .iter()
        .map(|a| a["subject"].as_str().unwrap())
        .collect();
    for name in [
        "agegate test Proof of Age CA",
        "agegate test PID provider CA",
        "agegate test IACA root",
        "agegate test Proof of Age DS",
    ] {
        assert!(subjects.iter().any(|s| s.contains(name)), "{subjects:?}");
    }

    // The text: every kind, every anchor's subject, notAfter, fingerprint and source; the
    // flag once, in the entry of the one that expires soon.
    let (code, text, stderr) = trust_show(&flags, &[]);
    assert_eq!(code, 0, "{stderr}");
    for kind in ["eu-av", "eudi-pid", "mdl"] {
        assert!(text.contains(kind), "{kind} in:\n{text}");
    }
    for a in listed {
        for field in ["subject", "notAfter", "source"] {
            let value = a[field].as_str().unwrap();
            assert!(text.contains(value), "{field} {value} in:\n{text}");
        }
    }
    // Fingerprints however the text groups them (AB:CD:.. or abcd..).
    let flat = text.replace(':', "").to_ascii_lowercase();
    let at = |sha: &str| {
        flat.find(sha)
            .unwrap_or_else(|| panic!("fingerprint {sha} in:\n{text}"))
    };
    let flag = "expires within 30 days";
    assert_eq!(flat.matches(flag).count(), 1, "one flag in:\n{text}");
    let flag_at = flat.find(flag).unwrap();
    let soon_at = at(&files.soon.0);
    assert!(flag_at < soon_at, "the flag heads its entry:\n{text}");
    for (der, _, _) in &files.expected {
        let other = at(&fingerprint(der));
        assert!(
            other == soon_at || other < flag_at || other > soon_at,
            "no other anchor between the flag and its fingerprint:\n{text}"
        );
    }
}

#[test]
fn trust_show_takes_the_same_envs_as_serve() {
    let t = now();
    let files = anchor_files(t);
    let state = TestIssuer::named("agegate test IACA root V", t);
    let publisher = VicalPublisher::new(t);
    let dir = tempfile::tempdir().unwrap();
    let anchor = write(dir.path(), "vical-anchor.pem", &publisher.anchor_pem);
    let vical = write(
        dir.path(),
        "vical.cbor",
        publisher.vical(&[VicalEntry::mdl(&state.ca_der)], &VicalKnobs::default()),
    );
    let shown = trust_show_json(
        &[],
        &[
            ("AGEGATE_EU_AV_TRUST_ANCHORS", &files.eu_av),
            ("AGEGATE_EUDI_PID_TRUST_ANCHORS", &files.pid),
            ("AGEGATE_MDL_TRUST_ANCHORS", &files.mdl),
            ("AGEGATE_MDL_VICAL", &vical),
            ("AGEGATE_MDL_VICAL_ANCHOR", &anchor),
        ],
    );
    assert_eq!(kinds_on(&shown), ["eu-av", "eudi-pid", "mdl"], "{shown}");
    for (der, kind, path) in &files.expected {
        let sha = fingerprint(der);
        let path = path.display().to_string();
        assert!(
            anchors_of(&shown, kind).contains(&(sha.as_str(), path.as_str())),
            "{kind} {sha} from {path}: {shown}"
        );
    }
    let from_vical = format!("vical:{}", vical.display());
    assert_eq!(
        anchors_of(&shown, "mdl")
            .iter()
            .filter(|(_, source)| *source == from_vical)
            .map(|(sha, _)| *sha)
            .collect::<Vec<_>>(),
        [fingerprint(&state.ca_der)],
        "{shown}"
    );
    // Nothing set: every kind off, and still a success.
    let none = trust_show_json(&[], &[]);
    assert!(kinds_on(&none).is_empty(), "{none}");
    assert!(none["anchors"].as_array().unwrap().is_empty(), "{none}");
}

// ---------------------------------------------------------------------------------------
// SIGHUP
// ---------------------------------------------------------------------------------------

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

/// The expiry gauge's samples: sha256 → (kind, seconds).
async fn expiry_gauge(metrics: &str) -> Vec<(String, String, i64)> {
    let text = client()
        .get(format!("{metrics}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let label = |labels: &str, name: &str| {
        let start = labels.find(&format!("{name}=\""))? + name.len() + 2;
        let end = start + labels[start..].find('"')?;
        Some(labels[start..end].to_owned())
    };
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("agegate_trust_anchor_expiry_seconds{")?;
            let (labels, value) = rest.split_once("} ")?;
            Some((
                label(labels, "sha256")?,
                label(labels, "kind")?,
                value.trim().parse::<f64>().ok()? as i64,
            ))
        })
        .collect()
}

/// Opens the invite's gateway page and reads the wallet link's request.
async fn request_of(invite: &Value) -> AuthorizationRequest {
    AuthorizationRequest::from_gateway_html(
        &gateway_page(&client(), invite["url"].as_str().unwrap()).await,
    )
}

/// `issuer`'s driving licence, answering `req`: the response's status.
async fn answer_with_mdl(issuer: &TestIssuer, req: &AuthorizationRequest) -> reqwest::StatusCode {
    let p = Presentation::for_request(req, now()).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    client()
        .post(&req.response_uri)
        .form(&issuer.answer_form(req, &p))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn sighup_reloads_the_anchor_files_and_a_bad_file_keeps_the_old_ones() {
    let t = now();
    let dir = tempfile::tempdir().unwrap();
    let a = TestIssuer::named("agegate test IACA root A", t);
    let b = TestIssuer::named("agegate test IACA root B", t);
    let (sha_a, sha_b) = (fingerprint(&a.ca_der), fingerprint(&b.ca_der));
    let anchors = write(dir.path(), "mdl.pem", &a.ca_pem);
    let anchors_s = anchors.display().to_string();
    let (_db_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "mdl"]);
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let metrics = format!("http://{metrics_addr}");
    let mut server = ServerProcess::start(
        &db,
        &[
            "--mdl-trust-anchors",
            &anchors_s,
            "--metrics-listen",
            &metrics_addr,
        ],
    );
    let gauge = expiry_gauge(&metrics).await;
    assert_eq!(gauge.len(), 1, "{gauge:?}");
    assert_eq!(
        (gauge[0].0.as_str(), gauge[0].1.as_str()),
        (sha_a.as_str(), "mdl")
    );
    let left = gauge[0].2;
    assert!(
        (364 * DAY..=365 * DAY).contains(&left),
        "seconds to A's notAfter: {left}"
    );
    // A request shown while A is trusted.
    let invite = server
        .new_invite(&site, Some(json!({"customId": "before-reload"})))
        .await;
    let req = request_of(&invite).await;
    assert_eq!(req.credential_id, "mdl", "{}", req.uri);

    // B replaces A.
    std::fs::write(&anchors, &b.ca_pem).unwrap();
    server.signal("HUP");
    eventually(
        "the gauge shows B and not A",
        Duration::from_secs(10),
        || {
            let metrics = metrics.clone();
            let (sha_a, sha_b) = (sha_a.clone(), sha_b.clone());
            async move {
                let gauge = expiry_gauge(&metrics).await;
                gauge.iter().any(|g| g.0 == sha_b) && !gauge.iter().any(|g| g.0 == sha_a)
            }
        },
    )
    .await;
    server.logged("SIGHUP: trust anchors reloaded").await;
    // The verifier follows: a licence under A is refused now, one under B accepted (the
    // live request survives the refusal).
    assert_eq!(answer_with_mdl(&a, &req).await, 400, "A no longer trusted");
    assert_eq!(answer_with_mdl(&b, &req).await, 200, "B trusted");
    let status: Value = server
        .get_invite(&site, invite["inviteId"].as_str().unwrap())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(status[0]["status"], "verified", "{status}");

    // A bad file keeps B, and the log says why, naming the file.
    std::fs::write(&anchors, "garbage, not a PEM file").unwrap();
    server.signal("HUP");
    server
        .logged("SIGHUP: trust anchors not reloaded, the old ones stay")
        .await;
    let why = server.log_lines("SIGHUP: trust anchors not reloaded");
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].contains(&anchors_s), "names the file: {}", why[0]);
    assert_eq!(server.log_count("SIGHUP: trust anchors reloaded"), 1);
    let gauge = expiry_gauge(&metrics).await;
    assert_eq!(gauge.len(), 1, "{gauge:?}");
    assert_eq!(gauge[0].0, sha_b, "B stays in force");
    let invite = server
        .new_invite(&site, Some(json!({"customId": "after-bad-reload"})))
        .await;
    let req = request_of(&invite).await;
    assert_eq!(answer_with_mdl(&b, &req).await, 200, "B still trusted");
    server.stop().await;
}

// ---------------------------------------------------------------------------------------
// The README's walkthrough, run as written
// ---------------------------------------------------------------------------------------

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
