//! docs/api.md#cancelling-and-erasing-an-invite: a site withdraws an invite, or erases it with
//! everything stored about it.

use crate::eu_av::{eu_av_app, invite_with_request};
use crate::helpers::{
    assert_error, eventually, spawn_app, spawn_app_with, spawn_real_time_app, T0,
};
use crate::receiver::TestReceiver;
use crate::wallet::TestIssuer;
use crate::webhooks::{allow_private_with_schedule, events, hooked_site, wait_events};
use agegate::domain::webhook::{DeliveryState, EventType};
use agegate::domain::InviteId;
use serde_json::{json, Value};
use std::time::Duration;

const FIVE_SECONDS: Duration = Duration::from_secs(5);

#[tokio::test]
async fn cancelling_a_pending_invite_expires_it_at_once_and_sends_invite_expired() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "user-5"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    app.clock.advance(10);

    let resp = app.cancel(&site, id).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let record: Value = resp.json().await.unwrap();
    assert_eq!(
        record,
        json!({"inviteId": id, "url": invite["url"], "status": "expired", "customId": "user-5"})
    );
    assert_eq!(app.status_record(&site, id).await["status"], "expired");
    let listed = app.all_invites(&site, "").await;
    assert_eq!(listed[0]["expires"], T0 + 86_400, "expires is unchanged");

    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got.len(), 1, "invite.expired is sent");
    let hook = got[0].json();
    assert_eq!(hook["type"], "invite.expired");
    assert_eq!(hook["data"]["inviteId"], id);
    assert_eq!(hook["data"]["status"], "expired");
    assert_eq!(hook["data"]["method"], Value::Null);
    // The verifier cannot verify it any more.
    assert_error(app.verify(id).await, 409, 40901).await;
}

#[tokio::test]
async fn cancelling_an_expired_invite_changes_nothing() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    let first: Value = app.cancel(&site, &id).await.json().await.unwrap();
    let again = app.cancel(&site, &id).await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    // One past its time (whether or not the sweeper has been) is expired too.
    let late = app.new_invite_id(&site, None).await;
    app.clock.advance(86_400);
    let resp = app.cancel(&site, &late).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<Value>().await.unwrap()["status"], "expired");

    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e.len() == 2 && e.iter().all(|e| e.state == DeliveryState::Delivered)
    })
    .await;
    assert_eq!(events.len(), 2, "one invite.expired each, no more");
    assert!(events
        .iter()
        .all(|e| e.event_type == EventType::InviteExpired));
}

#[tokio::test]
async fn a_verified_invite_cannot_be_cancelled() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    assert_error(app.cancel(&site, &id).await, 409, 40902).await;
    assert_eq!(app.status_record(&site, &id).await["status"], "verified");
}

#[tokio::test]
async fn cancel_and_erase_answer_404_for_another_sites_or_an_unknown_invite() {
    let app = spawn_app().await;
    let mine = app.create_site().await;
    let theirs = app.create_site().await;
    let their_invite = app.new_invite_id(&theirs, None).await;
    for id in [
        their_invite.as_str(),
        "AAAAAAAAAAAAAAAAAAAAAA",
        "not-an-invite",
    ] {
        assert_error(app.cancel(&mine, id).await, 404, 40401).await;
        assert_error(app.erase(&mine, id).await, 404, 40401).await;
    }
    assert_eq!(
        app.status_record(&theirs, &their_invite).await["status"],
        "pending"
    );
    // Credentials are checked first, as for reading an invite.
    let path = format!("/v1/website/{}/invite/{their_invite}", theirs.site_id);
    let anonymous = app.client.delete(app.url(&path)).send().await.unwrap();
    assert_error(anonymous, 401, 40101).await;
    let wrong_site = app
        .client
        .post(app.url(&format!("{path}/cancel")))
        .basic_auth(&mine.username, Some(&mine.password))
        .send()
        .await
        .unwrap();
    assert_error(wrong_site, 403, 40301).await;
}

#[tokio::test]
async fn erasing_an_invite_leaves_nothing_of_it() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = hooked_site(&app, &receiver).await;
    let keep = app.new_invite_id(&site, None).await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "erase-me"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(app.verify(id).await.status(), 200);
    assert_eq!(app.verify(&keep).await.status(), 200);
    wait_events(&app, &site, FIVE_SECONDS, |e| {
        e.len() == 2 && e.iter().all(|e| e.state == DeliveryState::Delivered)
    })
    .await;

    let resp = app.erase(&site, id).await;
    assert_eq!(resp.status(), 204);
    assert!(resp.bytes().await.unwrap().is_empty());

    assert_error(app.get_invite(&site, id).await, 404, 40401).await;
    let page = app
        .client
        .get(invite["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 404);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let listed = app.all_invites(&site, "customId=erase-me").await;
    assert!(listed.is_empty());
    let left = events(&app, &site).await;
    assert_eq!(left.len(), 1, "its delivered event and attempts are gone");
    assert_eq!(left[0].invite_id, keep);
    assert_error(app.erase(&site, id).await, 404, 40401).await;
    assert_eq!(app.status_record(&site, &keep).await["status"], "verified");
}

#[tokio::test]
async fn an_erased_invite_gets_no_further_webhook() {
    let receiver = TestReceiver::start().await;
    receiver.answer_always(500);
    let app = spawn_real_time_app(allow_private_with_schedule(&[300, 300, 300, 300])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    assert_eq!(receiver.wait_for(1, FIVE_SECONDS).await.len(), 1);

    assert_eq!(app.erase(&site, &id).await.status(), 204);
    let after_erase = receiver.received().len();
    // Its pending event is gone with it, so no retry can be claimed ...
    assert!(
        events(&app, &site).await.is_empty(),
        "its pending event is gone"
    );
    // ... and once the server has stopped, no attempt is under way: one already on the
    // wire when it was erased may have landed, nothing after it.
    app.stop().await;
    assert!(receiver.received().len() <= after_erase + 1);
}

#[tokio::test]
async fn erasing_while_a_delivery_is_in_flight_neither_crashes_the_worker_nor_resurrects_it() {
    let receiver = TestReceiver::start().await;
    receiver.hold_next(1); // the first request hangs until the client's timeout
    let app = spawn_real_time_app(|s| {
        allow_private_with_schedule(&[200])(s);
        s.webhook_timeout = Duration::from_millis(300);
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await;
    let site = hooked_site(&app, &receiver).await;
    let stuck = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&stuck).await.status(), 200);
    assert_eq!(
        receiver.wait_for(1, FIVE_SECONDS).await.len(),
        1,
        "in flight"
    );

    assert_eq!(app.erase(&site, &stuck).await.status(), 204);
    // The attempt times out and is recorded against an event that no longer exists.
    eventually("the timed-out attempt recorded", FIVE_SECONDS, || async {
        let metrics = app.metrics().await;
        metrics.contains(r#"agegate_webhook_attempts_total{outcome="retry"} 1"#)
    })
    .await;
    assert!(events(&app, &site).await.is_empty(), "nothing came back");
    // With no event left to claim, the retry it was due is never made.
    assert_eq!(receiver.received().len(), 1, "and it was not retried");

    let next = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&next).await.status(), 200);
    let got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got.len(), 2, "the worker still delivers");
    assert_eq!(got[1].json()["data"]["inviteId"], next.as_str());
}

#[tokio::test]
async fn erasing_an_invite_drops_its_presentation_requests() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, request) = invite_with_request(&app, Default::default()).await;
    let id = InviteId::parse(invite["inviteId"].as_str().unwrap()).unwrap();
    let now = agegate::clock::Clock::now(app.clock.as_ref());
    assert!(app.store.live_request(&id, now).await.unwrap().is_some());
    assert!(app
        .store
        .request(&id, &request.state)
        .await
        .unwrap()
        .is_some());

    assert_eq!(app.erase(&site, id.as_str()).await.status(), 204);
    assert!(app.store.live_request(&id, now).await.unwrap().is_none());
    assert!(app
        .store
        .request(&id, &request.state)
        .await
        .unwrap()
        .is_none());
    let answer = crate::eu_av::answer(&app, &request, "{}").await;
    assert_error(answer, 404, 40401).await;
}
