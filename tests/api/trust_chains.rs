//! Every certificate between a list's signer and the pinned one is a CA
//! (docs/trust.md#what-agegate-checks-in-a-trusted-list), against the real binary: lists
//! whose signer chains to the pinned root through an intermediate (xmlsec1 and jwcrypto
//! signed them: src/trustlist/testdata/chain) are taken through a CA and refused, in one
//! line naming the list, through a certificate whose basicConstraints is not a CA.

use crate::helpers::{agegate, temp_db};
use crate::trust_lists::{fingerprint_of_pem, testdata};
use serde_json::Value;

/// `trust show --json` with the chain test's XML list or JSON list of PID providers.
fn trust_show(name: &str) -> std::process::Output {
    let (_db_dir, db) = temp_db();
    let (list, signer) = if name.ends_with(".xml") {
        ("--eu-av-trusted-list", "--eu-av-trusted-list-signer")
    } else {
        ("--eudi-pid-lote", "--eudi-pid-lote-signer")
    };
    agegate()
        .arg("--database-url")
        .arg(&db.url)
        .args(["trust", "show", "--json", list])
        .arg(testdata(&format!("chain/{name}")))
        .arg(signer)
        .arg(testdata("chain/root-ca.pem"))
        .output()
        .unwrap()
}

#[test]
fn a_list_signed_under_a_ca_intermediate_gives_its_anchors() {
    for name in ["ca-intermediate.xml", "ca-intermediate.jwt"] {
        let out = trust_show(name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(shown["anchors"].as_array().unwrap().len(), 1, "{name}");
        assert_eq!(
            shown["anchors"][0]["sha256"],
            fingerprint_of_pem("chain/provider.pem"),
            "{name}"
        );
    }
}

#[test]
fn a_list_signed_under_an_intermediate_that_is_not_a_ca_is_refused_in_one_line() {
    for name in ["non-ca-intermediate.xml", "non-ca-intermediate.jwt"] {
        let out = trust_show(name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} must be refused");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        assert!(lines[0].contains(name), "{stderr}");
        assert!(
            lines[0].contains("signer's chain has an intermediate that is not a CA"),
            "{name}: {stderr}"
        );
    }
}
