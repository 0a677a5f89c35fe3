//! Webhooks under the real binary: a delivery outlives a restart, operators list
//! deliveries and queue one again with the CLI, and `serve` takes its settings from the
//! environment.

use crate::helpers::{
    agegate, cli_site, poll, run_cli, temp_db, ServerProcess, TestDb, TestSite, VERIFIER_TOKEN,
};
use crate::receiver::{signed_by, TestReceiver};
use crate::webhooks::FIVE_SECONDS;
use std::time::Duration;

/// `agegate site deliveries --json` until `done` holds, for up to 5 s; the listing.
pub async fn wait_listing(
    db: &TestDb,
    site: &TestSite,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let listing = || {
        let (code, stdout, stderr) = run_cli(db, &["site", "deliveries", &site.site_id, "--json"]);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()
    };
    let done = &done;
    let held = poll(FIVE_SECONDS, || {
        let listing = listing();
        async move { done(&listing).then_some(listing) }
    })
    .await;
    held.unwrap_or_else(listing)
}

#[tokio::test]
async fn a_pending_delivery_survives_a_restart_while_the_receiver_was_down() {
    // Reserve a port, then leave it closed: the receiver is "down".
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (_dir, db) = temp_db();
    let hook = format!("http://{port}/hook");
    let (site, created) = cli_site(&db, &["--webhook-url", &hook]);
    let flags = [
        "--allow-private-webhooks",
        "--webhook-retry-schedule",
        "1s,1s,1s,1s,1s",
        "--verifier-token",
        VERIFIER_TOKEN,
    ];
    let mut first = ServerProcess::start(&db, &flags);
    let invite = first.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(first.verify(id).await.status(), 200);
    // Once the first attempt has failed (connection refused), stop the server.
    wait_listing(&db, &site, |l| l[0]["attempts"][0]["error"].is_string()).await;
    first.stop().await;
    let listing = wait_listing(&db, &site, |_| true).await;
    assert_eq!(listing[0]["state"], "pending");
    assert!(listing[0]["attempts"][0]["error"].is_string());

    let receiver = TestReceiver::start_on(port).await;
    let _second = ServerProcess::start(&db, &flags);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1, "delivered by the restarted server");
    assert_eq!(got[0].json()["data"]["inviteId"], id);
    assert!(signed_by(
        created["webhookSecret"].as_str().unwrap(),
        &got[0]
    ));
}

#[tokio::test]
async fn operators_can_list_deliveries_and_queue_one_again() {
    let receiver = TestReceiver::start().await;
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--webhook-url", &receiver.url]);
    let server = ServerProcess::start(
        &db,
        &[
            "--allow-private-webhooks",
            "--verifier-token",
            VERIFIER_TOKEN,
        ],
    );
    let invite = server.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(server.verify(id).await.status(), 200);
    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    let event_id = got[0].header("webhook-id").to_owned();

    let listing = wait_listing(&db, &site, |l| l[0]["state"] == "delivered").await;
    assert_eq!(listing[0]["eventId"], event_id.as_str());
    assert_eq!(listing[0]["type"], "invite.verified");
    assert_eq!(listing[0]["inviteId"], id);
    assert_eq!(listing[0]["state"], "delivered");
    assert_eq!(listing[0]["lastStatus"], 200);
    assert_eq!(listing[0]["nextAttemptAt"], serde_json::Value::Null);
    assert_eq!(listing[0]["attempts"][0]["httpStatus"], 200);
    let (_, text, _) = run_cli(&db, &["site", "deliveries", &site.site_id]);
    assert!(
        text.contains(&event_id) && text.contains("HTTP 200"),
        "{text}"
    );

    let (code, _, stderr) = run_cli(&db, &["webhook", "redeliver", &event_id]);
    assert_eq!(code, 0, "{stderr}");
    let got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got.len(), 2, "sent again");
    assert_eq!(got[1].header("webhook-id"), event_id);
    assert_eq!(got[1].body, got[0].body);

    let (code, _, stderr) = run_cli(&db, &["webhook", "redeliver", "evt_nope"]);
    assert_ne!(code, 0);
    assert!(stderr.trim().contains("evt_nope") && stderr.lines().count() == 1);
    let (code, _, _) = run_cli(
        &db,
        &["site", "deliveries", "6f9619ff-8b86-d011-b42d-00cf4fc964ff"],
    );
    assert_ne!(code, 0);
    let out = agegate()
        .args(["webhook", "redeliver", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[tokio::test]
async fn serve_takes_its_settings_from_the_environment_too() {
    let receiver = TestReceiver::start().await;
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--webhook-url", &receiver.url]);
    let server = ServerProcess::start_with_env(
        &db,
        &[],
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("AGEGATE_PUBLIC_URL", "https://verify.example/"),
            ("AGEGATE_VERIFIER_TOKEN", VERIFIER_TOKEN),
            ("AGEGATE_ALLOW_PRIVATE_WEBHOOKS", "1"),
            ("AGEGATE_WEBHOOK_RETRY_SCHEDULE", "1s,2s,4s"),
        ],
    );
    let invite = server.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    assert_eq!(
        invite["url"],
        format!("https://verify.example/gateway/{id}").as_str()
    );
    assert_eq!(server.verify(id).await.status(), 200);
    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got.len(), 1, "a loopback target is allowed by the variable");
}
