//! docs/operations.md#data-inventory-and-retention and docs/operations.md#credentials-and-site-delete: nothing is kept longer than needed, and a
//! site can be erased with everything it owns.

use crate::helpers::{
    assert_error, cli_site, client, eventually, run_cli, serve_outcome, spawn_app_with, temp_db,
    ServerProcess, TestApp, TestDb, T0,
};
use crate::receiver::TestReceiver;
use crate::webhooks::{allow_private_with_schedule, events, hooked_site, wait_events};
use agegate::clock::ManualClock;
use agegate::config::Settings;
use agegate::domain::webhook::DeliveryState;
use agegate::retention::Retention;
use agegate::startup::Application;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const DAY: i64 = 86_400;

fn retention(keep: Retention) -> impl FnOnce(&mut Settings) {
    move |s| {
        s.retention = keep;
        s.retention_interval = Duration::from_millis(100);
        s.allow_private_webhooks = true;
    }
}

/// Polls until GET of `id` answers `status`, for up to 5 s.
async fn wait_status(app: &TestApp, site: &crate::helpers::TestSite, id: &str, status: u16) {
    eventually(
        &format!("{id} answers {status}"),
        Duration::from_secs(5),
        || async { app.get_invite(site, id).await.status() == status },
    )
    .await;
}

/// One retention round now, as the server's own are made; what is kept after it is
/// kept until the clock moves.
async fn round(app: &TestApp, keep: Retention) {
    let clock: &dyn agegate::clock::Clock = app.clock.as_ref();
    agegate::retention::round(app.store.as_ref(), clock, keep, &CancellationToken::new()).await;
}

#[tokio::test]
async fn invites_settled_longer_ago_than_the_retention_are_erased_with_their_events() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(retention(Retention::days(1))).await;
    let site = hooked_site(&app, &receiver).await;
    let verified = app.new_invite_id(&site, None).await;
    let cancelled = app.new_invite_id(&site, None).await;
    let pending = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&verified).await.status(), 200);
    assert_eq!(app.cancel(&site, &cancelled).await.status(), 200);
    wait_events(&app, &site, Duration::from_secs(5), |e| {
        e.len() == 2 && e.iter().all(|e| e.state == DeliveryState::Delivered)
    })
    .await;

    // A day later: the pending one has just expired (settled now), the others a day ago.
    app.clock.advance(DAY);
    let recent = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&recent).await.status(), 200);
    round(&app, Retention::days(1)).await;
    for id in [&verified, &cancelled, &pending, &recent] {
        assert_eq!(
            app.get_invite(&site, id).await.status(),
            200,
            "{id} is kept"
        );
    }

    app.clock.advance(1);
    wait_status(&app, &site, &verified, 404).await;
    wait_status(&app, &site, &cancelled, 404).await;
    for id in [&pending, &recent] {
        assert_eq!(
            app.get_invite(&site, id).await.status(),
            200,
            "{id} is kept"
        );
    }
    let left: Vec<_> = events(&app, &site)
        .await
        .into_iter()
        .map(|e| e.invite_id)
        .collect();
    assert!(
        !left.contains(&verified) && !left.contains(&cancelled),
        "{left:?}"
    );

    app.clock.advance(DAY);
    wait_status(&app, &site, &pending, 404).await;
    wait_status(&app, &site, &recent, 404).await;
    assert!(app.all_invites(&site, "").await.is_empty());
}

#[tokio::test]
async fn a_retention_of_0_keeps_every_invite() {
    let app = spawn_app_with(retention(Retention::KEEP_ALL)).await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    app.clock.advance(10 * 365 * DAY);
    round(&app, Retention::KEEP_ALL).await;
    assert_eq!(app.status_record(&site, &id).await["status"], "verified");
}

#[tokio::test]
async fn retention_runs_at_start() {
    let keep_all = spawn_app_with(retention(Retention::KEEP_ALL)).await;
    let site = keep_all.create_site().await;
    let id = keep_all.new_invite_id(&site, None).await;
    assert_eq!(keep_all.verify(&id).await.status(), 200);
    // Two days later a server that runs retention only hourly starts on the database.
    let mut settings = Settings::new("127.0.0.1:0");
    settings.retention = Retention::days(1);
    settings.retention_interval = Duration::from_secs(3600);
    let store = agegate::store::open(&keep_all.db_url).await.unwrap();
    let clock = Arc::new(ManualClock::new(T0 + 2 * DAY));
    let strict = Application::build(settings, store, clock).await.unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(strict.run_until_stopped(stop.clone()));
    // It erases the invite as it starts.
    wait_status(&keep_all, &site, &id, 404).await;
    stop.cancel();
}

/// An invite that expired by time did so at its `expires`, even while no server ran to
/// notice: retention counts from then, not from when a sweep marked it.
#[tokio::test]
async fn retention_counts_from_expires_for_invites_no_server_saw_expire() {
    let first = spawn_app_with(|s| {
        s.retention = Retention::KEEP_ALL;
        s.sweep_interval = Duration::from_secs(3600);
    })
    .await;
    let site = first.create_site().await;
    let old = first.new_invite_id(&site, None).await;
    first.clock.advance(20);
    let young = first.new_invite_id(&site, None).await;
    // Two days and ten seconds later (no sweep ran meanwhile: both are still stored as
    // pending), a server with a retention of a day starts: `old` expired a day and ten
    // seconds ago, `young` a day less ten seconds ago.
    let mut settings = Settings::new("127.0.0.1:0");
    settings.retention = Retention::days(1);
    settings.retention_interval = Duration::from_secs(3600);
    settings.sweep_interval = Duration::from_secs(3600);
    let store = agegate::store::open(&first.db_url).await.unwrap();
    let clock = Arc::new(ManualClock::new(T0 + 2 * DAY + 10));
    let strict = Application::build(settings, store, clock).await.unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(strict.run_until_stopped(stop.clone()));
    wait_status(&first, &site, &old, 404).await;
    assert_eq!(
        first.get_invite(&site, &young).await.status(),
        200,
        "expired less than the retention ago"
    );
    stop.cancel();
}

#[tokio::test]
async fn idempotency_keys_are_dropped_after_24_hours() {
    let app = spawn_app_with(retention(Retention::KEEP_ALL)).await;
    let site = app.create_site().await;
    let resp = app
        .site_request(&site, reqwest::Method::POST, "/invite")
        .header("idempotency-key", "k")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let dropped = app.store.drop_spent(T0 + DAY - 1, 100).await.unwrap();
    assert_eq!(dropped, 0, "kept for its 24 hours");
    assert_eq!(app.store.drop_spent(T0 + DAY, 100).await.unwrap(), 1);
}

/// The server's first log lines, until it says what retention is in force.
async fn first_lines(db: &TestDb, extra: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let env: Vec<(&str, &str)> = [("AGEGATE_LISTEN", "127.0.0.1:0")]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    let server = ServerProcess::start_with_env(db, extra, &env);
    server.logged("retention").await;
    let mut lines = vec![server.first_line.clone()];
    lines.extend(server.log_lines(""));
    lines
}

#[tokio::test]
async fn the_first_log_lines_say_which_retention_is_in_force() {
    let (_dir, db) = temp_db();
    for (extra, env, says) in [
        (&[][..], &[][..], "retention: 90d"),
        (&["--retention", "36h"][..], &[][..], "retention: 36h"),
        (
            &[][..],
            &[("AGEGATE_RETENTION", "0")][..],
            "retention: 0 (keep every invite)",
        ),
    ] {
        let lines = first_lines(&db, extra, env).await;
        assert!(lines[0].contains("listening on"), "{lines:?}");
        let said = lines
            .into_iter()
            .find(|l| l.contains("retention"))
            .unwrap_or_else(|| panic!("no retention line among the first lines"));
        assert!(said.contains(says), "{said}");
    }

    let (started, err) = serve_outcome(&["--retention".into(), "soon".into()], &[]);
    assert!(!started);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--retention"), "{err}");
}

#[tokio::test]
async fn site_delete_without_yes_changes_nothing_and_says_so() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let (code, out, err) = run_cli(&db, &["site", "delete", &site.site_id]);
    assert_ne!(code, 0);
    assert!(out.is_empty());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--yes"), "{err}");
    let (code, _, _) = run_cli(&db, &["site", "show", &site.site_id]);
    assert_eq!(code, 0, "the site is still there");
}

#[tokio::test]
async fn site_delete_erases_the_site_and_everything_it_owns() {
    let (_dir, db) = temp_db();
    let receiver = TestReceiver::start().await;
    let (site, _) = cli_site(&db, &["--webhook-url", &receiver.url]);
    let (other, _) = cli_site(&db, &[]);
    let server = ServerProcess::start(
        &db,
        &[
            "--verifier-token",
            crate::helpers::VERIFIER_TOKEN,
            "--allow-private-webhooks",
        ],
    );
    let invite = server
        .new_invite(&site, Some(json!({"customId": "c-1"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(server.verify(id).await.status(), 200);
    receiver.wait_for(1, Duration::from_secs(5)).await;
    let other_invite = server.new_invite(&other, None).await;

    let (code, out, err) = run_cli(&db, &["site", "delete", &site.site_id, "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 invite"), "{out}");

    let (code, _, err) = run_cli(&db, &["site", "show", &site.site_id]);
    assert_ne!(code, 0);
    assert!(err.contains("no site"), "{err}");
    let (_, list, _) = run_cli(&db, &["site", "list", "--json"]);
    let list: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "only the other site is left"
    );
    let gateway = client()
        .get(invite["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(gateway.status(), 404);
    // Its credentials are refused, once the server's 2 s credential cache has let go.
    eventually(
        "the deleted site's key refused",
        Duration::from_secs(5),
        || async { server.get_invite(&site, id).await.status() == 401 },
    )
    .await;
    assert_error(server.get_invite(&site, id).await, 401, 40102).await;
    // The other site is untouched.
    let resp = server
        .get_invite(&other, other_invite["inviteId"].as_str().unwrap())
        .await;
    assert_eq!(resp.status(), 200);

    let (code, _, err) = run_cli(&db, &["site", "delete", &site.site_id, "--yes"]);
    assert_ne!(code, 0);
    assert!(err.contains("no site"), "{err}");
}

#[tokio::test]
async fn a_deleted_sites_pending_events_are_not_sent() {
    let receiver = TestReceiver::start().await;
    receiver.answer_always(500);
    let app =
        crate::helpers::spawn_real_time_app(allow_private_with_schedule(&[300, 300, 300])).await;
    let site = hooked_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    assert_eq!(receiver.wait_for(1, Duration::from_secs(5)).await.len(), 1);
    let site_id = agegate::domain::SiteId::parse(&site.site_id).unwrap();
    assert_eq!(app.store.delete_site(site_id).await.unwrap(), Some(1));
    let after = receiver.received().len();
    assert!(app.store.site(site_id).await.unwrap().is_none());
    // Its events went with it, so no retry can be claimed; once the server has stopped,
    // no attempt is under way either (one already on the wire may have landed).
    assert!(events(&app, &site).await.is_empty(), "its events are gone");
    app.stop().await;
    assert!(receiver.received().len() <= after + 1);
}
