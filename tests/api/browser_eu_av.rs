//! The EU AV cross-device flow in a real browser: headless Chromium shows the gateway
//! page with its QR code and wallet link; the test wallet (on "another device") answers
//! the request it reads off the page; the page, reloading itself, takes the browser
//! back to the site's redirect URL.

use crate::browser::{arrival, Chromedriver};
use crate::eu_av::eu_av_app;
use crate::helpers::{client, SiteOptions, T0};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use crate::webdriver::Session;
use axum::routing::get;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn cross_device_flow_in_a_real_browser_moves_on_once_the_wallet_has_answered() {
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let back_url = format!("http://{}/back", receiver.local_addr().unwrap());
    let back = axum::Router::new().route("/back", get(|| async { "welcome back" }));
    tokio::spawn(async move { axum::serve(receiver, back).await });

    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let site = app
        .create_site_with(SiteOptions {
            redirect_url: Some(&back_url),
            ..Default::default()
        })
        .await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "c-1"})))
        .await;
    let invite_id = invite["inviteId"].as_str().unwrap().to_owned();
    let gateway_url = invite["url"].as_str().unwrap().to_owned();
    assert!(
        gateway_url.starts_with("http://127.0.0.1:"),
        "loopback only"
    );

    let driver = Chromedriver::start().await;
    let browser = driver.session().await;
    let walked = walk(&browser, &gateway_url, &back_url, &issuer).await;
    let closed = browser.close().await;
    let final_url = walked.unwrap_or_else(|e| panic!("{e}"));
    closed.expect("closing the browser session");

    let final_url = url::Url::parse(&final_url).unwrap();
    let query: Vec<(String, String)> = final_url.query_pairs().into_owned().collect();
    assert_eq!(
        query,
        [
            ("vs".to_owned(), invite_id.clone()),
            ("cid".to_owned(), "c-1".to_owned())
        ]
    );
    assert_eq!(
        app.status_record(&site, &invite_id).await["status"],
        "verified"
    );
}

/// Reads the QR code and link in the browser, answers as the wallet, and waits for the
/// page's own reload to reach `back_url`.
async fn walk(
    browser: &Session,
    gateway_url: &str,
    back_url: &str,
    issuer: &TestIssuer,
) -> Result<String, String> {
    browser
        .goto(gateway_url)
        .await
        .map_err(|e| format!("opening {gateway_url}: {e}"))?;
    browser
        .find("#eu-av-qr svg")
        .await
        .map_err(|e| format!("no QR code (#eu-av-qr svg) on the page: {e}"))?;
    let link = browser
        .find("a#eu-av-link")
        .await
        .map_err(|e| format!("no wallet link (a#eu-av-link) on the page: {e}"))?;
    let href = link
        .attr("href")
        .await
        .map_err(|e| format!("reading the link: {e}"))?
        .ok_or("the wallet link has no href")?;
    if !href.starts_with("av://authorize?") {
        return Err(format!("the wallet link is {href}"));
    }
    // The wallet, on another device, answers the request it scanned.
    let req = AuthorizationRequest::parse(&href);
    let vp_token = issuer.vp_token(&req, &Presentation::for_request(&req, T0));
    let resp = client()
        .post(&req.response_uri)
        .form(&[
            ("state", req.state.as_str()),
            ("vp_token", vp_token.as_str()),
        ])
        .send()
        .await
        .map_err(|e| format!("posting the answer: {e}"))?;
    if resp.status() != 200 {
        return Err(format!(
            "the answer was refused: {}",
            resp.text().await.unwrap_or_default()
        ));
    }
    // No click: the page's refresh (every 5 s) must take the browser on.
    match arrival(browser, back_url, Duration::from_secs(12)).await {
        Some(arrived) => arrived,
        None => Err(format!(
            "after 12 s the browser is still on {}",
            browser.current_url().await.unwrap_or_default()
        )),
    }
}
