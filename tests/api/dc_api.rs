//! docs/dc-api.md end to end over HTTP: the pending page carries the Digital Credentials
//! API request (R1 and R2) for its script, the test wallet answers either through the
//! real endpoint, and the invite moves on exactly as with the link (docs/wallets.md#the-wallet-link). The page itself is
//! in `dc_api_page.rs`, the refusals in `dc_api_rules.rs`, signed mode in
//! `dc_api_signed.rs`, the real browser in `browser_dc_api.rs`.

use crate::eu_av::{answer as link_answer, eu_av_app, request_on_page};
use crate::helpers::{assert_error, spawn_beside, SiteOptions, TestApp, TestSite, T0};
use crate::receiver::{signed_by, TestReceiver};
use crate::wallet::{DcAnswer, DcApiPage, DcWallet as _, Presentation, TestIssuer};
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

impl DcCase {
    /// Trust in the case's issuer for `eu-av`, as the case's server has it.
    pub fn app_trust(&self) -> std::sync::Arc<agegate::trust::TrustHandle> {
        crate::helpers::trusting(agegate::domain::Kind::EU_AV, &self.issuer.ca_pem)
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
    // Its receipt names the transport, and the nonce the request carried on the page.
    let receipt = crate::receipts::receipt_of(&c.app, &c.site, &c.invite_id).await;
    let (_, payload) = crate::receipts::decode(&receipt);
    let nonce = c.page.r1().nonce;
    assert_eq!(payload["transport"], "dc-api");
    assert_eq!(payload["docType"], "eu.europa.ec.av.1");
    assert_eq!(
        payload["nonceHash"],
        hex_sha256(nonce.as_bytes()),
        "the live request's nonce, whatever the protocol"
    );
    assert_eq!(hook["data"]["receipt"], receipt.as_str());
}

fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
        s.trust = c.app_trust();
        // The same public URL, as behind one load balancer: the same origin.
        s.public_url = Some(c.app.base.clone());
    })
    .await;
    let body = c.r1_body(&c.valid(), &DcAnswer::default());
    let resp = post_dc_api(&other, &c.url.replace(&c.app.base, &other.base), &body).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(c.status().await, "verified");
}
