//! Each refusal of a request by reference on its own: what the wallet sends wrong, and
//! the exact answer. The invite stays pending after every one.

use super::*;
use crate::helpers::assert_error;

/// A case whose request the library has resolved.
async fn resolved_case() -> (RefCase, Resolved) {
    let c = RefCase::new().await;
    let resolved = resolve(&c.link(), &wallet_metadata(false, &["A128GCM", "A256GCM"]))
        .await
        .expect("resolves");
    (c, resolved)
}

/// Posts `response` and expects 400 `code` with `says` in the message; still pending.
async fn refused(c: &RefCase, r: &Resolved, fields: &[(&str, &str)], code: u32, says: &str) {
    let resp = c.post_answer(&r.text("response_uri"), fields).await;
    let body = assert_error(resp, 400, code).await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(says), "{message} should say {says}");
    assert_eq!(c.status().await, "pending");
}

fn request_uri(link: &str) -> String {
    let uri = url::Url::parse(link).unwrap();
    uri.query_pairs()
        .find(|(k, _)| k == "request_uri")
        .unwrap()
        .1
        .into_owned()
}

#[tokio::test]
async fn an_unencrypted_answer_to_a_request_by_reference_is_refused() {
    let (c, r) = resolved_case().await;
    let plaintext: Value = serde_json::from_str(&valid_plaintext(&c.issuer, &r)).unwrap();
    let state = r.text("state");
    let vp_token = plaintext["vp_token"].to_string();
    refused(
        &c,
        &r,
        &[("state", &state), ("vp_token", &vp_token)],
        40022,
        "not encrypted",
    )
    .await;
}

#[tokio::test]
async fn a_jwe_to_another_key_is_refused() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(
        r.jwk(),
        "other-key",
        "A128GCM",
        &valid_plaintext(&c.issuer, &r),
    );
    refused(
        &c,
        &r,
        &[("response", &jwe)],
        40022,
        "does not decrypt with this request's key",
    )
    .await;
}

#[tokio::test]
async fn a_jwe_with_alg_dir_is_refused() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(r.jwk(), "dir", "A128GCM", &valid_plaintext(&c.issuer, &r));
    refused(&c, &r, &[("response", &jwe)], 40022, "alg is not ECDH-ES").await;
}

#[tokio::test]
async fn a_jwe_with_alg_rsa_oaep_is_refused() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(
        r.jwk(),
        "RSA-OAEP",
        "A128GCM",
        &valid_plaintext(&c.issuer, &r),
    );
    refused(&c, &r, &[("response", &jwe)], 40022, "alg is not ECDH-ES").await;
}

#[tokio::test]
async fn a_jwe_with_enc_a128cbc_hs256_is_refused() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(
        r.jwk(),
        "ECDH-ES",
        "A128CBC-HS256",
        &valid_plaintext(&c.issuer, &r),
    );
    refused(
        &c,
        &r,
        &[("response", &jwe)],
        40022,
        "enc is not one the request offered",
    )
    .await;
}

#[tokio::test]
async fn an_ephemeral_key_not_on_p256_is_refused_before_any_key_agreement() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(
        r.jwk(),
        "ECDH-ES",
        "A128GCM",
        &valid_plaintext(&c.issuer, &r),
    );
    // The invalid-curve attack: the same JWE with its epk moved off the curve (x kept,
    // y + 1), which a verifier that skips the point check would multiply by its key.
    let parts: Vec<&str> = jwe.split('.').collect();
    let mut header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    let mut y = URL_SAFE_NO_PAD
        .decode(header["epk"]["y"].as_str().unwrap())
        .unwrap();
    let last = y.len() - 1;
    y[last] ^= 1;
    header["epk"]["y"] = json!(URL_SAFE_NO_PAD.encode(&y));
    let forged = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        parts[1..].join(".")
    );
    refused(
        &c,
        &r,
        &[("response", &forged)],
        40022,
        "epk is not a point on P-256",
    )
    .await;
}

#[tokio::test]
async fn a_transcript_without_the_key_thumbprint_is_refused() {
    let (c, r) = resolved_case().await;
    let claim = "age_over_18";
    let without = transcript(&r, None);
    let plaintext = plaintext(&c.issuer, &r, without, &Presentation::for_claim(claim, T0));
    let jwe = encrypt(r.jwk(), "ECDH-ES", "A128GCM", &plaintext);
    refused(&c, &r, &[("response", &jwe)], 40010, "device signature").await;
}

#[tokio::test]
async fn a_replayed_answer_is_refused() {
    let (c, r) = resolved_case().await;
    let jwe = encrypt(
        r.jwk(),
        "ECDH-ES",
        "A256GCM",
        &valid_plaintext(&c.issuer, &r),
    );
    let first = c
        .post_answer(&r.text("response_uri"), &[("response", &jwe)])
        .await;
    assert_eq!(first.status(), 200);
    let again = c
        .post_answer(&r.text("response_uri"), &[("response", &jwe)])
        .await;
    assert_error(again, 400, 40011).await;
    assert_eq!(c.status().await, "verified");
}

#[tokio::test]
async fn an_unknown_request_id_is_not_found_and_so_is_a_request_no_longer_live() {
    let c = RefCase::new().await;
    let known = request_uri(&c.link());
    let unknown = format!("{}/request/{}", c.url, "A".repeat(22));
    for resp in [
        c.app.client.get(&unknown).send().await.unwrap(),
        c.app
            .client
            .post(&unknown)
            .form(&[("wallet_nonce", "x")])
            .send()
            .await
            .unwrap(),
    ] {
        assert_error(resp, 404, 40404).await;
    }
    assert_eq!(c.app.client.get(&known).send().await.unwrap().status(), 200);
    // Answered, the request is no longer live.
    let r = resolve(&c.link(), &Value::Null).await.unwrap();
    let jwe = encrypt(
        r.jwk(),
        "ECDH-ES",
        "A128GCM",
        &valid_plaintext(&c.issuer, &r),
    );
    assert_eq!(
        c.post_answer(&r.text("response_uri"), &[("response", &jwe)])
            .await
            .status(),
        200
    );
    assert_error(c.app.client.get(&known).send().await.unwrap(), 404, 40404).await;
    let other_invite = format!(
        "{}/gateway/inv_nosuchinvite00000000000/request/x",
        c.app.base
    );
    assert_eq!(
        c.app
            .client
            .get(&other_invite)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

#[tokio::test]
async fn wallet_metadata_that_is_not_a_json_object_is_an_invalid_request() {
    let c = RefCase::new().await;
    let uri = request_uri(&c.link());
    for bad in ["[\"mso_mdoc\"]", "not json", "42"] {
        let resp = c
            .app
            .client
            .post(&uri)
            .form(&[("wallet_metadata", bad)])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{bad}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "invalid_request", "{body}");
        assert!(body["error_description"]
            .as_str()
            .unwrap()
            .contains("not a JSON object"));
    }
}

#[tokio::test]
async fn wallet_metadata_with_no_encryption_in_common_is_an_invalid_request() {
    let c = RefCase::new().await;
    let uri = request_uri(&c.link());
    let metadata = json!({"authorization_encryption_enc_values_supported": ["A128CBC-HS256"]});
    let resp = c
        .app
        .client
        .post(&uri)
        .form(&[("wallet_metadata", metadata.to_string())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request", "{body}");
}

#[tokio::test]
async fn wallet_metadata_over_64_kib_is_too_large() {
    let c = RefCase::new().await;
    let uri = request_uri(&c.link());
    let big = json!({"padding": "x".repeat(64 * 1024)}).to_string();
    let resp = c
        .app
        .client
        .post(&uri)
        .form(&[("wallet_metadata", big)])
        .send()
        .await
        .unwrap();
    assert_error(resp, 413, 41301).await;
}

#[tokio::test]
async fn a_request_past_its_10_minutes_is_not_found_and_an_expired_invite_is_a_conflict() {
    let c = RefCase::new().await;
    let uri = request_uri(&c.link());
    c.app.clock.advance(9 * 60 + 59);
    assert_eq!(c.app.client.get(&uri).send().await.unwrap().status(), 200);
    c.app.clock.advance(1);
    assert_error(c.app.client.get(&uri).send().await.unwrap(), 404, 40404).await;
    c.app.clock.advance(86_400);
    assert_error(c.app.client.get(&uri).send().await.unwrap(), 409, 40901).await;
}
