//! docs/evidence.md#receipts: each verification yields a signed receipt with exactly the listed
//! members, served to its site, carried by the webhook, checkable against the public key
//! set (also by an independent JOSE implementation), kept checkable across key rotation,
//! and erased with its invite.

use crate::eu_av::{answer, eu_av_app, invite_with_request};
use crate::helpers::{
    agegate, assert_error, poll, spawn_app, spawn_app_with, SiteOptions, TestApp, T0,
};
use crate::wallet::{Presentation, TestIssuer};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The receipt's header and payload, decoded (no check of the signature).
pub fn decode(receipt: &str) -> (Value, Value) {
    let mut parts = receipt.split('.');
    let mut part = || -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap()).unwrap()
    };
    (part(), part())
}

pub async fn receipt_of(app: &TestApp, site: &crate::helpers::TestSite, id: &str) -> String {
    let resp = app.receipt(site, id).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
    body["receipt"].as_str().unwrap().to_owned()
}

pub async fn jwks(app: &TestApp) -> Value {
    let resp = app
        .client
        .get(app.url("/.well-known/jwks.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    resp.json().await.unwrap()
}

/// Runs the command line on the app's database, off the runtime's thread (the command
/// may call the app itself).
pub async fn cli(app: &TestApp, args: &[&str]) -> (i32, String, String) {
    let mut cmd = agegate();
    cmd.arg("--database-url").arg(&app.db_url).args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

#[tokio::test]
async fn a_reported_verification_yields_a_receipt_with_exactly_the_listed_members() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app
        .new_invite_id(&site, Some(json!({"customId": "user-42"})))
        .await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let receipt = receipt_of(&app, &site, &id).await;
    let (header, payload) = decode(&receipt);
    let keys = jwks(&app).await;
    assert_eq!(keys["keys"].as_array().unwrap().len(), 1, "{keys}");
    let key = &keys["keys"][0];
    assert_eq!(
        header,
        json!({"alg": "ES256", "typ": "agegate-receipt+jwt", "kid": key["kid"]})
    );
    assert_eq!(
        (&key["kty"], &key["crv"], &key["use"], &key["alg"]),
        (
            &json!("EC"),
            &json!("P-256"),
            &json!("sig"),
            &json!("ES256")
        )
    );
    assert_eq!(
        payload,
        json!({
            "iss": app.base, "sub": id, "siteId": site.site_id, "customId": "user-42",
            "iat": T0, "method": "verifier", "minAge": 18, "docType": null,
            "issuerAnchor": null, "transport": null, "nonceHash": null,
        })
    );
    let members: Vec<&String> = payload.as_object().unwrap().keys().collect();
    assert_eq!(
        members.len(),
        11,
        "nothing beyond the listed members: {members:?}"
    );
}

#[tokio::test]
async fn only_a_verified_invite_of_the_site_has_a_receipt() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let other = app.create_site().await;
    let pending = app.new_invite_id(&site, None).await;
    assert_error(app.receipt(&site, &pending).await, 409, 40903).await;
    let cancelled = app.new_invite_id(&site, None).await;
    assert_eq!(app.cancel(&site, &cancelled).await.status(), 200);
    assert_error(app.receipt(&site, &cancelled).await, 409, 40903).await;
    let verified = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&verified).await.status(), 200);
    assert_error(app.receipt(&other, &verified).await, 404, 40401).await;
    assert_error(app.receipt(&site, "nope").await, 404, 40401).await;
    // An invite past its time without a sweep is expired too.
    app.clock.advance(86_400);
    assert_error(app.receipt(&site, &pending).await, 409, 40903).await;
    assert_eq!(app.receipt(&site, &verified).await.status(), 200);
}

#[tokio::test]
async fn an_eu_av_receipt_names_the_doctype_anchor_transport_and_nonce_hash() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    let id = invite["inviteId"].as_str().unwrap();
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    let receipt = receipt_of(&app, &site, id).await;
    let (_, payload) = decode(&receipt);
    println!("an EU AV receipt: {receipt}\npayload: {payload}");
    assert_eq!(
        payload,
        json!({
            "iss": app.base, "sub": id, "siteId": site.site_id, "customId": "visitor-7",
            "iat": T0, "method": "eu-av", "minAge": 18, "docType": "eu.europa.ec.av.1",
            "issuerAnchor": hex(&Sha256::digest(&issuer.ca_der)),
            "transport": "openid4vp",
            "nonceHash": hex(&Sha256::digest(req.nonce.as_bytes())),
            "credentialStatus": "none",
        })
    );
}

#[tokio::test]
async fn presentations_are_counted_by_kind_transport_and_outcome() {
    let issuer = TestIssuer::new(T0);
    let app = spawn_app_with(|s| {
        s.trust = crate::helpers::trusting(agegate::domain::Kind::EU_AV, &issuer.ca_pem);
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await;
    let (_, _, req) = invite_with_request(&app, SiteOptions::default()).await;
    let rogue = TestIssuer::new(T0);
    let refused = rogue.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &refused).await.status(), 400);
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    assert_eq!(answer(&app, &req, &vp).await.status(), 400, "single use");
    let metrics = app.metrics().await;
    for (outcome, n) in [("accepted", 1), ("untrusted_issuer", 1), ("not_live", 1)] {
        let line = format!(
            "agegate_presentations_total{{kind=\"eu-av\",transport=\"openid4vp\",outcome=\"{outcome}\"}} {n}"
        );
        assert!(metrics.contains(&line), "{line} in\n{metrics}");
    }
}

#[tokio::test]
async fn a_receipt_verifies_with_an_independent_jose_implementation() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let receipt = receipt_of(&app, &site, &id).await;
    let keys = jwks(&app).await.to_string();
    let run = |receipt: &str| jose_checked(&keys, receipt);
    let payload = run(&receipt).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(payload, decode(&receipt).1);
    let mut tampered = receipt.into_bytes();
    let i = tampered.len() / 2;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let out = run(&String::from_utf8(tampered).unwrap());
    assert!(out.is_err(), "a changed byte breaks it");
}

/// jwcrypto (Python, on OpenSSL through `cryptography`) verifies the compact JWS with the
/// JWK Set `keys` (JSON), refusing any algorithm but ES256; the payload, or why not.
pub fn jose_checked(keys: &str, receipt: &str) -> Result<Value, String> {
    let script = r#"
import json, sys
from jwcrypto import jwk, jws
keys = jwk.JWKSet.from_json(sys.argv[1])
token = jws.JWS()
token.deserialize(sys.argv[2])
kid = token.jose_header["kid"]
token.verify(keys.get_key(kid), alg="ES256")
print(token.payload.decode())
"#;
    let python = crate::schemathesis::venv().join("bin/python");
    let out = std::process::Command::new(&python)
        .args(["-c", script, keys, receipt])
        .output()
        .expect("the test venv's python (bash scripts/setup.sh)");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).expect("the payload is JSON"))
}

#[tokio::test]
async fn rotation_signs_with_the_new_key_and_old_receipts_still_verify() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let before = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&before).await.status(), 200);
    let old = receipt_of(&app, &site, &before).await;

    let (code, stdout, stderr) = cli(&app, &["receipt-key", "rotate", "--json"]).await;
    assert_eq!(code, 0, "{stderr}");
    let rotated: Value = serde_json::from_str(stdout.trim()).unwrap();
    let kid = rotated["kid"].as_str().unwrap();
    assert_eq!(rotated.as_object().unwrap().len(), 1);

    // The key set lists the new key (within its 5 s cache) before it signs, and still
    // holds the old one; within 10 s every verification is signed with the new key.
    let keys = poll(Duration::from_secs(10), || async {
        let keys = jwks(&app).await;
        (keys["keys"].as_array().unwrap().len() == 2).then_some(keys)
    })
    .await
    .expect("the new key listed within 10 s");
    let new = poll(Duration::from_secs(10), || async {
        let after = app.new_invite_id(&site, None).await;
        assert_eq!(app.verify(&after).await.status(), 200);
        let new = receipt_of(&app, &site, &after).await;
        (decode(&new).0["kid"] == kid).then_some(new)
    })
    .await
    .expect("signed with the new key within 10 s");
    assert_ne!(decode(&old).0["kid"], kid);
    let kids: Vec<&str> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert!(
        kids.contains(&kid) && kids.contains(&decode(&old).0["kid"].as_str().unwrap()),
        "{kids:?}"
    );
    let url = app.url("/.well-known/jwks.json");
    for receipt in [&old, &new] {
        let (code, stdout, stderr) = cli(
            &app,
            &["receipt", "verify", receipt, "--jwks", &url, "--json"],
        )
        .await;
        assert_eq!(code, 0, "{stderr}");
        let printed: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(printed, decode(receipt).1);
    }
}

#[tokio::test]
async fn receipt_verify_takes_a_file_or_the_database_and_refuses_a_changed_receipt() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let receipt = receipt_of(&app, &site, &id).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("receipt.jws");
    std::fs::write(&file, format!("{receipt}\n")).unwrap();
    let keys = dir.path().join("jwks.json");
    std::fs::write(&keys, jwks(&app).await.to_string()).unwrap();
    let (code, stdout, stderr) = cli(&app, &["receipt", "verify", file.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("holds") && stdout.contains(&id), "{stdout}");
    let (code, _, stderr) = cli(
        &app,
        &[
            "receipt",
            "verify",
            &receipt,
            "--jwks",
            keys.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    let mut changed = decode(&receipt).1;
    changed["minAge"] = json!(13);
    let parts: Vec<&str> = receipt.split('.').collect();
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(changed.to_string()),
        parts[2]
    );
    let (code, stdout, stderr) = cli(&app, &["receipt", "verify", &forged]).await;
    assert_ne!(code, 0);
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("does not hold"), "{stderr}");
}

#[tokio::test]
async fn erasing_an_invite_erases_its_receipt_and_the_one_handed_out_still_verifies() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let receipt = receipt_of(&app, &site, &id).await;
    assert_eq!(app.erase(&site, &id).await.status(), 204);
    assert_error(app.receipt(&site, &id).await, 404, 40401).await;
    let (code, _, stderr) = cli(&app, &["receipt", "verify", &receipt]).await;
    assert_eq!(code, 0, "{stderr}");
}

#[tokio::test]
async fn the_statement_is_generated_from_the_configuration_and_the_database() {
    let issuer = TestIssuer::new(T0);
    let app = spawn_app_with(|_| {}).await;
    let site = app.create_site().await;
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("anchors.pem");
    std::fs::write(&anchors, &issuer.ca_pem).unwrap();
    let kid = jwks(&app).await["keys"][0]["kid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, stdout, stderr) = cli(
        &app,
        &[
            "statement",
            "--public-url",
            "https://age.example",
            "--eu-av-trust-anchors",
            anchors.to_str().unwrap(),
            "--retention",
            "30d",
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "# Age-assurance practice statement",
        "https://age.example/.well-known/jwks.json",
        "**EU Age Verification app (`eu-av`)**: on",
        &hex(&Sha256::digest(&issuer.ca_der)),
        &site.site_id,
        "| 18 |",
        "Retention: 30d",
        &kid,
    ] {
        assert!(stdout.contains(expected), "{expected:?} in\n{stdout}");
    }
    // docs/credential-status.md: the mode in force, `check` by default.
    assert!(
        stdout.contains("## Credential status\n\nMode `check`: "),
        "{stdout}"
    );
    let (code, stdout, _) = cli(
        &app,
        &[
            "statement",
            "--eu-av-trust-anchors",
            anchors.to_str().unwrap(),
            "--credential-status",
            "off",
        ],
    )
    .await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Mode `off`: credential status lists are not consulted"),
        "{stdout}"
    );
    let (code, stdout, _) = cli(&app, &["statement", "--site", &site.site_id]).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("`eu-av`)**: off"), "{stdout}");
    let (code, _, stderr) = cli(
        &app,
        &[
            "statement",
            "--site",
            "6f9619ff-8b86-d011-b42d-00cf4fc964ff",
        ],
    )
    .await;
    assert_ne!(code, 0);
    assert!(stderr.contains("no site"), "{stderr}");
}
