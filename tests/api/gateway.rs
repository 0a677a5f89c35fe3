use crate::helpers::{spawn_app, SiteOptions, TestApp};
use reqwest::Response;
use serde_json::{json, Value};

async fn get_page(app: &TestApp, url: &str) -> Response {
    app.client.get(url).send().await.unwrap()
}

/// Asserts the headers every gateway page carries; returns the HTML.
async fn assert_html_page(resp: Response, status: u16) -> String {
    assert_eq!(resp.status().as_u16(), status);
    let h = resp.headers();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["cache-control"], "no-store");
    let html = resp.text().await.unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("<html lang=\"en\">"));
    assert!(html.contains("name=\"viewport\""));
    html
}

#[tokio::test]
async fn a_pending_invite_page_explains_the_next_step() {
    let app = spawn_app().await;
    let site = app
        .create_site_with(SiteOptions {
            name: Some("Shop <script>alert(1)</script>"),
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, None).await;
    let html = assert_html_page(get_page(&app, invite["url"].as_str().unwrap()).await, 200).await;
    assert!(html.contains("Verify your age"));
    assert!(html.contains("Complete the age check"));
    assert!(!html.contains("<script>"), "the site name is escaped");
    assert!(html.contains("&#60;script&#62;") || html.contains("&lt;script&gt;"));
    assert!(
        !html.contains("approve"),
        "no sandbox control on a real site"
    );
}

#[tokio::test]
async fn an_expired_invite_page_says_so_plainly() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    app.clock.advance(86_400);
    let html = assert_html_page(get_page(&app, invite["url"].as_str().unwrap()).await, 410).await;
    assert!(html.contains("This link has expired"));
    assert!(html.contains("return to <strong>Test shop</strong>"));
}

#[tokio::test]
async fn a_verified_invite_redirects_to_the_site_with_vs_and_cid() {
    let app = spawn_app().await;
    let site = app
        .create_site_with(SiteOptions {
            redirect_url: Some("https://shop.example/back?from=age#top"),
            ..Default::default()
        })
        .await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "u 42&x=é"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    app.verify(id).await;
    let resp = get_page(&app, invite["url"].as_str().unwrap()).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(
        resp.headers()["location"],
        format!("https://shop.example/back?from=age&vs={id}&cid=u+42%26x%3D%C3%A9#top").as_str()
    );
    assert_eq!(resp.headers()["referrer-policy"], "no-referrer");

    // Without a customId there is no cid.
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    let resp = get_page(&app, &app.url(&format!("/gateway/{id}"))).await;
    assert_eq!(
        resp.headers()["location"],
        format!("https://shop.example/back?from=age&vs={id}#top").as_str()
    );
}

#[tokio::test]
async fn a_verified_invite_of_a_site_without_redirect_shows_a_verified_page() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    app.verify(invite["inviteId"].as_str().unwrap()).await;
    let html = assert_html_page(get_page(&app, invite["url"].as_str().unwrap()).await, 200).await;
    assert!(html.contains("You are verified"));
}

#[tokio::test]
async fn an_unknown_invite_page_is_a_friendly_html_404() {
    let app = spawn_app().await;
    for id in ["AAAAAAAAAAAAAAAAAAAAAA", "not-an-id"] {
        let html = assert_html_page(
            get_page(&app, &app.url(&format!("/gateway/{id}"))).await,
            404,
        )
        .await;
        assert!(html.contains("Link not found"));
    }
}

/// Opens a sandbox invite's page; returns (csrf cookie, csrf form field).
async fn sandbox_page(app: &TestApp, url: &str) -> (String, String) {
    let resp = get_page(app, url).await;
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let html = assert_html_page(resp, 200).await;
    assert!(html.contains("<button type=\"submit\" id=\"approve\">"));
    let field = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    (cookie, field)
}

#[tokio::test]
async fn a_sandbox_page_marks_the_invite_verified_from_its_own_form() {
    let app = spawn_app().await;
    let site = app
        .create_site_with(SiteOptions {
            sandbox: true,
            redirect_url: Some("https://shop.example/back"),
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, Some(json!({"customId": "c1"}))).await;
    let url = invite["url"].as_str().unwrap();
    let id = invite["inviteId"].as_str().unwrap();
    let (cookie, csrf) = sandbox_page(&app, url).await;
    let resp = app
        .client
        .post(format!("{url}/approve"))
        .header("cookie", &cookie)
        // What a browser sends from a page with Referrer-Policy: no-referrer.
        .header("origin", "null")
        .header("sec-fetch-site", "same-origin")
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], url);
    assert_eq!(app.status_record(&site, id).await["status"], "verified");
    // Its receipt says no check was made: method sandbox, nothing presented.
    let (_, payload) = crate::receipts::decode(&crate::receipts::receipt_of(&app, &site, id).await);
    assert_eq!(
        (
            &payload["method"],
            &payload["minAge"],
            &payload["docType"],
            &payload["transport"]
        ),
        (&json!("sandbox"), &json!(18), &Value::Null, &Value::Null)
    );
    let resp = get_page(&app, url).await;
    assert_eq!(
        resp.headers()["location"],
        format!("https://shop.example/back?vs={id}&cid=c1").as_str()
    );
}

#[tokio::test]
async fn a_forged_sandbox_approval_is_refused() {
    let app = spawn_app().await;
    let site = app
        .create_site_with(SiteOptions {
            sandbox: true,
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let (cookie, csrf) = sandbox_page(&app, url).await;
    let approve = format!("{url}/approve");
    let attempts = [
        // No cookie (a cross-site form post cannot send a SameSite=Strict cookie).
        app.client.post(&approve).form(&[("csrf", csrf.as_str())]),
        // Cookie but the wrong token.
        app.client
            .post(&approve)
            .header("cookie", &cookie)
            .form(&[("csrf", "forged")]),
        // Cookie and token, but from another origin.
        app.client
            .post(&approve)
            .header("cookie", &cookie)
            .header("origin", "https://evil.example")
            .form(&[("csrf", csrf.as_str())]),
        // Cookie and token, but the browser says it came from another site.
        app.client
            .post(&approve)
            .header("cookie", &cookie)
            .header("origin", "null")
            .header("sec-fetch-site", "cross-site")
            .form(&[("csrf", csrf.as_str())]),
        // No form at all.
        app.client.post(&approve).header("cookie", &cookie),
    ];
    for request in attempts {
        let html = assert_html_page(request.send().await.unwrap(), 403).await;
        assert!(html.contains("did not come from the verification page"));
    }
    assert_eq!(
        app.status_record(&site, invite["inviteId"].as_str().unwrap())
            .await["status"],
        "pending"
    );
}

#[tokio::test]
async fn a_real_site_refuses_sandbox_approval() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let resp = app
        .client
        .post(format!("{url}/approve"))
        .header("cookie", "agegate_csrf=x")
        .form(&[("csrf", "x")])
        .send()
        .await
        .unwrap();
    let html = assert_html_page(resp, 403).await;
    assert!(html.contains("Only sandbox sites"));
    assert_eq!(
        app.status_record(&site, invite["inviteId"].as_str().unwrap())
            .await["status"],
        "pending"
    );
}
