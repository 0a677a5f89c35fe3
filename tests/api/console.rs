//! The operator console (docs/console.md#security-properties) over real sockets: where it is served, sessions,
//! cookies, CSRF, the sign-in throttle and the end of sessions.

use crate::console_helpers::{
    admin, assert_to_sign_in, client_from, create_user, db, get, post, sign_in, sign_in_response,
    spawn_console, spawn_console_with,
};
use crate::helpers::{poll, run_cli, spawn_app_with, spawn_beside, TestApp};
use reqwest::header::{LOCATION, SET_COOKIE};
use std::time::{Duration, Instant};

#[tokio::test]
async fn the_console_is_off_by_default_and_admin_is_a_404_on_the_public_address() {
    let app = spawn_app_with(|_| {}).await;
    assert!(app.admin_base.is_none());
    let resp = app.client.get(app.url("/admin/")).send().await.unwrap();
    crate::helpers::assert_error(resp, 404, 40402).await;
}

#[tokio::test]
async fn the_console_is_served_on_the_admin_address_only_with_the_gateways_headers() {
    let app = spawn_console().await;
    for path in ["/admin/", "/admin/sign-in", "/admin/sites"] {
        let resp = app.client.get(app.url(path)).send().await.unwrap();
        crate::helpers::assert_error(resp, 404, 40402).await;
    }
    let resp = client_from(None)
        .get(admin(&app, "/admin/sign-in"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let h = resp.headers();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; style-src 'sha256-")
            && csp.ends_with(
                "img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
            ),
        "{csp}"
    );
    assert!(!csp.contains("script-src"), "no script at all: {csp}");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["cache-control"], "no-store");
    // The API is not on the console's address.
    let resp = client_from(None)
        .get(admin(&app, "/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let resp = client_from(None)
        .get(admin(&app, "/admin"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()[LOCATION], "/admin/");
}

#[tokio::test]
async fn every_console_page_without_a_live_session_redirects_303_to_sign_in() {
    let app = spawn_console().await;
    let site = app.create_site().await;
    let invite = app.new_invite_id(&site, None).await;
    let s = &site.site_id;
    let pages = [
        "/admin/".to_owned(),
        "/admin/sites".into(),
        format!("/admin/sites/{s}"),
        format!("/admin/sites/{s}/invites"),
        format!("/admin/sites/{s}/invites/{invite}"),
        "/admin/trust".into(),
    ];
    let forged = format!("agegate_console={}", "A".repeat(43));
    for path in &pages {
        assert_to_sign_in(&get(&app, "", path).await, path);
        assert_to_sign_in(&get(&app, &forged, path).await, path);
    }
    let resp = client_from(None)
        .post(admin(
            &app,
            &format!("/admin/sites/{s}/invites/{invite}/cancel"),
        ))
        .send()
        .await
        .unwrap();
    assert_to_sign_in(&resp, "cancel");
    assert_eq!(app.status_record(&site, &invite).await["status"], "pending");
}

#[tokio::test]
async fn the_session_cookie_is_httponly_samesite_strict_for_admin_paths_and_not_secure_over_http() {
    let app = spawn_console().await;
    let password = create_user(&app, "alice");
    let resp = sign_in_response(&client_from(None), &app, "alice", &password).await;
    assert_eq!(resp.status(), 303);
    let set = resp.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let attrs: Vec<&str> = set.split("; ").collect();
    assert!(
        attrs[0].starts_with("agegate_console=") && attrs[0].len() == 16 + 43,
        "{set}"
    );
    for a in [
        "Path=/admin",
        "HttpOnly",
        "SameSite=Strict",
        "Max-Age=43200",
    ] {
        assert!(attrs.contains(&a), "{a} in {set}");
    }
    assert!(!attrs.contains(&"Secure"), "{set}");
}

#[tokio::test]
async fn the_session_cookie_is_secure_when_the_public_url_is_https() {
    let app = spawn_console_with(|s| s.public_url = Some("https://verify.example".into())).await;
    let password = create_user(&app, "alice");
    let resp = sign_in_response(&client_from(None), &app, "alice", &password).await;
    assert_eq!(resp.status(), 303);
    let set = resp.headers()[SET_COOKIE].to_str().unwrap();
    assert!(set.split("; ").any(|a| a == "Secure"), "{set}");
}

#[tokio::test]
async fn from_the_sixth_attempt_after_five_failures_sign_in_is_429_with_retry_after_for_that_name_and_address_only(
) {
    let app = spawn_console().await;
    let alice = create_user(&app, "alice");
    let bob = create_user(&app, "bob");
    let here = client_from(None);
    for _ in 0..5 {
        let resp = sign_in_response(&here, &app, "alice", "wrong").await;
        assert_eq!(resp.status(), 401);
        assert_eq!(
            resp.headers()["www-authenticate"],
            "Form realm=\"agegate console\""
        );
    }
    // The right password too: nothing is checked while refused.
    let resp = sign_in_response(&here, &app, "alice", &alice).await;
    assert_eq!(resp.status(), 429);
    let wait: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(wait >= 60, "Retry-After {wait}");
    assert!(resp.headers().get(SET_COOKIE).is_none());
    // Another name from this address, and this name from another address, are unaffected.
    assert_eq!(
        sign_in_response(&here, &app, "bob", &bob).await.status(),
        303
    );
    let there = client_from(Some("127.0.0.2"));
    assert_eq!(
        sign_in_response(&there, &app, "alice", &alice)
            .await
            .status(),
        303
    );
    // A second server on the same database sees the same count.
    let other = spawn_beside(&app, |s| s.admin_listen = Some("127.0.0.1:0".into())).await;
    let resp = sign_in_response(&here, &other, "alice", &alice).await;
    assert_eq!(resp.status(), 429);
    // After the wait, the right password signs in, and that ends the streak.
    app.clock.advance(wait as i64);
    assert_eq!(
        sign_in_response(&here, &app, "alice", &alice)
            .await
            .status(),
        303
    );
    assert_eq!(
        sign_in_response(&here, &app, "alice", "wrong")
            .await
            .status(),
        401
    );
    assert_eq!(
        sign_in_response(&here, &app, "alice", &alice)
            .await
            .status(),
        303
    );
}

#[tokio::test]
async fn an_unknown_name_is_refused_like_a_wrong_password() {
    let app = spawn_console().await;
    create_user(&app, "alice");
    let resp = sign_in_response(&client_from(None), &app, "mallory", "x").await;
    assert_eq!(resp.status(), 401);
    let body = resp.text().await.unwrap();
    assert!(
        body.contains("That name and password do not match an account."),
        "{body}"
    );
}

#[tokio::test]
async fn signing_out_ends_the_session() {
    let app = spawn_console().await;
    let password = create_user(&app, "alice");
    let session = sign_in(&app, "alice", &password).await;
    let resp = post(&app, &session, "/admin/sign-out", Some(&session.csrf), &[]).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()[LOCATION], "/admin/sign-in?notice=signed-out");
    let cleared = resp.headers()[SET_COOKIE].to_str().unwrap();
    assert!(
        cleared.starts_with("agegate_console=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert_to_sign_in(
        &get(&app, &session.cookie, "/admin/").await,
        "after sign-out",
    );
}

#[tokio::test]
async fn a_session_ends_12_hours_after_sign_in() {
    let app = spawn_console().await;
    let password = create_user(&app, "alice");
    let session = sign_in(&app, "alice", &password).await;
    app.clock.advance(12 * 3600 - 1);
    assert_eq!(get(&app, &session.cookie, "/admin/").await.status(), 200);
    app.clock.advance(1);
    assert_to_sign_in(&get(&app, &session.cookie, "/admin/").await, "after 12 h");
}

/// Polls `path` with `cookie` until it redirects to sign-in; how long that took.
async fn until_signed_out(app: &TestApp, cookie: &str, within: Duration) -> Duration {
    let start = Instant::now();
    let redirected = poll(within, || async {
        let resp = get(app, cookie, "/admin/").await;
        if resp.status() == 303 {
            return Some(resp);
        }
        assert_eq!(resp.status(), 200);
        None
    })
    .await;
    let resp = redirected.unwrap_or_else(|| panic!("the session still works after {within:?}"));
    assert_to_sign_in(&resp, "/admin/");
    start.elapsed()
}

#[tokio::test]
async fn a_deleted_users_sessions_end_on_every_server_within_5_seconds() {
    let app = spawn_console().await;
    let other = spawn_beside(&app, |s| s.admin_listen = Some("127.0.0.1:0".into())).await;
    let password = create_user(&app, "alice");
    let here = sign_in(&app, "alice", &password).await;
    let there = sign_in(&other, "alice", &password).await;
    assert_eq!(
        get(&other, &here.cookie, "/admin/").await.status(),
        200,
        "sessions are shared"
    );
    let (code, stdout, stderr) = run_cli(&db(&app), &["admin", "user", "delete", "alice"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("alice"), "{stdout}");
    let limit = Duration::from_secs(5);
    until_signed_out(&app, &here.cookie, limit).await;
    until_signed_out(&other, &there.cookie, limit).await;
    until_signed_out(&other, &here.cookie, limit).await;
    let resp = sign_in_response(&client_from(None), &app, "alice", &password).await;
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn a_form_without_its_sessions_csrf_token_is_refused_403_and_changes_nothing() {
    let app = spawn_console().await;
    let alice = sign_in(&app, "alice", &create_user(&app, "alice")).await;
    let bob = sign_in(&app, "bob", &create_user(&app, "bob")).await;
    assert_ne!(alice.csrf, bob.csrf);
    let site = app.create_site().await;
    let invite = app.new_invite_id(&site, None).await;
    let cancel = format!("/admin/sites/{}/invites/{invite}/cancel", site.site_id);
    let create = [("name", "Forged shop")];
    for token in [None, Some(bob.csrf.as_str()), Some("")] {
        let resp = post(&app, &alice, "/admin/sites", token, &create).await;
        assert_eq!(resp.status(), 403, "create with {token:?}");
        let resp = post(&app, &alice, &cancel, token, &[]).await;
        assert_eq!(resp.status(), 403, "cancel with {token:?}");
        let resp = post(&app, &alice, "/admin/sign-out", token, &[]).await;
        assert_eq!(resp.status(), 403, "sign-out with {token:?}");
    }
    // The right token from another site's page (the browser says where a form came from).
    let resp = client_from(None)
        .post(admin(&app, &cancel))
        .header("cookie", &alice.cookie)
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf", alice.csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let sites = agegate::store::AdminStore::sites(app.store.as_ref())
        .await
        .unwrap();
    assert_eq!(sites.len(), 1, "no site was made");
    assert_eq!(app.status_record(&site, &invite).await["status"], "pending");
    assert_eq!(
        get(&app, &alice.cookie, "/admin/").await.status(),
        200,
        "still signed in"
    );
    // With its own token the same form works.
    let resp = post(&app, &alice, &cancel, Some(&alice.csrf), &[]).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(app.status_record(&site, &invite).await["status"], "expired");
}

#[test]
fn admin_user_create_prints_the_password_once_and_refuses_an_existing_name() {
    let (_dir, db) = crate::helpers::temp_db();
    let (code, stdout, _) = run_cli(&db, &["admin", "user", "create", "Alice", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["password", "username"]);
    assert_eq!(v["username"], "alice");
    assert!(v["password"].as_str().unwrap().len() >= 22);
    let (code, _, stderr) = run_cli(&db, &["admin", "user", "create", "alice"]);
    assert_ne!(code, 0);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("exists already"), "{stderr}");
    let (code, _, stderr) = run_cli(&db, &["admin", "user", "delete", "nobody"]);
    assert_ne!(code, 0);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, _, stderr) = run_cli(&db, &["admin", "user", "create", "bad name"]);
    assert_ne!(code, 0);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let (code, stdout, _) = run_cli(&db, &["admin", "user", "create", "bob"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("password:") && stdout.contains("shown only now"),
        "{stdout}"
    );
}
