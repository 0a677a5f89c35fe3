//! The Digital Credentials API flow in a real browser (docs/dc-api.md): headless Chromium
//! opens the gateway page from `http://127.0.0.1:PORT` (a secure context), the page's
//! script shows its button, and Chromium's virtual wallet (DevTools protocol,
//! `DigitalCredentials.setVirtualWalletBehavior`) hands `navigator.credentials.get` the
//! answer the test wallet built for the request it read off the page: encrypted to the
//! page's key, bound to its origin, signed by the test issuer. A WebDriver click is the
//! user gesture the API needs. Then the page posts the answer and the browser lands on
//! the site's redirect URL; a declining wallet or a refused answer leaves a readable
//! message and a pending invite.
//!
//! `AGEGATE_SCREENSHOTS=DIR` keeps screenshots of the page at phone and desktop widths.

use crate::browser::Chromedriver;
use crate::dc_api::DcCase;
use crate::eu_av::eu_av_app;
use crate::helpers::{until, SiteOptions, TestApp, T0};
use crate::wallet::{DcAnswer, DcApiPage, DcWallet as _, Presentation, TestIssuer};
use crate::webdriver::Session as Client;
use axum::routing::get;
use serde_json::{json, Value};
use std::time::Duration;

/// What the virtual wallet does on the page's next `navigator.credentials.get`.
pub(crate) async fn wallet_will(browser: &Client, behavior: Value) -> Result<(), String> {
    browser
        .cdp("DigitalCredentials.setVirtualWalletBehavior", behavior)
        .await
        .map(|_| ())
}

/// A site whose redirect URL is a page of its own on loopback; `back_url` without query.
async fn site_with_redirect() -> (DcCase, String) {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    site_with_redirect_on(issuer, app).await
}

async fn site_with_redirect_on(
    issuer: TestIssuer,
    app: crate::helpers::TestApp,
) -> (DcCase, String) {
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let back_url = format!("http://{}/back", receiver.local_addr().unwrap());
    let back = axum::Router::new().route("/back", get(|| async { "welcome back" }));
    tokio::spawn(async move { axum::serve(receiver, back).await });
    let options = SiteOptions {
        redirect_url: Some(&back_url),
        ..Default::default()
    };
    let case = DcCase::on(issuer, app, options).await;
    assert!(case.url.starts_with("http://127.0.0.1:"), "loopback only");
    (case, back_url)
}

/// Starts Chromium, runs `walk`, closes the session whatever happened, then judges.
pub(crate) async fn in_browser<F, Fut>(walk: F) -> String
where
    F: FnOnce(Chromedriver, Client) -> Fut,
    Fut: std::future::Future<Output = (Chromedriver, Client, Result<String, String>)>,
{
    let driver = Chromedriver::start().await;
    let browser = driver.session().await;
    let (_driver, browser, walked) = walk(driver, browser).await;
    let closed = browser.close().await;
    let result = walked.unwrap_or_else(|e| panic!("{e}"));
    closed.expect("closing the browser session");
    result
}

/// Opens the page, checks the button is shown, and reads the request the page carries.
pub(crate) async fn open_page(browser: &Client, url: &str) -> Result<DcApiPage, String> {
    browser
        .goto(url)
        .await
        .map_err(|e| format!("opening {url}: {e}"))?;
    let button = browser
        .find("#dc-api-button")
        .await
        .map_err(|e| format!("no #dc-api-button: {e}"))?;
    if !button.is_displayed().await? {
        return Err("the button is hidden: no DigitalCredential in this browser?".into());
    }
    let text = browser
        .execute(
            "return document.getElementById('dc-api-request').textContent",
            json!([]),
        )
        .await
        .map_err(|e| format!("reading the request: {e}"))?;
    let json: Value = serde_json::from_str(text.as_str().ok_or("no request text")?)
        .map_err(|e| format!("the request is not JSON: {e}"))?;
    Ok(DcApiPage::from_json(json))
}

/// Waits up to `secs` for the browser to reach `prefix`; the URL it is on.
pub(crate) async fn wait_for_url(
    browser: &Client,
    prefix: &str,
    secs: u64,
) -> Result<String, String> {
    until(Duration::from_secs(secs), || async move {
        let current = browser.current_url().await?;
        if current.starts_with(prefix) {
            return Ok(current);
        }
        let text = page_text(browser).await;
        Err(format!(
            "after {secs} s still on {current}; the page says: {text}"
        ))
    })
    .await
}

async fn page_text(browser: &Client) -> String {
    match browser.find("body").await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Waits up to 10 s for the page's message to show; its text.
async fn wait_for_message(browser: &Client) -> Result<String, String> {
    until(Duration::from_secs(10), || async move {
        if let Ok(message) = browser.find("#dc-api-message").await {
            if message.is_displayed().await.unwrap_or(false) {
                return message.text().await;
            }
        }
        Err(format!(
            "no message shown; the page says: {}",
            page_text(browser).await
        ))
    })
    .await
}

/// The wallet answers the request it finds on the page by `protocol`; the browser must
/// land on the site's redirect URL with the invite verified.
async fn answered_in_a_real_browser(protocol: &'static str) {
    let (case, back_url) = site_with_redirect().await;
    answered_in(case, back_url, protocol, |p| p).await;
}

/// As above on `case`, the wallet's presentation made by `present` from a valid one.
async fn answered_in(
    case: DcCase,
    back_url: String,
    protocol: &'static str,
    present: fn(Presentation) -> Presentation,
) {
    let origin = case.origin();
    let landed = in_browser(|driver, browser| async {
        let walked = async {
            let page = open_page(&browser, &case.url).await?;
            screenshots(&browser, &format!("pending-{protocol}")).await;
            let p = present(Presentation::for_claim(&page.r1().requested_claim, T0));
            let (name, data) = match protocol {
                "openid4vp" => {
                    let r1 = page.r1();
                    let data =
                        case.issuer
                            .dc_openid4vp_data(&r1, &origin, &p, &DcAnswer::default());
                    (r1.protocol, data)
                }
                _ => {
                    let data =
                        case.issuer
                            .dc_annex_c_data(&page.r2(), &origin, &p, &DcAnswer::default());
                    ("org-iso-mdoc".to_owned(), data)
                }
            };
            let respond = json!({"action": "respond", "protocol": name, "response": data});
            wallet_will(&browser, respond).await?;
            browser
                .find("#dc-api-button")
                .await?
                .click()
                .await
                .map_err(|e| format!("clicking the button: {e}"))?;
            wait_for_url(&browser, &back_url, 15).await
        }
        .await;
        (driver, browser, walked)
    })
    .await;
    let landed = url::Url::parse(&landed).unwrap();
    let query: Vec<(String, String)> = landed.query_pairs().into_owned().collect();
    assert_eq!(
        query,
        [
            ("vs".to_owned(), case.invite_id.clone()),
            ("cid".to_owned(), "c-9".to_owned())
        ]
    );
    assert_eq!(case.status().await, "verified");
}

#[tokio::test]
async fn an_openid4vp_answer_through_the_browsers_dc_api_lands_on_the_redirect_url() {
    answered_in_a_real_browser("openid4vp").await;
}

#[tokio::test]
async fn an_annex_c_answer_through_the_browsers_dc_api_lands_on_the_redirect_url() {
    answered_in_a_real_browser("annex-c").await;
}

/// docs/kinds.md#credential-kinds in the browser: a server that accepts mobile driving licences only, a
/// licence from a state's (test) IACA root, through each request the page carries.
#[tokio::test]
async fn a_driving_licence_through_the_browsers_dc_api_lands_on_the_redirect_url() {
    use crate::wallet::{MDL_DOCTYPE, MDL_NAMESPACE};
    for protocol in ["annex-c", "openid4vp"] {
        let issuer = TestIssuer::named("agegate test IACA root", T0);
        let trust = crate::helpers::trusting(agegate::domain::Kind::MDL, &issuer.ca_pem);
        let app = crate::helpers::spawn_app_with(|s| s.trust = trust).await;
        let (case, back_url) = site_with_redirect_on(issuer, app).await;
        assert_eq!(case.page.r2().doc_types, [MDL_DOCTYPE]);
        answered_in(case, back_url, protocol, |p| {
            p.of_doc(MDL_DOCTYPE, MDL_NAMESPACE)
        })
        .await;
    }
}

/// The kinds of the wallets people hold in the browser, through R2 (Annex C, the path
/// Safari takes to Apple Wallet): a Google ID pass, and a Photo ID of either spelling,
/// each from an issuer trusted for its own kind only.
#[tokio::test]
async fn a_google_id_and_a_photo_id_of_either_spelling_through_annex_c_land_on_the_redirect_url() {
    use crate::wallet::{
        GOOGLE_ID_DOCTYPE, MDL_NAMESPACE, PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE,
        PHOTO_ID_NAMESPACE,
    };
    use agegate::domain::Kind;
    type Present = fn(Presentation) -> Presentation;
    let cases: [(Kind, &[&str], Present); 3] = [
        (Kind::GOOGLE_ID, &[GOOGLE_ID_DOCTYPE], |p| {
            p.of_doc(GOOGLE_ID_DOCTYPE, MDL_NAMESPACE)
        }),
        (
            Kind::PHOTO_ID,
            &[PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE],
            |p| p.of_doc(PHOTO_ID_DOCTYPE, PHOTO_ID_NAMESPACE),
        ),
        (
            Kind::PHOTO_ID,
            &[PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE],
            |p| p.of_doc(PHOTO_ID_DRAFT_DOCTYPE, PHOTO_ID_NAMESPACE),
        ),
    ];
    for (kind, doc_types, present) in cases {
        let issuer = TestIssuer::named("agegate test IACA root", T0);
        let trust = crate::helpers::trusting(kind, &issuer.ca_pem);
        let app = crate::helpers::spawn_app_with(|s| s.trust = trust).await;
        let (case, back_url) = site_with_redirect_on(issuer, app).await;
        assert_eq!(case.page.r2().doc_types, doc_types);
        answered_in(case, back_url, "annex-c", present).await;
    }
}

/// The wallet declines, then answers for another origin: each time a readable message
/// stays on the page (it does not reload it away) and the invite stays pending.
#[tokio::test]
async fn a_declining_wallet_or_a_refused_answer_leaves_a_readable_message_and_a_pending_invite() {
    let issuer = TestIssuer::new(T0);
    let app = crate::eu_av::eu_av_app_with(&issuer, |s| {
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await;
    let (case, _) = site_with_redirect_on(issuer, app).await;
    let (declined, refused) = {
        let result = in_browser(|driver, browser| async {
            let walked = async {
                let page = open_page(&browser, &case.url).await?;
                let button = "#dc-api-button";
                wallet_will(&browser, json!({"action": "decline"})).await?;
                browser.find(button).await?.click().await?;
                let declined = wait_for_message(&browser).await?;
                screenshots(&browser, "declined").await;
                // Three of the page's status polls later the message is still there:
                // the page did not reload.
                let app = &case.app;
                let polls = status_polls(app).await;
                until(Duration::from_secs(10), || async move {
                    let now = status_polls(app).await;
                    (now >= polls + 3).then_some(()).ok_or(format!(
                        "the page polled its status {} time(s) in 10 s, not 3",
                        now - polls
                    ))
                })
                .await?;
                let still = wait_for_message(&browser).await?;
                if still != declined {
                    return Err(format!(
                        "the message changed from {declined:?} to {still:?}"
                    ));
                }
                let r1 = page.r1();
                let p = Presentation::for_claim(&r1.requested_claim, T0);
                let elsewhere = DcAnswer {
                    origin: Some("https://evil.example".into()),
                    ..Default::default()
                };
                let data = case
                    .issuer
                    .dc_openid4vp_data(&r1, &case.origin(), &p, &elsewhere);
                let respond =
                    json!({"action": "respond", "protocol": r1.protocol, "response": data});
                wallet_will(&browser, respond).await?;
                browser.find(button).await?.click().await?;
                // The new message replaces the first (what it says is asserted below).
                let (browser, first) = (&browser, &declined);
                let refused = until(Duration::from_secs(10), || async move {
                    let text = wait_for_message(browser).await?;
                    if text != *first {
                        return Ok(text);
                    }
                    Err(text)
                })
                .await
                .unwrap_or_else(|same| same);
                screenshots(browser, "refused").await;
                Ok(format!("{declined}\n{refused}"))
            }
            .await;
            (driver, browser, walked)
        })
        .await;
        let (a, b) = result.split_once('\n').unwrap();
        (a.to_owned(), b.to_owned())
    };
    assert!(
        declined.contains("No proof of age was shared"),
        "{declined}"
    );
    assert!(
        refused.contains("presentation refused: device signature does not match this request"),
        "{refused}"
    );
    assert_eq!(case.status().await, "pending");
}

/// `AGEGATE_SCREENSHOTS=DIR`: the page at 390 and 1280 px wide, as PNG files.
async fn screenshots(browser: &Client, name: &str) {
    let Some(dir) = std::env::var_os("AGEGATE_SCREENSHOTS") else {
        return;
    };
    for (width, height) in [(390, 844), (1280, 900)] {
        if browser.set_window_size(width, height).await.is_err() {
            continue;
        }
        if let Ok(png) = browser.screenshot().await {
            let path = std::path::Path::new(&dir).join(format!("{name}-{width}.png"));
            let _ = std::fs::write(path, png);
        }
    }
}

/// How many times the gateway's status poll has been answered, from `/metrics` (the app
/// must have a metrics listener).
async fn status_polls(app: &TestApp) -> u64 {
    let metrics = app.metrics().await;
    metrics
        .lines()
        .filter(|l| {
            l.starts_with("agegate_http_requests_total{")
                && l.contains("route=\"/gateway/{inviteId}/status\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}
