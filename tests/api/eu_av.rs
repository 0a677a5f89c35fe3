//! docs/wallets.md#verifying-with-a-wallet end to end: the gateway page offers an OpenID4VP request, the test
//! wallet (`wallet.rs`) answers the real response endpoint, and the invite moves on.
//! The refusals of each acceptance rule are in `eu_av_rules.rs`.

use crate::helpers::{
    assert_error, gateway_page, spawn_app_trusting, SiteOptions, TestApp, TestSite, T0,
};
use crate::receiver::{signed_by, TestReceiver};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use agegate::domain::{MinAge, SiteId};
use agegate::store::SiteUpdate;
use serde_json::{json, Value};
use std::time::Duration;

/// A server that trusts `issuer`'s CA, on the manual clock at T0.
pub async fn eu_av_app(issuer: &TestIssuer) -> TestApp {
    eu_av_app_with(issuer, |_| {}).await
}

/// [`eu_av_app`], with more settings.
pub async fn eu_av_app_with(
    issuer: &TestIssuer,
    configure: impl FnOnce(&mut agegate::config::Settings),
) -> TestApp {
    spawn_app_trusting(&[(agegate::domain::Kind::EU_AV, &issuer.ca_pem)], |s| {
        s.allow_private_webhooks = true;
        configure(s);
    })
    .await
}

/// Opens the invite's gateway page and reads the request off its link.
pub async fn request_on_page(app: &TestApp, invite_url: &str) -> AuthorizationRequest {
    AuthorizationRequest::from_gateway_html(&gateway_page(&app.client, invite_url).await)
}

/// The wallet's POST to the request's response_uri.
pub async fn answer(
    app: &TestApp,
    req: &AuthorizationRequest,
    vp_token: &str,
) -> reqwest::Response {
    answer_with_state(app, req, &req.state, vp_token).await
}

pub async fn answer_with_state(
    app: &TestApp,
    req: &AuthorizationRequest,
    state: &str,
    vp_token: &str,
) -> reqwest::Response {
    app.client
        .post(&req.response_uri)
        .form(&[("state", state), ("vp_token", vp_token)])
        .send()
        .await
        .unwrap()
}

/// A site and a pending invite of it with the request its page shows.
pub async fn invite_with_request(
    app: &TestApp,
    options: SiteOptions<'_>,
) -> (TestSite, Value, AuthorizationRequest) {
    let site = app.create_site_with(options).await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "visitor-7"})))
        .await;
    let req = request_on_page(app, invite["url"].as_str().unwrap()).await;
    (site, invite, req)
}

fn link_href(html: &str) -> String {
    let start = html
        .find("id=\"eu-av-link\" href=\"")
        .expect("the wallet link")
        + 22;
    let end = start + html[start..].find('"').unwrap();
    html[start..end].to_owned()
}

#[tokio::test]
async fn the_pending_page_offers_the_request_as_a_link_and_a_qr_code_and_reloads_itself_without_script(
) {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    let resp = app
        .client
        .get(invite["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let csp = resp.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.starts_with("default-src 'none'"),
        "strict CSP kept: {csp}"
    );
    // docs/dc-api.md#the-pages-side: the page's own script only, by its hash; the refresh is for pages
    // without script (the script moves the page on itself; `dc_api.rs` tests it).
    assert!(
        csp.contains("script-src 'sha256-") && !csp.contains("unsafe"),
        "only the page's own script: {csp}"
    );
    let html = resp.text().await.unwrap();
    assert!(
        html.contains(r#"<noscript><meta http-equiv="refresh" content="5"></noscript>"#),
        "reloads every 5 s without script"
    );
    assert!(
        html.contains(r#"id="eu-av-qr""#) && html.contains("<svg"),
        "QR code inline"
    );

    let req = AuthorizationRequest::from_gateway_html(&html);
    let href = link_href(&html);
    assert!(href.starts_with("av://authorize?"), "{href}");
    let response_uri = format!("{}/gateway/{id}/openid4vp", app.base);
    assert_eq!(req.response_type, "vp_token");
    assert_eq!(req.response_mode, "direct_post");
    assert_eq!(req.response_uri, response_uri);
    assert_eq!(req.client_id, format!("redirect_uri:{response_uri}"));
    assert!(
        req.nonce.len() >= 22 && req.state.len() >= 22,
        "≥ 128 bits each"
    );
    assert_eq!(
        req.dcql_query,
        json!({"credentials":[{"id":"proof_of_age","format":"mso_mdoc",
            "meta":{"doctype_value":"eu.europa.ec.av.1"},
            "claims":[{"path":["eu.europa.ec.av.1","age_over_18"]}]}]})
    );
    assert_eq!(
        req.client_metadata,
        json!({"vp_formats_supported":{"mso_mdoc":{"issuerauth_alg_values":[-7],"deviceauth_alg_values":[-7]}}})
    );
}

#[tokio::test]
async fn the_same_live_request_is_shown_on_every_reload_and_a_new_one_after_10_minutes() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (_, invite, first) = invite_with_request(&app, SiteOptions::default()).await;
    let url = invite["url"].as_str().unwrap();
    app.clock.advance(9 * 60 + 59);
    let again = request_on_page(&app, url).await;
    assert_eq!((&again.state, &again.nonce), (&first.state, &first.nonce));
    app.clock.advance(1);
    let fresh = request_on_page(&app, url).await;
    assert_ne!(fresh.state, first.state);
    assert_ne!(fresh.nonce, first.nonce);
    // The old request is no longer live.
    let vp = issuer.vp_token(&first, &Presentation::for_request(&first, T0 + 600));
    assert_error(answer(&app, &first, &vp).await, 400, 40011).await;
    let vp = issuer.vp_token(&fresh, &Presentation::for_request(&fresh, T0 + 600));
    assert_eq!(answer(&app, &fresh, &vp).await.status(), 200);
}

#[tokio::test]
async fn an_accepted_presentation_verifies_the_invite_by_eu_av_and_sends_the_visitor_back() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let receiver = TestReceiver::start().await;
    let (site, invite, req) = invite_with_request(
        &app,
        SiteOptions {
            redirect_url: Some("https://shop.example/back"),
            webhook_url: Some(&receiver.url),
            ..Default::default()
        },
    )
    .await;
    let id = invite["inviteId"].as_str().unwrap();
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    let resp = answer(&app, &req, &vp).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"redirect_uri": format!("{}/gateway/{id}", app.base)})
    );

    assert_eq!(app.status_record(&site, id).await["status"], "verified");
    let page = app
        .client
        .get(invite["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 303);
    assert_eq!(
        page.headers()["location"],
        format!("https://shop.example/back?vs={id}&cid=visitor-7")
    );
    let got = receiver.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(got.len(), 1);
    assert!(signed_by(&site.webhook_secret, &got[0]));
    let hook = got[0].json();
    assert_eq!(hook["type"], "invite.verified");
    assert_eq!(hook["data"]["method"], "eu-av");
    assert_eq!(hook["data"]["inviteId"], id);
}

#[tokio::test]
async fn a_state_is_single_use_after_success() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (_, _, req) = invite_with_request(&app, SiteOptions::default()).await;
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    let body = assert_error(answer(&app, &req, &vp).await, 400, 40011).await;
    assert!(
        body["message"].as_str().unwrap().contains("state"),
        "{body}"
    );
}

#[tokio::test]
async fn an_unknown_state_is_refused_and_the_request_stays_live() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_error(
        answer_with_state(&app, &req, "not-a-state", &vp).await,
        400,
        40011,
    )
    .await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(app.status_record(&site, id).await["status"], "pending");
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
}

#[tokio::test]
async fn an_unknown_invite_is_404_and_an_expired_one_409() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (_, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    let unknown = req.response_uri.replace(
        invite["inviteId"].as_str().unwrap(),
        "AAAAAAAAAAAAAAAAAAAAAA",
    );
    let resp = app
        .client
        .post(&unknown)
        .form(&[("state", req.state.as_str()), ("vp_token", &vp)])
        .send()
        .await
        .unwrap();
    assert_error(resp, 404, 40401).await;
    let resp = app
        .client
        .post(format!("{}/gateway/x/openid4vp", app.base))
        .form(&[("state", "s"), ("vp_token", "v")])
        .send()
        .await
        .unwrap();
    assert_error(resp, 404, 40401).await;
    app.clock.advance(86_400);
    assert_error(answer(&app, &req, &vp).await, 409, 40901).await;
}

#[tokio::test]
async fn an_already_verified_invite_stays_verified_and_the_answer_is_accepted() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(app.verify(id).await.status(), 200);
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    assert_eq!(app.status_record(&site, id).await["status"], "verified");
}

#[tokio::test]
async fn a_raised_minimum_age_applies_to_a_live_request() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    assert_eq!(req.requested_claim, "age_over_18");
    let site_id = SiteId::parse(&site.site_id).unwrap();
    let update = SiteUpdate {
        min_age: MinAge::new(21),
        ..Default::default()
    };
    assert!(app.store.update_site(site_id, update).await.unwrap());
    // The page still shows the live request, now asking for the higher age.
    let shown = request_on_page(&app, invite["url"].as_str().unwrap()).await;
    assert_eq!(shown.state, req.state);
    assert_eq!(shown.requested_claim, "age_over_21");
    let over_18 = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    let body = assert_error(answer(&app, &req, &over_18).await, 400, 40010).await;
    assert!(
        body["message"].as_str().unwrap().contains("age_over"),
        "{body}"
    );
    let mut p = Presentation::for_request(&req, T0);
    p.claims = vec![("age_over_21".into(), true.into())];
    assert_eq!(
        answer(&app, &req, &issuer.vp_token(&req, &p))
            .await
            .status(),
        200
    );
}

#[tokio::test]
async fn a_site_minimum_age_of_8_asks_for_age_over_08() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let options = SiteOptions {
        min_age: Some(8),
        ..Default::default()
    };
    let (_, _, req) = invite_with_request(&app, options).await;
    assert_eq!(req.requested_claim, "age_over_08");
    let vp = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
}

#[tokio::test]
async fn without_trust_anchors_the_method_is_off() {
    let app = crate::helpers::spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let html = gateway_page(&app.client, invite["url"].as_str().unwrap()).await;
    assert!(!html.contains("eu-av-link"), "no wallet link when off");
    let resp = app
        .client
        .post(format!("{}/openid4vp", invite["url"].as_str().unwrap()))
        .form(&[("state", "s"), ("vp_token", "{}")])
        .send()
        .await
        .unwrap();
    assert_error(resp, 404, 40403).await;
}
