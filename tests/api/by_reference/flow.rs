//! The whole way, as a wallet goes: the page's by-reference link, the request object
//! resolved and verified by `@openid4vc/openid4vp`, the answer encrypted by jwcrypto.

use super::*;
use crate::helpers::assert_error;
use crate::wallet::AuthorizationRequest;

async fn answered_with(enc: &str) {
    let c = RefCase::new().await;
    let resolved = resolve(&c.link(), &wallet_metadata(false, &["A128GCM", "A256GCM"]))
        .await
        .expect("the library resolves and verifies the request");
    assert_eq!(resolved.out["client"]["prefix"], "x509_hash");
    let jwe = encrypt(
        resolved.jwk(),
        "ECDH-ES",
        enc,
        &valid_plaintext(&c.issuer, &resolved),
    );
    let resp = c
        .post_answer(&resolved.text("response_uri"), &[("response", &jwe)])
        .await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body, json!({"redirect_uri": c.url}));
    assert_eq!(c.status().await, "verified");
}

#[tokio::test]
async fn a_ca_issued_request_resolves_in_openid4vp_and_an_a128gcm_answer_verifies_the_invite() {
    answered_with("A128GCM").await;
}

#[tokio::test]
async fn a_ca_issued_request_resolves_in_openid4vp_and_an_a256gcm_answer_verifies_the_invite() {
    answered_with("A256GCM").await;
}

#[tokio::test]
async fn the_link_names_an_x509_hash_client_id_and_a_request_uri_by_post_in_under_400_characters() {
    let c = RefCase::new().await;
    let link = c.link();
    assert!(link.starts_with("haip-vp://authorize?"), "{link}");
    assert!(link.len() < 400, "{} characters", link.len());
    let query: std::collections::HashMap<String, String> = url::Url::parse(&link)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(query.len(), 3, "{query:?}");
    let leaf_hash = URL_SAFE_NO_PAD.encode(sha256(&c.identity.leaf_der));
    assert_eq!(query["client_id"], format!("x509_hash:{leaf_hash}"));
    assert_eq!(query["request_uri_method"], "post");
    let prefix = format!("{}/request/", c.url);
    let request_id = query["request_uri"]
        .strip_prefix(&prefix)
        .expect("under the gateway URL");
    assert!(
        URL_SAFE_NO_PAD.decode(request_id).unwrap().len() >= 16,
        "≥ 128 bits"
    );
    // Not the state or nonce of the by-value link.
    let by_value = AuthorizationRequest::from_gateway_html(&c.html);
    assert_ne!(request_id, by_value.state);
    assert_ne!(request_id, by_value.nonce);
}

#[tokio::test]
async fn the_request_object_carries_every_claim_and_the_chain_without_its_root() {
    let c = RefCase::new().await;
    let resolved = resolve(&c.link(), &wallet_metadata(false, &["A128GCM", "A256GCM"]))
        .await
        .unwrap();
    let header = &resolved.out["header"];
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["typ"], "oauth-authz-req+jwt");
    let x5c = crate::helpers::x5c(header);
    assert_eq!(
        x5c,
        std::slice::from_ref(&c.identity.leaf_der),
        "the leaf; the self-signed root left out"
    );
    assert!(!x5c.contains(&c.identity.ca_der));
    let p = resolved.payload();
    assert_eq!(p["response_type"], "vp_token");
    assert_eq!(p["response_mode"], "direct_post.jwt");
    assert_eq!(p["response_uri"], format!("{}/openid4vp", c.url));
    assert_eq!(p["aud"], "https://self-issued.me/v2");
    let by_value = AuthorizationRequest::from_gateway_html(&c.html);
    assert_eq!(
        p["nonce"],
        by_value.nonce.as_str(),
        "the live request's nonce"
    );
    assert_ne!(p["state"], by_value.state.as_str(), "a state of its own");
    let (iat, exp) = (p["iat"].as_i64().unwrap(), p["exp"].as_i64().unwrap());
    assert_eq!(iat, T0);
    assert!(
        exp > iat && exp <= T0 + 600,
        "not after the request stops being live: {exp}"
    );
    let metadata = &p["client_metadata"];
    assert_eq!(
        metadata["encrypted_response_enc_values_supported"],
        json!(["A128GCM", "A256GCM"])
    );
    assert_eq!(
        metadata["vp_formats_supported"]["mso_mdoc"]["deviceauth_alg_values"],
        json!([-7])
    );
    let jwk = resolved.jwk();
    assert_eq!(
        (jwk["kty"].as_str(), jwk["crv"].as_str()),
        (Some("EC"), Some("P-256"))
    );
    assert_eq!(jwk["use"], "enc");
    assert_eq!(jwk["alg"], "ECDH-ES");
    assert!(jwk.get("d").is_none(), "never the private key");
    assert_eq!(resolved.credential_ids(), ["proof_of_age"]);
    assert!(p.get("wallet_nonce").is_none(), "0.4.6 sends none");
    assert!(p.get("verifier_info").is_none());
}

#[tokio::test]
async fn every_fetch_of_a_live_request_gets_the_same_request_and_key_and_a_get_too() {
    let c = RefCase::new().await;
    let first = resolve(&c.link(), &wallet_metadata(false, &["A256GCM"]))
        .await
        .unwrap();
    let second = resolve(&c.link(), &Value::Null).await.unwrap();
    for name in ["state", "nonce", "client_id", "response_uri"] {
        assert_eq!(first.text(name), second.text(name), "{name}");
    }
    assert_eq!(first.jwk(), second.jwk());
    assert_eq!(
        first.payload()["client_metadata"]["encrypted_response_enc_values_supported"],
        json!(["A256GCM"]),
        "only the values in common"
    );
    // A reload shows the same link.
    let html = crate::helpers::gateway_page(&c.app.client, &c.url).await;
    assert_eq!(link_with_id(&html, "signed-link").unwrap(), c.link());
    // GET, as the EUDI iOS library fetches.
    let request_uri = c.request_uri();
    let resp = c.app.client.get(&request_uri).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "application/oauth-authz-req+jwt"
    );
    let jws = resp.text().await.unwrap();
    let payload = crate::wallet::jws_payload(&jws);
    assert_eq!(payload["state"], first.text("state").as_str());
    assert_eq!(
        payload["client_metadata"]["encrypted_response_enc_values_supported"],
        json!(["A128GCM", "A256GCM"])
    );
}

#[tokio::test]
async fn wallet_metadata_as_one_json_field_is_heard_and_wallet_nonce_echoed() {
    let c = RefCase::new().await;
    let request_uri = c.request_uri();
    let metadata = json!({
        "issuer": "https://wallet.example",
        "authorization_encryption_enc_values_supported": ["A256GCM", "A128CBC-HS256"],
    });
    let resp = c
        .app
        .client
        .post(&request_uri)
        .form(&[
            ("wallet_metadata", metadata.to_string()),
            ("wallet_nonce", "wn-1".into()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let jws = resp.text().await.unwrap();
    let payload = crate::wallet::jws_payload(&jws);
    assert_eq!(payload["wallet_nonce"], "wn-1");
    assert_eq!(payload["aud"], "https://wallet.example");
    assert_eq!(
        payload["client_metadata"]["encrypted_response_enc_values_supported"],
        json!(["A256GCM"])
    );
    let _ = assert_error; // (refusals.rs uses it)
}

#[tokio::test]
async fn verifier_info_goes_verbatim_into_the_request_object_and_the_dc_api_request() {
    let info = json!([{"format": "registration_cert", "data": "eyJhbGciOiJFUzI1NiJ9.e30.c2ln", "credential_ids": ["proof_of_age"]}]);
    let issuer = TestIssuer::new(T0);
    let identity = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let signer = identity.signer().with_verifier_info(info.clone());
    let app = crate::helpers::spawn_signing_app(&issuer, &identity, |s| {
        s.dc_api_signer = Some(signer);
    })
    .await;
    let c = RefCase::on(issuer, identity, app, SiteOptions::default()).await;
    let resolved = resolve(&c.link(), &Value::Null).await.unwrap();
    assert_eq!(resolved.payload()["verifier_info"], info);
    let page = crate::wallet::DcApiPage::from_gateway_html(&c.html);
    assert_eq!(page.r1().params["verifier_info"], info);
}
