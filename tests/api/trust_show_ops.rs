//! `agegate trust show` against the real binary (docs/trust.md#trust-show-reloading-and-expiry):
//! every anchor by kind with its subject, notAfter, fingerprint and source, one expiring
//! soon flagged, text and JSON, and the same environment variables as `serve`.

use crate::kinds_ops::*;
use crate::wallet::{rfc3339, TestIssuer, VicalEntry, VicalKnobs, VicalPublisher};
use std::path::PathBuf;

/// Anchor files of every kind: eu-av and eudi-pid one CA each; mdl a state's CA and a
/// certificate that expires in 10 days.
pub(crate) struct AnchorFiles {
    _dir: tempfile::TempDir,
    eu_av: PathBuf,
    pid: PathBuf,
    mdl: PathBuf,
    /// (der, kind, path) of each anchor, in file order.
    expected: Vec<(Vec<u8>, &'static str, PathBuf)>,
    /// The fingerprint of the one that expires within 30 days, and its notAfter.
    soon: (String, i64),
}

pub(crate) fn anchor_files(t: i64) -> AnchorFiles {
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
pub(crate) fn trust_show_lists_every_anchor_by_kind_with_subject_not_after_fingerprint_and_source_and_flags_one_expiring_within_30_days(
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
pub(crate) fn trust_show_takes_the_same_envs_as_serve() {
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
