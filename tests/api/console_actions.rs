//! What the console shows and does (docs/console.md#what-it-shows), each action's effect seen through
//! the API or the command line.

use crate::console_helpers::{
    create_user, db, get, post, sign_in, spawn_console, spawn_console_with, Session,
};
use crate::helpers::{eventually, run_cli, until, SiteOptions, TestApp, TestSite};
use crate::receiver::{signed_by, TestReceiver};
use reqwest::header::LOCATION;
use serde_json::{json, Value};
use std::time::Duration;

pub async fn signed_in(app: &TestApp) -> Session {
    let password = create_user(app, "alice");
    sign_in(app, "alice", &password).await
}

pub async fn text(resp: reqwest::Response) -> String {
    resp.text().await.unwrap()
}

/// The text of the element with `id` (up to its closing tag).
pub fn by_id<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {html}"));
    let rest = &html[at..];
    let start = rest.find('>').unwrap() + 1;
    let end = rest[start..].find('<').unwrap() + start;
    &rest[start..end]
}

#[tokio::test]
async fn a_site_created_in_the_console_shows_its_secrets_once_and_they_work_on_the_api() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let form = [
        ("name", "Console shop"),
        ("redirect_url", "https://shop.example/back"),
        ("webhook_url", ""),
        ("min_age", "21"),
        ("webhook_format", "standard"),
        ("accept", "mdl, eu-av"),
        ("sandbox", "yes"),
    ];
    let resp = post(&app, &session, "/admin/sites", Some(&session.csrf), &form).await;
    assert_eq!(resp.status(), 200);
    let html = text(resp).await;
    let site = TestSite {
        site_id: by_id(&html, "new-site-id").into(),
        username: by_id(&html, "new-username").into(),
        password: by_id(&html, "new-password").into(),
        webhook_secret: by_id(&html, "new-webhook-secret").into(),
    };
    assert!(site.webhook_secret.starts_with("whsec_"));
    app.new_invite(&site, None).await;
    let (code, stdout, _) = run_cli(&db(&app), &["site", "show", &site.site_id, "--json"]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["name"], "Console shop");
    assert_eq!(shown["minAge"], 21);
    assert_eq!(shown["sandbox"], true);
    assert_eq!(shown["redirectUrl"], "https://shop.example/back");
    assert_eq!(shown["accept"], serde_json::json!(["eu-av", "mdl"]));
    assert!(!stdout.contains(&site.password) && !stdout.contains(&site.webhook_secret));
    let page = text(
        get(
            &app,
            &session.cookie,
            &format!("/admin/sites/{}", site.site_id),
        )
        .await,
    )
    .await;
    assert!(!page.contains(&site.password) && !page.contains(&site.webhook_secret));
    assert!(page.contains(&site.username) && page.contains("sandbox"));
    assert_eq!(by_id(&page, "accept"), "eu-av, mdl", "accepted kinds shown");
    // `site update --accept` shows on the page at once.
    let (code, _, stderr) = run_cli(
        &db(&app),
        &["site", "update", &site.site_id, "--accept", "all"],
    );
    assert_eq!(code, 0, "{stderr}");
    let page = wait_for_page(
        &app,
        &session,
        &format!("/admin/sites/{}", site.site_id),
        "all (eu-av, eudi-pid, mdl, google-id, photo-id)",
    )
    .await;
    assert_eq!(
        by_id(&page, "accept"),
        "all (eu-av, eudi-pid, mdl, google-id, photo-id)"
    );
    // The CLI's rules refuse what it would refuse, and nothing is made.
    let bad = [("name", "Bad"), ("min_age", "120")];
    let resp = post(&app, &session, "/admin/sites", Some(&session.csrf), &bad).await;
    assert_eq!(resp.status(), 400);
    let html = text(resp).await;
    assert!(by_id(&html, "create-error").contains("1"), "{html}");
    let bad = [("name", "Bad"), ("accept", "passport")];
    let resp = post(&app, &session, "/admin/sites", Some(&session.csrf), &bad).await;
    assert_eq!(resp.status(), 400);
    let html = text(resp).await;
    assert!(by_id(&html, "create-error").contains("passport"), "{html}");
    let (_, stdout, _) = run_cli(&db(&app), &["site", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_key_issued_in_the_console_works_and_a_revoked_one_is_refused_within_5_seconds() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let site = app.create_site().await;
    let path = format!("/admin/sites/{}/keys", site.site_id);
    let resp = post(&app, &session, &path, Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 200);
    let html = text(resp).await;
    let key = TestSite {
        username: by_id(&html, "new-username").into(),
        password: by_id(&html, "new-password").into(),
        ..site.clone()
    };
    let invite = app.new_invite_id(&key, None).await;
    let revoke = format!("{path}/{}/revoke", key.username);
    let resp = post(&app, &session, &revoke, Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 400, "the box must be ticked");
    assert_eq!(app.get_invite(&key, &invite).await.status(), 200);
    let resp = post(
        &app,
        &session,
        &revoke,
        Some(&session.csrf),
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(resp.status(), 303);
    eventually(
        "the revoked key refused",
        Duration::from_secs(5),
        || async { app.get_invite(&key, &invite).await.status() == 401 },
    )
    .await;
    assert_eq!(
        app.get_invite(&site, &invite).await.status(),
        200,
        "the first key works"
    );
}

#[tokio::test]
async fn a_webhook_secret_rotated_in_the_console_signs_the_next_delivery_beside_the_old_one() {
    let receiver = TestReceiver::start().await;
    let app = spawn_console_with(|s| s.allow_private_webhooks = true).await;
    let session = signed_in(&app).await;
    let site = app
        .create_site_with(SiteOptions {
            webhook_url: Some(&receiver.url),
            ..Default::default()
        })
        .await;
    let path = format!("/admin/sites/{}/webhook-secret", site.site_id);
    let resp = post(
        &app,
        &session,
        &path,
        Some(&session.csrf),
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(resp.status(), 200);
    let new_secret = by_id(&text(resp).await, "new-webhook-secret").to_owned();
    assert!(new_secret.starts_with("whsec_") && new_secret != site.webhook_secret);
    let invite = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&invite).await.status(), 200);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1);
    assert!(signed_by(&new_secret, &got[0]) && signed_by(&site.webhook_secret, &got[0]));
}

#[tokio::test]
async fn cancel_in_the_console_expires_a_pending_invite_and_refuses_a_verified_one_with_409() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let site = app.create_site().await;
    let pending = app.new_invite_id(&site, None).await;
    let verified = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&verified).await.status(), 200);
    let base = format!("/admin/sites/{}/invites", site.site_id);
    let resp = post(
        &app,
        &session,
        &format!("{base}/{pending}/cancel"),
        Some(&session.csrf),
        &[],
    )
    .await;
    assert_eq!(resp.status(), 303);
    assert_eq!(
        resp.headers()[LOCATION],
        format!("{base}/{pending}?notice=cancelled").as_str()
    );
    assert_eq!(
        app.status_record(&site, &pending).await["status"],
        "expired"
    );
    let resp = post(
        &app,
        &session,
        &format!("{base}/{verified}/cancel"),
        Some(&session.csrf),
        &[],
    )
    .await;
    assert_eq!(resp.status(), 409);
    let html = text(resp).await;
    assert!(
        html.contains("the invite is verified and cannot be cancelled"),
        "{html}"
    );
    assert_eq!(
        app.status_record(&site, &verified).await["status"],
        "verified"
    );
    let page = text(get(&app, &session.cookie, &format!("{base}/{pending}")).await).await;
    assert_eq!(by_id(&page, "status"), "expired");
    assert!(page.contains("Cancelled (expired)"), "{page}");
}

#[tokio::test]
async fn erase_in_the_console_removes_the_invite_from_the_api() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let site = app.create_site().await;
    let invite = app.new_invite_id(&site, None).await;
    let path = format!("/admin/sites/{}/invites/{invite}/erase", site.site_id);
    let resp = post(&app, &session, &path, Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 400, "the box must be ticked");
    assert_eq!(app.get_invite(&site, &invite).await.status(), 200);
    let resp = post(
        &app,
        &session,
        &path,
        Some(&session.csrf),
        &[("confirm", "yes")],
    )
    .await;
    assert_eq!(resp.status(), 303);
    assert_eq!(app.get_invite(&site, &invite).await.status(), 404);
    let page = format!("/admin/sites/{}/invites/{invite}", site.site_id);
    assert_eq!(get(&app, &session.cookie, &page).await.status(), 404);
}

#[tokio::test]
async fn redeliver_in_the_console_sends_the_invites_event_again_with_its_attempts_listed() {
    let receiver = TestReceiver::start().await;
    let app = spawn_console_with(|s| s.allow_private_webhooks = true).await;
    let session = signed_in(&app).await;
    let site = app
        .create_site_with(SiteOptions {
            webhook_url: Some(&receiver.url),
            ..Default::default()
        })
        .await;
    let invite = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&invite).await.status(), 200);
    let first = receiver.wait_for(1, Duration::from_secs(10)).await;
    let event = first[0].header("webhook-id").to_owned();
    let page = format!("/admin/sites/{}/invites/{invite}", site.site_id);
    let html = wait_for_page(&app, &session, &page, "delivered").await;
    // The invite's receipt is on its page, as the API serves it (docs/evidence.md#receipts).
    let receipt: serde_json::Value = app.receipt(&site, &invite).await.json().await.unwrap();
    assert!(
        html.contains(&format!(
            "<code id=\"receipt\">{}</code>",
            receipt["receipt"].as_str().unwrap()
        )),
        "{html}"
    );
    assert!(
        html.contains(&event) && html.contains(">200</td>"),
        "{html}"
    );
    let path = format!("{page}/events/{event}/redeliver");
    let resp = post(&app, &session, &path, Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 303);
    let again = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(again.len(), 2);
    assert_eq!(again[1].header("webhook-id"), event);
    // Another invite's event is not this invite's to redeliver.
    let other = app.new_invite_id(&site, None).await;
    let path = format!(
        "/admin/sites/{}/invites/{other}/events/{event}/redeliver",
        site.site_id
    );
    let resp = post(&app, &session, &path, Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 404);
}

/// The page at `path` once it contains `needle` (the worker records attempts async).
pub async fn wait_for_page(app: &TestApp, session: &Session, path: &str, needle: &str) -> String {
    until(Duration::from_secs(10), || async {
        let html = text(get(app, &session.cookie, path).await).await;
        if html.contains(needle) {
            Ok(html)
        } else {
            Err(html)
        }
    })
    .await
    .unwrap_or_else(|html| html)
}

#[tokio::test]
async fn the_invite_list_filters_by_status_and_custom_id_and_pages_by_cursor() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let site = app.create_site().await;
    let mut ids = Vec::new();
    for cid in ["a", "b", "b", "b"] {
        ids.push(
            app.new_invite_id(&site, Some(json!({ "customId": cid })))
                .await,
        );
    }
    assert_eq!(app.verify(&ids[1]).await.status(), 200);
    let base = format!("/admin/sites/{}/invites", site.site_id);
    let html = text(
        get(
            &app,
            &session.cookie,
            &format!("{base}?status=pending&customId=b"),
        )
        .await,
    )
    .await;
    assert!(!html.contains(&ids[0]) && !html.contains(&ids[1]));
    assert!(html.contains(&ids[2]) && html.contains(&ids[3]));
    let html = text(
        get(
            &app,
            &session.cookie,
            &format!("{base}?status=&customId=&limit=3"),
        )
        .await,
    )
    .await;
    let next = by_id(&html, "next-page");
    assert_eq!(next, "Next page");
    let href = html
        .split("href=\"")
        .find(|h| h.contains("cursor="))
        .unwrap();
    let href = href.split('"').next().unwrap().replace("&#38;", "&");
    let html = text(get(&app, &session.cookie, &href).await).await;
    assert!(html.contains(&ids[0]) && !html.contains(&ids[3]), "{html}");
    let resp = get(&app, &session.cookie, &format!("{base}?status=gone")).await;
    assert_eq!(resp.status(), 400);
}
