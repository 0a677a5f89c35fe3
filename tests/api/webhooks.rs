//! docs/webhooks.md#delivery, webhooks: events are signed, delivered at least once, retried on the
//! schedule, and sent once however many servers share the database.

use crate::helpers::{
    poll, spawn_app_with, spawn_beside, spawn_real_time_app, SiteOptions, TestApp, TestSite, T0,
};
use crate::receiver::{signed_by, TestReceiver};
use agegate::domain::webhook::DeliveryState;
use agegate::domain::{SiteId, WebhookSecret};
use agegate::store::EventRecord;
use serde_json::json;
use std::collections::HashSet;
use std::time::{Duration, Instant};

pub const FIVE_SECONDS: Duration = Duration::from_secs(5);

pub fn allow_private_with_schedule(
    schedule: &'static [u64],
) -> impl FnOnce(&mut agegate::config::Settings) {
    move |s| {
        s.allow_private_webhooks = true;
        s.webhook_retry_schedule = schedule
            .iter()
            .map(|ms| Duration::from_millis(*ms))
            .collect();
    }
}

pub async fn hooked_site(app: &TestApp, receiver: &TestReceiver) -> TestSite {
    app.create_site_with(SiteOptions {
        webhook_url: Some(&receiver.url),
        ..Default::default()
    })
    .await
}

pub async fn events(app: &TestApp, site: &TestSite) -> Vec<EventRecord> {
    app.store
        .deliveries(SiteId::parse(&site.site_id).unwrap(), 100)
        .await
        .unwrap()
}

/// Polls the site's events until `done` holds, for up to `timeout`; the last ones read.
pub async fn wait_events(
    app: &TestApp,
    site: &TestSite,
    timeout: Duration,
    done: impl Fn(&[EventRecord]) -> bool,
) -> Vec<EventRecord> {
    let done = &done;
    let held = poll(timeout, || async move {
        let events = events(app, site).await;
        done(&events).then_some(events)
    })
    .await;
    match held {
        Some(events) => events,
        None => events(app, site).await,
    }
}

pub fn all_delivered(events: &[EventRecord]) -> bool {
    events.iter().all(|e| e.state == DeliveryState::Delivered)
}

#[tokio::test]
async fn a_verified_invite_is_delivered_signed_within_5_seconds() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "user-9"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    let verified_at = Instant::now();
    assert_eq!(app.verify(id).await.status(), 200);

    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got.len(), 1, "delivered within 5 s");
    let hook = &got[0];
    assert!(hook.at - verified_at < FIVE_SECONDS);
    assert_eq!(hook.path, "/hook");
    assert_eq!(hook.header("content-type"), "application/json");
    assert!(hook.header("webhook-id").starts_with("evt_"));
    assert_eq!(hook.header("webhook-timestamp"), T0.to_string());
    assert!(signed_by(&site.webhook_secret, hook), "signature verifies");
    assert!(!signed_by(WebhookSecret::generate().expose(), hook));
    let mut body = hook.json();
    let receipt = body["data"]
        .as_object_mut()
        .unwrap()
        .remove("receipt")
        .expect("an invite.verified event carries the receipt");
    let served = app.receipt(&site, id).await;
    assert_eq!(served.status(), 200);
    let served: serde_json::Value = served.json().await.unwrap();
    assert_eq!(
        receipt, served["receipt"],
        "the same receipt as the API serves"
    );
    assert_eq!(
        body,
        json!({
            "type": "invite.verified",
            "timestamp": "2027-01-15T08:00:00Z",
            "data": {
                "siteId": site.site_id,
                "inviteId": id,
                "url": invite["url"],
                "status": "verified",
                "customId": "user-9",
                "method": "verifier",
            }
        })
    );
    // Verifying again is idempotent: no second event. An event is queued in the same
    // transaction as its change, so once the answer is in, the outbox says it all.
    assert_eq!(app.verify(id).await.status(), 200);
    let events = wait_events(&app, &site, FIVE_SECONDS, all_delivered).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].state, DeliveryState::Delivered);
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(events[0].attempts.len(), 1);
    assert_eq!(events[0].attempts[0].http_status, Some(200));
}

#[tokio::test]
async fn failed_attempts_are_retried_with_the_same_webhook_id() {
    let receiver = TestReceiver::start().await;
    receiver.answer_next(&[500, 503]);
    let app = spawn_real_time_app(allow_private_with_schedule(&[1000, 1000, 1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;

    let got = receiver.wait_for(3, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 3, "two failures, then success");
    let ids: HashSet<_> = got.iter().map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), 1, "the same webhook-id on every attempt");
    assert!(got.iter().all(|r| signed_by(&site.webhook_secret, r)));
    assert!(got.iter().all(|r| r.body == got[0].body), "the same body");
    for pair in got.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(950) && gap < Duration::from_millis(2000),
            "waited the schedule (1 s plus at most 10% jitter): {gap:?}"
        );
    }
    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e[0].state == DeliveryState::Delivered
    })
    .await;
    let statuses: Vec<_> = events[0].attempts.iter().map(|a| a.http_status).collect();
    assert_eq!(statuses, [Some(500), Some(503), Some(200)]);
}

#[tokio::test]
async fn an_event_fails_only_after_the_last_attempt_of_the_schedule() {
    let receiver = TestReceiver::start().await;
    receiver.answer_always(500);
    let app = spawn_real_time_app(allow_private_with_schedule(&[200, 200])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e.first().is_some_and(|e| e.state == DeliveryState::Failed)
    })
    .await;
    assert_eq!(events[0].state, DeliveryState::Failed);
    assert_eq!(
        events[0].attempts.len(),
        3,
        "first attempt plus the two retries"
    );
    assert_eq!(receiver.received().len(), 3);
}

#[tokio::test]
async fn redirects_are_not_followed_and_count_as_failures() {
    let receiver = TestReceiver::start().await;
    receiver.answer_next(&[307]);
    let app = spawn_real_time_app(allow_private_with_schedule(&[300])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    let got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|r| r.path == "/hook"),
        "never followed to /elsewhere"
    );
    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e[0].state == DeliveryState::Delivered
    })
    .await;
    assert_eq!(events[0].attempts[0].http_status, Some(307));
}

#[tokio::test]
async fn a_loopback_target_is_never_called_without_the_flag() {
    let receiver = TestReceiver::start().await;
    let app = spawn_real_time_app(|s| {
        s.allow_private_webhooks = false;
        s.webhook_retry_schedule = vec![Duration::from_millis(200)];
    })
    .await;
    // Both an IP literal and a name that resolves to loopback.
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    for url in [receiver.url.as_str(), by_name.as_str()] {
        let site = app
            .create_site_with(SiteOptions {
                webhook_url: Some(url),
                ..Default::default()
            })
            .await;
        let id = app.new_invite_id(&site, None).await;
        app.verify(&id).await;
        let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
            e.first().is_some_and(|e| e.state == DeliveryState::Failed)
        })
        .await;
        assert_eq!(events[0].state, DeliveryState::Failed, "{url}");
        let error = events[0].attempts[0].error.as_deref().unwrap_or_default();
        assert!(error.contains("non-public"), "{url}: {error}");
    }
    assert!(
        receiver.received().is_empty(),
        "no request reached the receiver"
    );
}

#[tokio::test]
async fn an_expired_invite_is_announced_within_60_seconds_of_expires() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "late"})))
        .await;
    app.clock.advance(86_399);
    // A sweep a second before `expires` queues nothing, so nothing can be sent.
    assert_eq!(app.sweep().await, 0, "not before expires");
    assert!(events(&app, &site).await.is_empty(), "not before expires");
    app.clock.advance(1);
    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got.len(), 1);
    let body = got[0].json();
    assert_eq!(body["type"], "invite.expired");
    assert_eq!(body["data"]["status"], "expired");
    assert_eq!(body["data"]["inviteId"], invite["inviteId"]);
    assert_eq!(body["data"]["customId"], "late");
    assert!(body["data"]["method"].is_null(), "method is null: {body}");
    assert!(signed_by(&site.webhook_secret, &got[0]));
    // A verified invite is never announced as expired.
    let verified = app.new_invite_id(&site, None).await;
    app.verify(&verified).await;
    receiver.wait_for(2, FIVE_SECONDS).await;
    app.clock.advance(2 * 86_400);
    assert_eq!(app.sweep().await, 0, "a verified invite does not expire");
    let events = wait_events(&app, &site, FIVE_SECONDS, all_delivered).await;
    assert_eq!(events.len(), 2, "no event but the two sent");
    let types: Vec<_> = receiver
        .received()
        .iter()
        .map(|r| r.json()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["invite.expired", "invite.verified"]);
}

#[tokio::test]
async fn after_rotation_both_secrets_sign_for_24_hours() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let new_secret = WebhookSecret::generate();
    let site_id = SiteId::parse(&site.site_id).unwrap();
    app.store
        .rotate_webhook_secret(site_id, new_secret.clone(), T0)
        .await
        .unwrap();

    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got[0].header("webhook-signature").split(' ').count(), 2);
    assert!(signed_by(&site.webhook_secret, &got[0]), "old secret");
    assert!(signed_by(new_secret.expose(), &got[0]), "new secret");

    app.clock.advance(86_400);
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    let got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got[1].header("webhook-signature").split(' ').count(), 1);
    assert!(signed_by(new_secret.expose(), &got[1]));
    assert!(!signed_by(&site.webhook_secret, &got[1]));
}

#[tokio::test]
async fn a_site_without_a_webhook_url_gets_no_events() {
    let app = spawn_app_with(|_| {}).await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    app.verify(&id).await;
    assert!(events(&app, &site).await.is_empty());
}

#[tokio::test]
async fn several_servers_on_one_database_send_each_event_once() {
    let receiver = TestReceiver::start().await;
    let a = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let b = spawn_beside(&a, allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&a, &receiver).await;
    let mut ids = Vec::new();
    for i in 0..40 {
        let app = if i % 2 == 0 { &a } else { &b };
        let id = app.new_invite_id(&site, None).await;
        assert_eq!(app.verify(&id).await.status(), 200);
        ids.push(id);
    }
    let got = receiver.wait_for(40, FIVE_SECONDS).await;
    let events = wait_events(&a, &site, FIVE_SECONDS, all_delivered).await;
    assert_eq!(events.len(), 40);
    assert!(
        events.iter().all(|e| e.attempts.len() == 1),
        "one attempt each"
    );
    // Every event is delivered, so none can be claimed again; once both servers have
    // stopped, no attempt is under way either, and the count is final.
    a.stop().await;
    b.stop().await;
    let got_after = receiver.received();
    assert_eq!(got_after.len(), 40, "each event exactly once");
    let delivered: HashSet<_> = got
        .iter()
        .map(|r| r.json()["data"]["inviteId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(delivered, ids.into_iter().collect());
}

#[tokio::test]
async fn delivery_latency_over_100_events_stays_under_5_seconds() {
    let receiver = TestReceiver::start().await;
    let app = spawn_real_time_app(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let mut sent = std::collections::HashMap::new();
    for _ in 0..100 {
        let id = app.new_invite_id(&site, None).await;
        assert_eq!(app.verify(&id).await.status(), 200);
        sent.insert(id, Instant::now());
    }
    let got = receiver.wait_for(100, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 100);
    let mut latencies: Vec<Duration> = got
        .iter()
        .map(|r| r.at - sent[r.json()["data"]["inviteId"].as_str().unwrap()])
        .collect();
    latencies.sort();
    let (median, worst) = (latencies[50], latencies[99]);
    eprintln!("webhook delivery latency over 100 events: median {median:?}, worst {worst:?}");
    assert!(worst < FIVE_SECONDS);
}
