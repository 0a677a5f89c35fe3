//! `serve`'s flags for signed requests: the identity under its new names (and the old
//! ones), the one warning line of a self-signed leaf, `--verifier-info` refused in one
//! line naming the file; `--wallet-links` and `--signed-wallet-scheme` on the page.

use super::*;
use crate::helpers::{now, serve_outcome};
use std::ffi::OsString;
use std::path::Path;

/// A server (stopped after its start) signing with `identity` under the flag names
/// `key_flag`/`cert_flag`, with `extra` flags; whether it started, and its stderr.
fn serve_with(identity: &Identity, names: (&str, &str), extra: &[OsString]) -> (bool, String) {
    let anchors = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(anchors.path(), TestIssuer::new(now()).ca_pem).unwrap();
    let mut args: Vec<OsString> = vec![
        names.0.into(),
        identity.key.clone().into(),
        names.1.into(),
        identity.cert.clone().into(),
    ];
    args.extend_from_slice(extra);
    serve_outcome(&args, &[("AGEGATE_EU_AV_TRUST_ANCHORS", anchors.path())])
}

fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("self-signed"))
        .collect()
}

#[test]
fn a_self_signed_leaf_starts_with_one_warning_line_and_a_ca_issued_one_with_none() {
    let t = now();
    let own = Identity::self_signed(t - DAY, t + 90 * DAY);
    let (started, stderr) = serve_with(
        &own,
        ("--request-signing-key", "--request-signing-cert"),
        &[],
    );
    assert!(started, "{stderr}");
    let lines = warnings(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("HAIP") && lines[0].contains("WARN"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(&own.cert.display().to_string()),
        "{}",
        lines[0]
    );
    // The older names keep working, and a CA-issued leaf is not warned about.
    let issued = Identity::ca_issued(t - DAY, t + 90 * DAY);
    let (started, stderr) = serve_with(
        &issued,
        ("--dc-api-signing-key", "--dc-api-signing-cert"),
        &[],
    );
    assert!(started, "{stderr}");
    assert!(warnings(&stderr).is_empty(), "{stderr}");
    assert!(
        stderr.contains("signed requests, client_id x509_hash:"),
        "{stderr}"
    );
}

#[test]
fn a_verifier_info_file_that_is_not_such_an_array_stops_the_start_with_one_line_naming_it() {
    let t = now();
    let issued = Identity::ca_issued(t - DAY, t + 90 * DAY);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("not-json.json", "{", "not JSON"),
        (
            "object.json",
            r#"{"format": "x", "data": 1}"#,
            "not a JSON array",
        ),
        (
            "no-format.json",
            r#"[{"data": 1}]"#,
            "entry 1 has no string \"format\"",
        ),
        (
            "no-data.json",
            r#"[{"format": "registration_cert"}]"#,
            "entry 1 has no \"data\"",
        ),
    ];
    for (name, text, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (started, stderr) = serve_with(
            &issued,
            ("--request-signing-key", "--request-signing-cert"),
            &["--verifier-info".into(), path.clone().into()],
        );
        assert!(!started, "{name} must stop the start");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(
            lines[0].contains(&path.display().to_string()),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(says), "{} says {says}", lines[0]);
    }
    let missing = Path::new("/nonexistent/verifier-info.json");
    let (started, stderr) = serve_with(
        &issued,
        ("--request-signing-key", "--request-signing-cert"),
        &["--verifier-info".into(), missing.into()],
    );
    assert!(!started);
    assert!(
        stderr.contains("cannot read verifier info '/nonexistent/verifier-info.json'"),
        "{stderr}"
    );
}

#[tokio::test]
async fn wallet_links_choose_the_links_and_the_signed_scheme_is_the_operators() {
    use agegate::domain::presentation::WalletLinks;
    let value = RefCase::with(|s| s.wallet_links = WalletLinks::Value).await;
    assert!(value.html.contains("id=\"eu-av-link\""));
    assert!(!value.html.contains("id=\"signed-link\""));
    let reference = RefCase::with(|s| {
        s.wallet_links = WalletLinks::Reference;
        s.signed_wallet_scheme = "eudi-openid4vp".into();
    })
    .await;
    assert!(!reference.html.contains("id=\"eu-av-link\""));
    assert!(reference
        .link()
        .starts_with("eudi-openid4vp://authorize?client_id="));
    assert!(
        reference.html.contains("id=\"dc-api-request\""),
        "the DC API either way"
    );
    let both = RefCase::new().await;
    assert!(both.html.contains("id=\"eu-av-link\"") && both.html.contains("id=\"signed-link\""));
}
