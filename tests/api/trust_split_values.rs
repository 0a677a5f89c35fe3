//! What is read from a list is exactly what its signature covers
//! (docs/trust.md#what-agegate-checks-in-a-trusted-list), against the real binary: each
//! value agegate reads (sequence, NextUpdate, service type, service status, certificate)
//! split by a comment, a processing instruction or a CDATA section, in lists xmlsec1
//! signed and verified after the split (src/trustlist/testdata/split). `trust show`
//! reads a comment or CDATA split as the signed text and refuses a processing
//! instruction naming the value; `serve` stops on the refused one.

use crate::helpers::{agegate, serve_outcome, temp_db};
use crate::trust_lists::{fingerprint_of_pem, list_args, testdata};
use serde_json::Value;

const VALUES: [(&str, &str); 5] = [
    ("sequence", "TSLSequenceNumber is missing or malformed"),
    ("next-update", "NextUpdate is missing or malformed"),
    (
        "service-type",
        "ServiceTypeIdentifier is missing or malformed",
    ),
    ("service-status", "ServiceStatus is missing or malformed"),
    (
        "certificate",
        "certificate 1 of a recognised service is not a certificate",
    ),
];

fn trust_show(list: &str) -> std::process::Output {
    let (_db_dir, db) = temp_db();
    agegate()
        .arg("--database-url")
        .arg(&db.url)
        .args(["trust", "show", "--json"])
        .args(list_args(
            testdata(&format!("split/{list}.xml")).display(),
            "split/signer-ca.pem",
        ))
        .output()
        .unwrap()
}

#[test]
fn a_value_split_by_a_comment_or_cdata_reads_as_the_signed_text() {
    for (value, _) in VALUES {
        for how in ["comment", "cdata"] {
            let name = format!("{value}-{how}");
            let out = trust_show(&name);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{name}: {stderr}");
            let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
            let source = &shown["sources"][0];
            assert_eq!(source["sequence"], 17, "{name}");
            assert_eq!(source["nextUpdate"], "2099-01-01T00:00:00Z", "{name}");
            assert_eq!(source["anchors"], 1, "{name}");
            assert_eq!(
                shown["anchors"][0]["sha256"],
                fingerprint_of_pem("split/provider.pem"),
                "{name}"
            );
        }
    }
}

#[test]
fn a_value_split_by_a_processing_instruction_is_refused_naming_the_value() {
    for (value, why) in VALUES {
        let name = format!("{value}-pi");
        let out = trust_show(&name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} must be refused");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        assert!(lines[0].contains(&format!("{name}.xml")), "{stderr}");
        assert!(lines[0].contains(why), "{name}: {stderr}");
    }
}

#[test]
fn serve_stops_on_a_sequence_number_split_by_a_processing_instruction() {
    let args: Vec<std::ffi::OsString> = list_args(
        testdata("split/sequence-pi.xml").display(),
        "split/signer-ca.pem",
    )
    .into_iter()
    .map(Into::into)
    .collect();
    let (started, stderr) = serve_outcome(&args, &[]);
    assert!(!started, "serve must not start");
    assert!(
        stderr.contains("TSLSequenceNumber is missing or malformed"),
        "{stderr}"
    );
}
