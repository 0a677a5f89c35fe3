//! Each refusal of a request by reference on its own: what the wallet sends wrong, and
//! the exact answer. The invite stays pending after every one.

use super::*;
use crate::helpers::assert_error;

/// What a wallet posts to the response URI in place of the valid answer.
enum Wrong {
    /// The valid answer's `state` and `vp_token` as plain form fields.
    Unencrypted,
    /// The valid answer encrypted by jwcrypto with this `alg` (see `encrypt.py`) and `enc`.
    Jwe(&'static str, &'static str),
    /// The valid answer's JWE with its epk moved off the curve (x kept, y + 1): the
    /// invalid-curve attack, which a verifier that skips the point check would multiply
    /// by its key.
    EpkOffCurve,
    /// A JWE of an answer whose device signature is over a transcript without the
    /// key's thumbprint.
    NoThumbprint,
}

impl Wrong {
    fn fields(&self, c: &RefCase, r: &Resolved) -> Vec<(&'static str, String)> {
        let valid = || valid_plaintext(&c.issuer, r);
        match self {
            Wrong::Unencrypted => {
                let plaintext: Value = serde_json::from_str(&valid()).unwrap();
                vec![
                    ("state", r.text("state")),
                    ("vp_token", plaintext["vp_token"].to_string()),
                ]
            }
            Wrong::Jwe(alg, enc) => vec![("response", encrypt(r.jwk(), alg, enc, &valid()))],
            Wrong::EpkOffCurve => {
                let jwe = encrypt(r.jwk(), "ECDH-ES", "A128GCM", &valid());
                vec![("response", with_epk_off_curve(&jwe))]
            }
            Wrong::NoThumbprint => {
                let claim = "age_over_18";
                let without = transcript(r, None);
                let p = plaintext(&c.issuer, r, without, &Presentation::for_claim(claim, T0));
                vec![("response", encrypt(r.jwk(), "ECDH-ES", "A128GCM", &p))]
            }
        }
    }
}

/// `jwe` with its header's `epk.y` changed in the last bit.
fn with_epk_off_curve(jwe: &str) -> String {
    let parts: Vec<&str> = jwe.split('.').collect();
    let mut header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    let mut y = URL_SAFE_NO_PAD
        .decode(header["epk"]["y"].as_str().unwrap())
        .unwrap();
    let last = y.len() - 1;
    y[last] ^= 1;
    header["epk"]["y"] = json!(URL_SAFE_NO_PAD.encode(&y));
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        parts[1..].join(".")
    )
}

/// A case whose request the library has resolved.
async fn resolved_case() -> (RefCase, Resolved) {
    let c = RefCase::new().await;
    let resolved = resolve(&c.link(), &wallet_metadata(false, &["A128GCM", "A256GCM"]))
        .await
        .expect("resolves");
    (c, resolved)
}

/// Resolves a fresh case's request, posts the `wrong` answer, and expects exactly
/// `{"error": code, "message": message}` with `status`; the invite stays pending.
async fn refused(wrong: Wrong, status: u16, code: u32, message: &str) {
    let (c, r) = resolved_case().await;
    let fields = wrong.fields(&c, &r);
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = c.post_answer(&r.text("response_uri"), &fields).await;
    let body = assert_error(resp, status, code).await;
    assert_eq!(body["message"], message, "{body}");
    assert_eq!(c.status().await, "pending");
}

/// Posts `metadata` as `wallet_metadata` to a fresh case's request URI (each one in turn)
/// and expects `status` and exactly `body`.
async fn metadata_refused(metadata: &[&str], status: u16, body: Value) {
    let c = RefCase::new().await;
    let uri = c.request_uri();
    for sent in metadata {
        let resp = c
            .app
            .client
            .post(&uri)
            .form(&[("wallet_metadata", sent)])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), status, "{sent:.60}");
        assert_eq!(resp.headers()["content-type"], "application/json");
        assert_eq!(resp.json::<Value>().await.unwrap(), body, "{sent:.60}");
    }
}

/// One test a refusal, named as its rule: `rule: the check;`.
macro_rules! refusals {
    ($($rule:ident: $check:expr;)*) => {
        $(
            #[tokio::test]
            async fn $rule() {
                $check.await;
            }
        )*
    };
}

refusals! {
    an_unencrypted_answer_to_a_request_by_reference_is_refused: refused(Wrong::Unencrypted,
        400, 40022, "presentation refused: the response is not encrypted (a request by reference is answered with direct_post.jwt: a JWE)");
    a_jwe_to_another_key_is_refused: refused(Wrong::Jwe("other-key", "A128GCM"),
        400, 40022, "presentation refused: JWE does not decrypt with this request's key (authentication tag mismatch)");
    a_jwe_with_alg_dir_is_refused: refused(Wrong::Jwe("dir", "A128GCM"),
        400, 40022, "presentation refused: JWE alg is not ECDH-ES");
    a_jwe_with_alg_rsa_oaep_is_refused: refused(Wrong::Jwe("RSA-OAEP", "A128GCM"),
        400, 40022, "presentation refused: JWE alg is not ECDH-ES");
    a_jwe_with_enc_a128cbc_hs256_is_refused: refused(Wrong::Jwe("ECDH-ES", "A128CBC-HS256"),
        400, 40022, "presentation refused: JWE enc is not one the request offered");
    an_ephemeral_key_not_on_p256_is_refused_before_any_key_agreement: refused(Wrong::EpkOffCurve,
        400, 40022, "presentation refused: JWE epk is not a point on P-256");
    a_transcript_without_the_key_thumbprint_is_refused: refused(Wrong::NoThumbprint,
        400, 40010, "presentation refused: device signature does not match this request");
    wallet_metadata_that_is_not_a_json_object_is_an_invalid_request: metadata_refused(
        &["[\"mso_mdoc\"]", "not json", "42"],
        400, json!({"error": "invalid_request", "error_description": "wallet_metadata is not a JSON object"}));
    wallet_metadata_with_no_encryption_in_common_is_an_invalid_request: metadata_refused(
        &[&json!({"authorization_encryption_enc_values_supported": ["A128CBC-HS256"]}).to_string()],
        400, json!({"error": "invalid_request", "error_description":
            "the wallet supports none of the response encryption methods offered (A128GCM, A256GCM)"}));
    wallet_metadata_over_64_kib_is_too_large: metadata_refused(
        &[&json!({"padding": "x".repeat(64 * 1024)}).to_string()],
        413, json!({"error": 41301, "message": "request body is larger than 65536 bytes"}));
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
    let known = c.request_uri();
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
async fn a_request_past_its_10_minutes_is_not_found_and_an_expired_invite_is_a_conflict() {
    let c = RefCase::new().await;
    let uri = c.request_uri();
    c.app.clock.advance(9 * 60 + 59);
    assert_eq!(c.app.client.get(&uri).send().await.unwrap().status(), 200);
    c.app.clock.advance(1);
    assert_error(c.app.client.get(&uri).send().await.unwrap(), 404, 40404).await;
    c.app.clock.advance(86_400);
    assert_error(c.app.client.get(&uri).send().await.unwrap(), 409, 40901).await;
}
