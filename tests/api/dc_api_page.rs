//! The pending page's side of the Digital Credentials API (docs/dc-api.md#the-pages-side): the request it carries for its script (R1
//! and R2 of the live request), the same on every reload and every node; the status the
//! script polls; the page without a wallet method; compression.

use crate::dc_api::{dc_page, post_dc_api, DcCase};
use crate::eu_av::eu_av_app;
use crate::helpers::{assert_error, spawn_beside, T0};
use crate::wallet::{jwk_thumbprint, AuthorizationRequest, TestIssuer};
use agegate::domain::{InviteId, MinAge, PresentationRequest};
use serde_json::{json, Value};

#[tokio::test]
async fn the_pending_page_carries_r1_and_r2_of_the_live_request_and_a_hidden_button() {
    let c = DcCase::new().await;
    let resp = c.app.client.get(&c.url).send().await.unwrap();
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    let html = resp.text().await.unwrap();
    let link = AuthorizationRequest::from_gateway_html(&html);
    assert_eq!(c.page.state, link.state, "the live request's state");
    assert_eq!(c.page.requests().len(), 2);

    // R1: the link's nonce and DCQL query, the link's client_metadata plus the key.
    let r1 = &c.page.requests()[0];
    assert_eq!(r1["protocol"], "openid4vp-v1-unsigned");
    let data = r1["data"].as_object().unwrap();
    let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "client_metadata",
            "dcql_query",
            "nonce",
            "response_mode",
            "response_type"
        ],
        "no client_id, no expected_origins"
    );
    assert_eq!(data["response_type"], "vp_token");
    assert_eq!(data["response_mode"], "dc_api.jwt");
    assert_eq!(data["nonce"], link.nonce.as_str());
    assert_eq!(data["dcql_query"], link.dcql_query);
    let jwk = &data["client_metadata"]["jwks"]["keys"][0];
    let mut metadata = data["client_metadata"].clone();
    let obj = metadata.as_object_mut().unwrap();
    assert_eq!(
        obj.remove("encrypted_response_enc_values_supported"),
        Some(json!(["A128GCM"]))
    );
    assert!(obj.remove("jwks").is_some());
    assert_eq!(metadata, link.client_metadata);
    assert_eq!((&jwk["kty"], &jwk["crv"]), (&json!("EC"), &json!("P-256")));
    assert_eq!(
        (&jwk["use"], &jwk["alg"]),
        (&json!("enc"), &json!("ECDH-ES"))
    );
    assert!(
        jwk["kid"].is_string() && jwk.get("d").is_none(),
        "public only: {jwk}"
    );

    // R2: one docRequest for the age claim, not retained; the same key as a COSE_Key.
    let r2 = c.page.r2();
    let dr = &r2.device_request;
    assert_eq!(
        crate::wallet::cbor_get(dr, "version").as_text(),
        Some("1.1")
    );
    assert_eq!(
        crate::wallet::cbor_get(dr, "docRequests")
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(r2.doc_type, "eu.europa.ec.av.1");
    assert_eq!(r2.requested_claim, "age_over_18");
    assert!(r2.nonce.len() >= 16, "encryptionInfo nonce of ≥ 16 bytes");
    assert_eq!(r2.recipient, c.page.r1().recipient, "one key for both");
    let thumbprint = jwk_thumbprint(jwk);
    assert_eq!(
        jwk["kid"].as_str().map(str::len),
        Some(43),
        "kid {} (thumbprint {thumbprint:02x?})",
        jwk["kid"]
    );

    // The button, hidden until the script finds the API; the script allowed by hash.
    assert!(
        html.contains(r#"<section class="wallet" id="dc-api" hidden"#),
        "{html}"
    );
    assert!(html.contains(r#"<button type="button" id="dc-api-button""#));
    assert!(html.contains(&format!(r#"data-endpoint="{}/dc-api""#, c.url)));
    let script = between(&html, "<script>", "</script>");
    let hash = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        crate::wallet::sha256(script.as_bytes()),
    );
    assert!(
        csp.contains(&format!("script-src 'sha256-{hash}'; connect-src 'self';")),
        "{csp}"
    );
    assert!(script.contains("navigator.credentials.get"));
    assert!(
        !html.contains("<script src"),
        "nothing loaded from elsewhere"
    );
}

#[tokio::test]
async fn every_reload_and_every_node_shows_the_same_request_and_a_new_key_after_10_minutes() {
    let c = DcCase::new().await;
    let other = spawn_beside(&c.app, |s| s.trust = c.app_trust()).await;
    let again = dc_page(&c.app, &c.url).await;
    let elsewhere = dc_page(&other, &c.url.replace(&c.app.base, &other.base)).await;
    assert_eq!(again.json, c.page.json, "byte for byte on a reload");
    // Another node has another origin here (its own port), so only R2's key and nonce
    // and R1's parameters can be compared.
    assert_eq!(elsewhere.state, c.page.state);
    assert_eq!(elsewhere.requests()[0], c.page.requests()[0]);
    assert_eq!(elsewhere.r2().encryption_info, c.page.r2().encryption_info);
    c.app.clock.advance(10 * 60);
    let fresh = dc_page(&c.app, &c.url).await;
    assert_ne!(fresh.state, c.page.state);
    assert_ne!(fresh.r1().recipient, c.page.r1().recipient, "a fresh key");
    assert_ne!(fresh.r2().nonce, c.page.r2().nonce);
}

/// A request an older release made (no DC API secrets) is given secrets the first time
/// a page shows it, keeps its state and nonce (a wallet that read its link still answers
/// it), and keeps those secrets on every later reload.
#[tokio::test]
async fn a_request_an_older_release_made_gets_its_secrets_once_and_keeps_its_state() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let id = InviteId::parse(invite["inviteId"].as_str().unwrap()).unwrap();
    let url = invite["url"].as_str().unwrap();
    let old = PresentationRequest {
        dc_api: None,
        ..PresentationRequest::new(MinAge::DEFAULT, T0)
    };
    app.store.open_request(&id, old.clone()).await.unwrap();
    let page = dc_page(&app, url).await;
    assert_eq!(page.state, old.state);
    assert_eq!(page.r1().nonce, old.nonce);
    let again = dc_page(&app, url).await;
    assert_eq!(again.json, page.json, "the same secrets on every reload");
    let stored = app.store.request(&id, &old.state).await.unwrap().unwrap();
    assert!(stored.dc_api.is_some());
}

#[tokio::test]
async fn without_a_wallet_method_the_page_has_no_dc_api_and_the_endpoint_is_404() {
    let app = crate::helpers::spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let resp = app.client.get(url).send().await.unwrap();
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    let html = resp.text().await.unwrap();
    assert!(!csp.contains("script-src"), "{csp}");
    assert!(
        !html.contains("<script") && !html.contains("dc-api"),
        "{html}"
    );
    assert!(html.contains(r#"<meta http-equiv="refresh" content="5">"#));
    let body = json!({"state": "s", "protocol": "org-iso-mdoc", "data": {}});
    assert_error(post_dc_api(&app, url, &body).await, 404, 40403).await;
}

#[tokio::test]
async fn the_status_the_page_polls_says_pending_then_verified_and_404_for_no_invite() {
    let c = DcCase::new().await;
    let status = |url: String| {
        let client = c.app.client.clone();
        async move { client.get(url).send().await.unwrap() }
    };
    let resp = status(format!("{}/status", c.url)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"status": "pending"})
    );
    assert_eq!(c.app.verify(&c.invite_id).await.status(), 200);
    let resp = status(format!("{}/status", c.url)).await;
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"status": "verified"})
    );
    let unknown = format!("{}/gateway/AAAAAAAAAAAAAAAAAAAAAA/status", c.app.base);
    assert_error(status(unknown).await, 404, 40401).await;
}

#[tokio::test]
async fn pages_and_json_are_compressed_for_clients_that_accept_it() {
    let c = DcCase::new().await;
    let plain = c.app.client.get(&c.url).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    // Uncompressed because not asked, and saying so to caches.
    assert_eq!(plain.headers()["vary"], "accept-encoding");
    let plain_len = plain.bytes().await.unwrap().len();
    for encoding in ["gzip", "br"] {
        let resp = c
            .app
            .client
            .get(&c.url)
            .header("accept-encoding", encoding)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.headers()["content-encoding"], encoding);
        assert!(resp.headers()["vary"]
            .to_str()
            .unwrap()
            .contains("accept-encoding"));
        let sent = resp.bytes().await.unwrap().len();
        eprintln!("pending page: {plain_len} bytes, {sent} with {encoding}");
        assert!(sent * 2 < plain_len, "{encoding}: {sent} of {plain_len}");
    }
    let json = c
        .app
        .client
        .get(c.app.url("/v1/openapi.json"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(json.headers()["content-encoding"], "gzip");
    let json = c
        .app
        .client
        .get(c.app.url("/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert!(json.headers().get("content-encoding").is_none());
    assert_eq!(json.headers()["vary"], "accept-encoding");
    assert!(json.json::<serde_json::Value>().await.unwrap()["paths"].is_object());
}

/// The text between the first `open` and the next `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).expect(open) + open.len();
    let end = start + html[start..].find(close).expect(close);
    &html[start..end]
}
