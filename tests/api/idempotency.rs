//! docs/api.md#retrying-a-create-safely-idempotency-key: `Idempotency-Key` makes a create safe to retry.

use crate::helpers::{assert_error, spawn_app, TestApp, TestSite};
use reqwest::header::HeaderValue;
use serde_json::{json, Value};
use std::collections::HashSet;

const INVITE: reqwest::Method = reqwest::Method::POST;

/// A create with `key` (raw header bytes) and `body` sent as its exact bytes.
async fn create_with_key(
    app: &TestApp,
    site: &TestSite,
    key: &[u8],
    body: &str,
) -> reqwest::Response {
    app.site_request(site, INVITE, "/invite")
        .header("idempotency-key", HeaderValue::from_bytes(key).unwrap())
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

fn replayed(resp: &reqwest::Response) -> Option<&str> {
    resp.headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn a_repeat_with_the_same_key_and_body_answers_the_first_200_again_and_creates_nothing() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let body = r#"{"customId": "user-42"}"#;
    let first = create_with_key(&app, &site, b"order-1001", body).await;
    assert_eq!(first.status(), 200);
    assert_eq!(replayed(&first), None, "a first create is not a replay");
    let first: Value = first.json().await.unwrap();

    app.clock.advance(60);
    let again = create_with_key(&app, &site, b"order-1001", body).await;
    assert_eq!(again.status(), 200);
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.headers()["content-type"], "application/json");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again, first, "same inviteId, url and expires");
    assert_eq!(app.all_invites(&site, "").await.len(), 1, "nothing created");
}

#[tokio::test]
async fn a_replay_answers_the_first_invite_even_after_it_changed() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let first: Value = create_with_key(&app, &site, b"k", "")
        .await
        .json()
        .await
        .unwrap();
    let id = first["inviteId"].as_str().unwrap();
    assert_eq!(app.verify(id).await.status(), 200);
    let again = create_with_key(&app, &site, b"k", "").await;
    assert_eq!(replayed(&again), Some("true"));
    assert_eq!(again.json::<Value>().await.unwrap(), first);
}

#[tokio::test]
async fn the_same_key_with_a_different_body_is_422_and_creates_nothing() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let resp = create_with_key(&app, &site, b"k-1", r#"{"customId":"a"}"#).await;
    assert_eq!(resp.status(), 200);
    // Byte for byte: the same JSON spelled differently is a different body.
    for other in [r#"{"customId":"b"}"#, r#"{"customId": "a"}"#, "", "{}"] {
        let resp = create_with_key(&app, &site, b"k-1", other).await;
        assert_eq!(replayed(&resp), None);
        assert_error(resp, 422, 42201).await;
    }
    assert_eq!(app.all_invites(&site, "").await.len(), 1);
}

#[tokio::test]
async fn keys_are_remembered_for_24_hours() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let first: Value = create_with_key(&app, &site, b"day", "{}")
        .await
        .json()
        .await
        .unwrap();
    app.clock.advance(24 * 60 * 60 - 1);
    let resp = create_with_key(&app, &site, b"day", "{}").await;
    assert_eq!(replayed(&resp), Some("true"));
    assert_eq!(resp.json::<Value>().await.unwrap(), first);

    app.clock.advance(1);
    let resp = create_with_key(&app, &site, b"day", "{}").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(replayed(&resp), None, "24 hours on, the key is new again");
    let fresh: Value = resp.json().await.unwrap();
    assert_ne!(fresh["inviteId"], first["inviteId"]);
    // And the new use is remembered in turn.
    let resp = create_with_key(&app, &site, b"day", "{}").await;
    assert_eq!(resp.json::<Value>().await.unwrap(), fresh);
}

#[tokio::test]
async fn keys_are_per_site() {
    let app = spawn_app().await;
    let one = app.create_site().await;
    let two = app.create_site().await;
    let a: Value = create_with_key(&app, &one, b"shared", "{}")
        .await
        .json()
        .await
        .unwrap();
    let resp = create_with_key(&app, &two, b"shared", "{}").await;
    assert_eq!(replayed(&resp), None);
    let b: Value = resp.json().await.unwrap();
    assert_ne!(a["inviteId"], b["inviteId"]);
}

#[tokio::test]
async fn malformed_idempotency_keys_are_400() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let long = vec![b'k'; 256];
    // (DEL and other control characters cannot travel in a header at all.)
    let bad: [&[u8]; 4] = [b"", &long, b"tab\there", "caf\u{e9}".as_bytes()];
    for key in bad {
        let resp = create_with_key(&app, &site, key, "{}").await;
        assert_error(resp, 400, 40013).await;
    }
    let two = app
        .site_request(&site, INVITE, "/invite")
        .header("idempotency-key", "a")
        .header("idempotency-key", "b")
        .send()
        .await
        .unwrap();
    assert_error(two, 400, 40013).await;
    assert!(app.all_invites(&site, "").await.is_empty());
    // The bounds themselves are fine.
    let longest = vec![b'~'; 255];
    for key in [&b"! ~"[..], &longest] {
        assert_eq!(create_with_key(&app, &site, key, "{}").await.status(), 200);
    }
}

#[tokio::test]
async fn only_successful_creates_are_remembered() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let too_long = json!({"customId": "x".repeat(129)}).to_string();
    let resp = create_with_key(&app, &site, b"retry-me", &too_long).await;
    assert_error(resp, 400, 40004).await;
    let resp = create_with_key(&app, &site, b"retry-me", r#"{"customId":"ok"}"#).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        replayed(&resp),
        None,
        "the failed request was not remembered"
    );
}

#[tokio::test]
async fn erasing_the_invite_forgets_its_key() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let first: Value = create_with_key(&app, &site, b"gone", "{}")
        .await
        .json()
        .await
        .unwrap();
    let id = first["inviteId"].as_str().unwrap();
    assert_eq!(app.erase(&site, id).await.status(), 204);
    let resp = create_with_key(&app, &site, b"gone", "{}").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(replayed(&resp), None);
    let second: Value = resp.json().await.unwrap();
    assert_ne!(second["inviteId"], first["inviteId"]);
}

#[tokio::test]
async fn twenty_parallel_creates_with_one_key_make_one_invite() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let body = r#"{"customId":"checkout-7"}"#;
    let answers = futures_util::future::join_all(
        (0..20).map(|_| create_with_key(&app, &site, b"one-checkout", body)),
    )
    .await;
    let mut ids = HashSet::new();
    let mut fresh = 0;
    for resp in answers {
        assert_eq!(resp.status(), 200);
        if replayed(&resp).is_none() {
            fresh += 1;
        }
        let invite: Value = resp.json().await.unwrap();
        ids.insert(invite["inviteId"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 1, "every answer names the same invite");
    assert_eq!(fresh, 1, "one create, nineteen replays");
    let listed = app.all_invites(&site, "").await;
    assert_eq!(listed.len(), 1, "one invite stored");
    assert!(ids.contains(listed[0]["inviteId"].as_str().unwrap()));
}
