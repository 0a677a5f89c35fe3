use crate::helpers::{assert_error, spawn_app, spawn_app_with, T0};
use serde_json::{json, Value};
use std::collections::HashSet;

#[tokio::test]
async fn create_returns_invite_id_url_and_expires_24h_after_creation() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let resp = app
        .create_invite(&site, Some(json!({"customId": "user-42"})))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    let obj = body.as_object().unwrap();
    let mut keys: Vec<_> = obj.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["expires", "inviteId", "url"]);
    assert_eq!(body["expires"], T0 + 86_400);
    let id = body["inviteId"].as_str().unwrap();
    // 8 characters of creation time, then 128 random bits in base64url.
    assert_eq!(id.len(), 30, "time prefix + 128 bits in base64url");
    assert!(id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    assert_eq!(body["url"], format!("{}/gateway/{id}", app.base));
}

#[tokio::test]
async fn expires_follows_the_clock_at_creation() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    app.clock.advance(12_345);
    let body = app.new_invite(&site, None).await;
    assert_eq!(body["expires"], T0 + 12_345 + 86_400);
}

/// Ids lead with their creation time so the stores append rather than scatter; text
/// order is creation order, and the random part keeps ids unguessable.
#[tokio::test]
async fn invite_ids_sort_by_creation_time() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let first = app.new_invite(&site, None).await;
    app.clock.advance(1);
    let second = app.new_invite(&site, None).await;
    let (a, b) = (
        first["inviteId"].as_str().unwrap(),
        second["inviteId"].as_str().unwrap(),
    );
    assert!(a[..8] < b[..8], "{a} then {b}");
    assert_ne!(a[8..], b[8..]);
}

#[tokio::test]
async fn url_is_under_the_public_url() {
    let app = spawn_app_with(|s| s.public_url = Some("https://verify.example/age/".into())).await;
    let site = app.create_site().await;
    let body = app.new_invite(&site, None).await;
    assert_eq!(
        body["url"],
        format!(
            "https://verify.example/age/gateway/{}",
            body["inviteId"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn empty_body_empty_object_and_null_custom_id_are_accepted() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    // No body and no content type at all.
    let resp = app.create_invite(&site, None).await;
    assert_eq!(resp.status(), 200);
    for body in [json!({}), json!({"customId": null}), json!({"other": 1})] {
        let resp = app.create_invite(&site, Some(body.clone())).await;
        assert_eq!(resp.status(), 200, "{body}");
    }
}

#[tokio::test]
async fn custom_id_of_128_characters_is_accepted_even_as_emoji() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for custom_id in ["a".repeat(128), "😀".repeat(128), "é".repeat(128)] {
        let body = app
            .new_invite(&site, Some(json!({ "customId": custom_id })))
            .await;
        let record = app
            .status_record(&site, body["inviteId"].as_str().unwrap())
            .await;
        assert_eq!(record["customId"], custom_id.as_str());
    }
}

#[tokio::test]
async fn custom_id_of_129_characters_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for custom_id in ["a".repeat(129), "😀".repeat(129)] {
        let resp = app
            .create_invite(&site, Some(json!({ "customId": custom_id })))
            .await;
        assert_error(resp, 400, 40004).await;
    }
}

#[tokio::test]
async fn non_string_custom_id_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for custom_id in [json!(5), json!(true), json!(["a"]), json!({"a": 1})] {
        let resp = app
            .create_invite(&site, Some(json!({ "customId": custom_id })))
            .await;
        assert_error(resp, 400, 40003).await;
    }
}

async fn post_raw(
    app: &crate::helpers::TestApp,
    site: &crate::helpers::TestSite,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/v1/website/{}/invite", site.site_id)))
        .basic_auth(&site.username, Some(&site.password))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn malformed_json_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for body in ["{", "{\"customId\": }", "{} trailing", "nonsense"] {
        let resp = post_raw(&app, &site, "application/json", body).await;
        assert_error(resp, 400, 40001).await;
    }
}

#[tokio::test]
async fn json_that_is_not_an_object_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for body in ["[]", "\"customId\"", "42", "null"] {
        let resp = post_raw(&app, &site, "application/json", body).await;
        assert_error(resp, 400, 40002).await;
    }
}

#[tokio::test]
async fn a_body_that_is_not_declared_json_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let resp = post_raw(&app, &site, "text/plain", "{\"customId\":\"x\"}").await;
    assert_error(resp, 400, 40005).await;
    let resp = post_raw(
        &app,
        &site,
        "application/x-www-form-urlencoded",
        "customId=x",
    )
    .await;
    assert_error(resp, 400, 40005).await;
    // With charset and in another case it is still JSON.
    let resp = post_raw(
        &app,
        &site,
        "Application/JSON; charset=utf-8",
        "{\"customId\":\"x\"}",
    )
    .await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn site_id_that_is_not_a_uuid_is_rejected() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let resp = app
        .client
        .post(app.url("/v1/website/not-a-uuid/invite"))
        .basic_auth(&site.username, Some(&site.password))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_error(resp, 400, 40006).await;
}

#[tokio::test]
async fn body_over_64_kib_is_rejected_with_413() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let big = format!("{{\"customId\": \"{}\"}}", "a".repeat(70_000));
    let resp = post_raw(&app, &site, "application/json", big).await;
    assert_error(resp, 413, 41301).await;
    // Exactly at the limit the body is read (and here rejected for its content only).
    let padding = " ".repeat(64 * 1024 - 2);
    let at_limit = format!("{{{padding}}}");
    assert_eq!(at_limit.len(), 64 * 1024);
    let resp = post_raw(&app, &site, "application/json", at_limit).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn two_hundred_concurrent_creates_get_distinct_ids_and_are_all_stored() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let client = app.client.clone();
        let url = app.url(&format!("/v1/website/{}/invite", site.site_id));
        let site = site.clone();
        tasks.spawn(async move {
            let resp = client
                .post(url)
                .basic_auth(&site.username, Some(&site.password))
                .json(&json!({ "customId": format!("c{i}") }))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            let body: Value = resp.json().await.unwrap();
            (i, body["inviteId"].as_str().unwrap().to_owned())
        });
    }
    let mut ids = HashSet::new();
    let mut created = Vec::new();
    while let Some(r) = tasks.join_next().await {
        let (i, id) = r.unwrap();
        assert!(ids.insert(id.clone()), "duplicate id {id}");
        created.push((i, id));
    }
    assert_eq!(ids.len(), 200);
    for (i, id) in created {
        let record = app.status_record(&site, &id).await;
        assert_eq!(record["customId"], format!("c{i}"));
    }
}
