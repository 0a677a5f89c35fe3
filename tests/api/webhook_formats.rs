//! docs/webhooks.md#the-everprotec-format-drop-in-for-existing-receivers, webhook formats: `standard` (Standard Webhooks) and `everprotec`, for
//! receivers written for the hosted service this API comes from.

use crate::helpers::{
    cli_site, run_cli, spawn_app_with, temp_db, SiteOptions, TestApp, TestSite, T0,
};
use crate::receiver::{Received, TestReceiver};
use crate::webhooks::{allow_private_with_schedule, events, wait_events};
use agegate::domain::webhook::DeliveryState;
use agegate::domain::{SiteId, WebhookFormat, WebhookSecret};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::time::Duration;

const FIVE_SECONDS: Duration = Duration::from_secs(5);

async fn everprotec_site(app: &TestApp, receiver: &TestReceiver) -> TestSite {
    app.create_site_with(SiteOptions {
        webhook_url: Some(&receiver.url),
        webhook_format: WebhookFormat::Everprotec,
        ..Default::default()
    })
    .await
}

/// What a receiver written for everprotec checks: lowercase hex HMAC-SHA256 of the raw
/// body, keyed with the secret's text.
fn everprotec_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn assert_everprotec(hook: &Received, secret: &str, expected_body: &str) {
    assert_eq!(hook.method, "POST");
    assert_eq!(hook.header("content-type"), "application/json");
    assert_eq!(std::str::from_utf8(&hook.body).unwrap(), expected_body);
    assert_eq!(
        hook.header("x-everprotec-sha256"),
        everprotec_signature(secret, &hook.body)
    );
    assert!(hook.headers.get("webhook-signature").is_none());
}

#[test]
fn site_create_and_update_take_a_webhook_format() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--webhook-format", "everprotec"]);
    let show = || {
        let (code, out, err) = run_cli(&db, &["site", "show", &site.site_id, "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(show()["webhookFormat"], "everprotec");
    let (code, _, err) = run_cli(
        &db,
        &[
            "site",
            "update",
            &site.site_id,
            "--webhook-format",
            "standard",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(show()["webhookFormat"], "standard");
    let (default_site, _) = cli_site(&db, &[]);
    let (_, out, _) = run_cli(&db, &["site", "show", &default_site.site_id, "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["webhookFormat"],
        "standard"
    );

    let (code, out, err) = run_cli(
        &db,
        &[
            "site",
            "update",
            &site.site_id,
            "--webhook-format",
            "Everprotec",
        ],
    );
    assert_ne!(code, 0);
    assert!(out.is_empty());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("standard or everprotec"), "{err}");
}

#[tokio::test]
async fn everprotec_sites_receive_each_verification_as_its_body_signed_with_the_secret() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = everprotec_site(&app, &receiver).await;
    let with_id = app
        .new_invite_id(&site, Some(json!({"customId": "user-9"})))
        .await;
    let without_id = app.new_invite_id(&site, None).await;
    app.clock.advance(7);
    assert_eq!(app.verify(&with_id).await.status(), 200);
    assert_eq!(app.verify(&without_id).await.status(), 200);

    let mut got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got.len(), 2);
    got.sort_by_key(|r| r.body.len());
    let at = T0 + 7;
    assert_everprotec(
        &got[0],
        &site.webhook_secret,
        &format!(r#"{{"inviteId":"{without_id}","customId":null,"timestamp":{at}}}"#),
    );
    assert_everprotec(
        &got[1],
        &site.webhook_secret,
        &format!(r#"{{"inviteId":"{with_id}","customId":"user-9","timestamp":{at}}}"#),
    );
}

#[tokio::test]
async fn everprotec_sites_are_not_told_of_expiry() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = everprotec_site(&app, &receiver).await;
    let cancelled = app.new_invite_id(&site, None).await;
    let expired = app.new_invite_id(&site, None).await;
    assert_eq!(app.cancel(&site, &cancelled).await.status(), 200);
    app.clock.advance(86_400);
    // The other has expired once a sweep has run (this one, or the server's own).
    app.sweep().await;
    assert_eq!(
        app.status_record(&site, &expired).await["status"],
        "expired"
    );
    // With no event queued, there is nothing to send, now or later.
    assert!(
        events(&app, &site).await.is_empty(),
        "no event is even queued"
    );
    assert!(receiver.received().is_empty());
}

#[tokio::test]
async fn everprotec_deliveries_are_retried_and_logged_like_standard_ones() {
    let receiver = TestReceiver::start().await;
    receiver.answer_next(&[503]);
    let app = crate::helpers::spawn_real_time_app(allow_private_with_schedule(&[300])).await;
    let site = everprotec_site(&app, &receiver).await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let got = receiver.wait_for(2, FIVE_SECONDS).await;
    assert_eq!(got.len(), 2, "a failure, then a retry");
    assert_eq!(got[0].body, got[1].body, "the same body on every attempt");
    assert_eq!(
        got[0].header("x-everprotec-sha256"),
        got[1].header("x-everprotec-sha256")
    );
    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e.first()
            .is_some_and(|e| e.state == DeliveryState::Delivered)
    })
    .await;
    let statuses: Vec<_> = events[0].attempts.iter().map(|a| a.http_status).collect();
    assert_eq!(statuses, [Some(503), Some(200)]);
}

#[tokio::test]
async fn everprotec_signs_with_the_current_secret_only_after_a_rotation() {
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = everprotec_site(&app, &receiver).await;
    let fresh = WebhookSecret::generate();
    let rotated = app
        .store
        .rotate_webhook_secret(SiteId::parse(&site.site_id).unwrap(), fresh.clone(), T0)
        .await
        .unwrap();
    assert!(rotated);
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let got = receiver.wait_for(1, FIVE_SECONDS).await;
    assert_eq!(got.len(), 1);
    let header = got[0].header("x-everprotec-sha256");
    assert_eq!(header, everprotec_signature(fresh.expose(), &got[0].body));
    assert_ne!(
        header,
        everprotec_signature(&site.webhook_secret, &got[0].body)
    );
}

/// `JSON.stringify({inviteId, customId, timestamp})` by node.
fn json_stringify(invite_id: &str, custom_id: &str, timestamp: i64) -> String {
    let script =
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const [i,c,t]=JSON.parse(s);\
                  process.stdout.write(JSON.stringify({inviteId:i,customId:c,timestamp:t}))})";
    let mut child = std::process::Command::new("node")
        .args(["-e", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node ({e}); run `bash scripts/setup.sh`"));
    let input = serde_json::to_vec(&json!([invite_id, custom_id, timestamp])).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn everprotec_bodies_are_byte_for_byte_what_json_stringify_writes() {
    let tricky = [
        "plain",
        "quote \" backslash \\ slash /",
        "\n\r\t\u{8}\u{c}",
        "\u{0}\u{1}\u{1f}\u{7f}",
        "é ü ß 日本 😀",
        "\u{2028}\u{2029}",
        "<script>&amp;</script>",
        "\u{fffd}\u{feff}",
    ];
    let receiver = TestReceiver::start().await;
    let app = spawn_app_with(allow_private_with_schedule(&[1000])).await;
    let site = everprotec_site(&app, &receiver).await;
    let mut expected = Vec::new();
    for custom_id in tricky {
        let id = app
            .new_invite_id(&site, Some(json!({ "customId": custom_id })))
            .await;
        assert_eq!(app.verify(&id).await.status(), 200);
        expected.push(json_stringify(&id, custom_id, T0));
    }
    let got = receiver.wait_for(tricky.len(), FIVE_SECONDS).await;
    assert_eq!(got.len(), tricky.len());
    let mut bodies: Vec<String> = got
        .iter()
        .map(|r| String::from_utf8(r.body.to_vec()).unwrap())
        .collect();
    bodies.sort();
    expected.sort();
    assert_eq!(bodies, expected);
}

#[tokio::test]
async fn the_example_receiver_accepts_everprotec_webhooks() {
    use std::io::BufRead;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let app = spawn_app_with(allow_private_with_schedule(&[300, 300])).await;
    let hook = format!("http://127.0.0.1:{port}/hook");
    let site = app
        .create_site_with(SiteOptions {
            webhook_url: Some(&hook),
            webhook_format: WebhookFormat::Everprotec,
            ..Default::default()
        })
        .await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/receiver_everprotec.py"
    );
    let mut child = KillOnDrop(
        std::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .env("WEBHOOK_SECRET", &site.webhook_secret)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run python3 ({e}); run `bash scripts/setup.sh`")),
    );
    let (lines, mut got) = tokio::sync::mpsc::unbounded_channel();
    let stdout = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    let listening = next_line(&mut got).await;
    assert!(listening.contains("receiver on"), "{listening}");
    let id = app
        .new_invite_id(&site, Some(json!({"customId": "ünïcode \"quoted\""})))
        .await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let line = next_line(&mut got).await;
    assert!(line.starts_with(&format!("verified invite {id}")), "{line}");
    // The receiver prints before it answers: wait for the answer to be recorded.
    let events = wait_events(&app, &site, FIVE_SECONDS, |e| {
        e.first().is_some_and(|e| !e.attempts.is_empty())
    })
    .await;
    drop(child);
    assert_eq!(
        events[0].attempts[0].http_status,
        Some(204),
        "accepted at once"
    );
}

/// The receiver's next line; waits without blocking the runtime the server runs on.
async fn next_line(lines: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(FIVE_SECONDS, lines.recv())
        .await
        .ok()
        .flatten()
        .expect("a line from the receiver within 5 s")
}

/// A child process that is killed and reaped when the test ends, even by a panic.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
