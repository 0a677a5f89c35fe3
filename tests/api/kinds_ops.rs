//! The trust files of docs/trust.md#where-trust-anchors-come-from against the real
//! binary: files that stop `serve` (VICALs that do not verify, bad PEM files, a VICAL
//! flag without its anchor) and what a valid VICAL turns on; and the helpers the other
//! files on trust operations share (`trust_show_ops.rs`, `trust_reload.rs`,
//! `readme_mdl.rs`).

pub(crate) use crate::helpers::now;
use crate::helpers::{agegate, serve_outcome, temp_db, ServerProcess};
use crate::wallet::{sha256, TestIssuer, VicalEntry, VicalKnobs, VicalPublisher, PID_DOCTYPE};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const DAY: i64 = 86_400;

pub(crate) fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex of the SHA-256 of a certificate's DER: its fingerprint.
pub(crate) fn fingerprint(der: &[u8]) -> String {
    hex(&sha256(der))
}

pub(crate) fn args(list: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    list.iter().map(|a| a.as_ref().to_owned()).collect()
}

/// Asserts that `serve` with these arguments stops at once, non-zero, with exactly one
/// line on stderr that contains every one of `names`.
pub(crate) fn assert_refused(
    what: &str,
    extra: &[OsString],
    env: &[(&str, &Path)],
    names: &[&str],
) {
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
pub(crate) fn trust_show(extra: &[OsString], env: &[(&str, &Path)]) -> (i32, String, String) {
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
pub(crate) fn trust_show_json(extra: &[OsString], env: &[(&str, &Path)]) -> Value {
    let mut extra = extra.to_vec();
    extra.push("--json".into());
    let (code, stdout, stderr) = trust_show(&extra, env);
    assert_eq!(code, 0, "trust show --json: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

pub(crate) fn kinds_on(shown: &Value) -> Vec<&str> {
    shown["kindsOn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect()
}

/// The listed anchors of `kind`: (sha256, source).
pub(crate) fn anchors_of<'a>(shown: &'a Value, kind: &str) -> Vec<(&'a str, &'a str)> {
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
pub(crate) fn a_vical_that_does_not_verify_stops_serve_with_one_line_naming_the_file() {
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
pub(crate) fn mdl_vical_and_mdl_vical_anchor_are_refused_one_without_the_other() {
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
pub(crate) fn a_bad_mdl_or_pid_trust_anchor_file_stops_serve_with_one_line_naming_it() {
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
pub(crate) fn a_valid_vical_turns_mdl_on_with_the_roots_it_admits_for_mdl_listed_from_the_vical() {
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
pub(crate) fn a_valid_vical_with_no_mdl_entry_leaves_mdl_off() {
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
pub(crate) fn poll_log(server: &ServerProcess, needle: &str) -> bool {
    crate::helpers::poll_blocking(Duration::from_secs(10), || {
        (server.log_count(needle) > 0).then_some(())
    })
    .is_some()
}
