use crate::helpers::{assert_error, spawn_app, spawn_app_with, VERIFIER_TOKEN};
use serde_json::{json, Value};

#[tokio::test]
async fn pending_becomes_expired_exactly_at_expires() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    app.clock.advance(86_399);
    assert_eq!(app.status_record(&site, id).await["status"], "pending");
    app.clock.advance(1);
    assert_eq!(app.status_record(&site, id).await["status"], "expired");
}

#[tokio::test]
async fn verifier_moves_pending_to_verified_and_answers_the_record() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "c-1"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    let resp = app.verify(id).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!({"inviteId": id, "url": invite["url"], "status": "verified", "customId": "c-1"})
    );
    assert_eq!(app.status_record(&site, id).await["status"], "verified");
}

#[tokio::test]
async fn verifying_twice_is_idempotent() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let resp = app.verify(&id).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "verified");
}

#[tokio::test]
async fn verified_stays_verified_after_expiry() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    app.clock.advance(100);
    assert_eq!(app.verify(&id).await.status(), 200);
    app.clock.advance(10 * 86_400);
    assert_eq!(app.status_record(&site, &id).await["status"], "verified");
    // And a repeated report after expiry is still a success.
    assert_eq!(app.verify(&id).await.status(), 200);
}

#[tokio::test]
async fn an_expired_invite_cannot_be_verified() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    app.clock.advance(86_400);
    assert_error(app.verify(&id).await, 409, 40901).await;
    assert_eq!(app.status_record(&site, &id).await["status"], "expired");
}

#[tokio::test]
async fn verifying_an_unknown_invite_is_404() {
    let app = spawn_app().await;
    for id in ["AAAAAAAAAAAAAAAAAAAAAA", "x"] {
        assert_error(app.verify(id).await, 404, 40401).await;
    }
}

#[tokio::test]
async fn verifier_needs_the_right_bearer_token() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    let url = app.url(&format!("/v1/verifier/invite/{id}"));
    let body = json!({"outcome": "verified"});
    let none = app.client.post(&url).json(&body).send().await.unwrap();
    assert_error(none, 401, 40103).await;
    let wrong = app
        .client
        .post(&url)
        .bearer_auth("not-the-token")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        wrong.headers()["www-authenticate"],
        "Bearer realm=\"agegate-verifier\""
    );
    assert_error(wrong, 401, 40103).await;
    // Site credentials are not the verifier's.
    let basic = app
        .client
        .post(&url)
        .basic_auth(&site.username, Some(&site.password))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_error(basic, 401, 40103).await;
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
}

#[tokio::test]
async fn without_a_configured_token_the_verifier_api_answers_401() {
    let app = spawn_app_with(|s| s.verifier_token = None).await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    let resp = app
        .client
        .post(app.url(&format!("/v1/verifier/invite/{id}")))
        .bearer_auth(VERIFIER_TOKEN)
        .json(&json!({"outcome": "verified"}))
        .send()
        .await
        .unwrap();
    assert_error(resp, 401, 40103).await;
}

#[tokio::test]
async fn verifier_outcome_must_be_verified() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    for body in [
        json!({}),
        json!({"outcome": "failed"}),
        json!({"outcome": 1}),
    ] {
        let resp = app
            .client
            .post(app.url(&format!("/v1/verifier/invite/{id}")))
            .bearer_auth(VERIFIER_TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_error(resp, 400, 40008).await;
    }
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
}
