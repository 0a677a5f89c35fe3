//! Interface §11 end to end over HTTP: the pending page carries the Digital Credentials
//! API request (R1 and R2) for its script, the test wallet answers either through the
//! real endpoint, and the invite moves on exactly as with §7's link. The refusals are in
//! `dc_api_rules.rs`, signed mode in `dc_api_signed.rs`, the real browser in
//! `browser_dc_api.rs`.

use crate::eu_av::{answer as link_answer, eu_av_app, request_on_page};
use crate::helpers::{assert_error, spawn_beside, SiteOptions, TestApp, TestSite, T0};
use crate::receiver::{signed_by, TestReceiver};
use crate::wallet::{
    jwk_thumbprint, AuthorizationRequest, DcAnswer, DcApiPage, Presentation, TestIssuer,
};
use serde_json::{json, Value};
use std::time::Duration;

/// An invite of a site on a server that trusts `issuer`, and its page's DC API request.
pub struct DcCase {
    pub issuer: TestIssuer,
    pub app: TestApp,
    pub site: TestSite,
    pub invite_id: String,
    pub url: String,
    pub page: DcApiPage,
}

impl DcCase {
    pub async fn new() -> Self {
        Self::with(SiteOptions::default()).await
    }

    pub async fn with(options: SiteOptions<'_>) -> Self {
        let issuer = TestIssuer::new(T0);
        let app = eu_av_app(&issuer).await;
        Self::on(issuer, app, options).await
    }

    pub async fn on(issuer: TestIssuer, app: TestApp, options: SiteOptions<'_>) -> Self {
        let site = app.create_site_with(options).await;
        let invite = app
            .new_invite(&site, Some(json!({"customId": "c-9"})))
            .await;
        let url = invite["url"].as_str().unwrap().to_owned();
        let page = dc_page(&app, &url).await;
        DcCase {
            invite_id: invite["inviteId"].as_str().unwrap().to_owned(),
            issuer,
            app,
            site,
            url,
            page,
        }
    }

    /// The origin of the server's public URL, as a browser writes it.
    pub fn origin(&self) -> String {
        self.app.base.clone()
    }

    pub fn valid(&self) -> Presentation {
        Presentation::for_claim(&self.page.r1().requested_claim, T0)
    }

    /// The page script's POST body answering R1 with `p` and knobs `a`.
    pub fn r1_body(&self, p: &Presentation, a: &DcAnswer) -> Value {
        let r1 = self.page.r1();
        let data = self.issuer.dc_openid4vp_data(&r1, &self.origin(), p, a);
        json!({"state": self.page.state, "protocol": r1.protocol, "data": data})
    }

    /// The page script's POST body answering R2.
    pub fn r2_body(&self, p: &Presentation, a: &DcAnswer) -> Value {
        let data = self
            .issuer
            .dc_annex_c_data(&self.page.r2(), &self.origin(), p, a);
        json!({"state": self.page.state, "protocol": "org-iso-mdoc", "data": data})
    }

    pub async fn post(&self, body: &Value) -> reqwest::Response {
        post_dc_api(&self.app, &self.url, body).await
    }

    pub async fn status(&self) -> String {
        let record = self.app.status_record(&self.site, &self.invite_id).await;
        record["status"].as_str().unwrap().to_owned()
    }
}

/// Opens a gateway page and reads its DC API request.
pub async fn dc_page(app: &TestApp, url: &str) -> DcApiPage {
    let resp = app.client.get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    DcApiPage::from_gateway_html(&resp.text().await.unwrap())
}

/// What the page's script does: POST JSON to `{gateway url}/dc-api`.
pub async fn post_dc_api(app: &TestApp, gateway_url: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(format!("{gateway_url}/dc-api"))
        .json(body)
        .send()
        .await
        .unwrap()
}

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

    // R1: the link's nonce and DCQL query, section 7's client_metadata plus the key.
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
        Some("1.0")
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
    let other = spawn_beside(&c.app, |s| s.eu_av = c.app_eu_av()).await;
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

impl DcCase {
    fn app_eu_av(&self) -> Option<agegate::config::EuAv> {
        let anchors = agegate::mdoc::TrustAnchors::from_pem(&self.issuer.ca_pem).unwrap();
        Some(agegate::config::EuAv {
            trust_anchors: std::sync::Arc::new(anchors),
            wallet_scheme: "av".into(),
        })
    }
}

async fn verified_by(protocol: &str) {
    let receiver = TestReceiver::start().await;
    let options = SiteOptions {
        redirect_url: Some("https://shop.example/back"),
        webhook_url: Some(&receiver.url),
        ..Default::default()
    };
    let c = DcCase::with(options).await;
    let body = match protocol {
        "openid4vp" => c.r1_body(&c.valid(), &DcAnswer::default()),
        _ => c.r2_body(&c.valid(), &DcAnswer::default()),
    };
    let resp = c.post(&body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(answer, json!({"redirect_uri": c.url}));
    assert_eq!(c.status().await, "verified");
    let page = c.app.client.get(&c.url).send().await.unwrap();
    assert_eq!(page.status(), 303);
    assert_eq!(
        page.headers()["location"],
        format!("https://shop.example/back?vs={}&cid=c-9", c.invite_id)
    );
    let got = receiver.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(got.len(), 1);
    assert!(signed_by(&c.site.webhook_secret, &got[0]));
    let hook = got[0].json();
    assert_eq!(hook["type"], "invite.verified");
    assert_eq!(hook["data"]["method"], "eu-av");
}

#[tokio::test]
async fn an_openid4vp_answer_through_the_dc_api_verifies_the_invite_by_eu_av() {
    verified_by("openid4vp").await;
}

#[tokio::test]
async fn an_annex_c_answer_through_the_dc_api_verifies_the_invite_by_eu_av() {
    verified_by("annex-c").await;
}

#[tokio::test]
async fn a_request_is_single_use_across_transports() {
    // The DC API first: a replay, and the link's answer to the same request, refused.
    let c = DcCase::new().await;
    let link = request_on_page(&c.app, &c.url).await;
    let body = c.r2_body(&c.valid(), &DcAnswer::default());
    assert_eq!(c.post(&body).await.status(), 200);
    assert_error(c.post(&body).await, 400, 40011).await;
    let r1 = c.r1_body(&c.valid(), &DcAnswer::default());
    assert_error(c.post(&r1).await, 400, 40011).await;
    let vp = c
        .issuer
        .vp_token(&link, &Presentation::for_request(&link, T0));
    assert_error(link_answer(&c.app, &link, &vp).await, 400, 40011).await;

    // The link first: the DC API's answer to that request is refused.
    let c = DcCase::new().await;
    let link = request_on_page(&c.app, &c.url).await;
    let vp = c
        .issuer
        .vp_token(&link, &Presentation::for_request(&link, T0));
    assert_eq!(link_answer(&c.app, &link, &vp).await.status(), 200);
    let body = c.r1_body(&c.valid(), &DcAnswer::default());
    let refused = assert_error(c.post(&body).await, 400, 40011).await;
    assert!(
        refused["message"].as_str().unwrap().contains("state"),
        "{refused}"
    );
    assert_eq!(c.status().await, "verified");
}

#[tokio::test]
async fn an_answer_made_on_one_node_is_accepted_by_another() {
    let c = DcCase::new().await;
    let other = spawn_beside(&c.app, |s| {
        s.eu_av = c.app_eu_av();
        // The same public URL, as behind one load balancer: the same origin.
        s.public_url = Some(c.app.base.clone());
    })
    .await;
    let body = c.r1_body(&c.valid(), &DcAnswer::default());
    let resp = post_dc_api(&other, &c.url.replace(&c.app.base, &other.base), &body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(c.status().await, "verified");
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
}

/// The text between the first `open` and the next `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html.find(open).expect(open) + open.len();
    let end = start + html[start..].find(close).expect(close);
    &html[start..end]
}
