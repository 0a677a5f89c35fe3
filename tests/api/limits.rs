//! docs/api.md#limits: the per-site rate limit, Prometheus metrics on their own
//! address, JSON logs, and the protections that need no flag (header and body read
//! deadlines).

use crate::helpers::{assert_error, cli_site, eventually, spawn_app_with, temp_db, ServerProcess};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[tokio::test]
async fn at_most_n_requests_per_second_per_site_then_429_with_retry_after() {
    let app = spawn_app_with(|s| s.rate_limit = 3).await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.get_invite(&site, &id).await.status(), 200);
    assert_eq!(app.create_invite(&site, None).await.status(), 200);
    // The burst of 3 is spent (the clock stands still).
    let resp = app.get_invite(&site, &id).await;
    assert_eq!(resp.headers()["retry-after"], "1");
    assert_error(resp, 429, 42901).await;
    assert_error(app.create_invite(&site, None).await, 429, 42901).await;
    // A second later, one second's worth is back.
    app.clock.advance(1);
    assert_eq!(app.get_invite(&site, &id).await.status(), 200);
}

#[tokio::test]
async fn other_sites_and_failed_authentication_are_not_limited() {
    let app = spawn_app_with(|s| s.rate_limit = 1).await;
    let a = app.create_site().await;
    let b = app.create_site().await;
    let mut wrong = a.clone();
    wrong.password = "not-the-password".into();
    for _ in 0..5 {
        assert_error(app.create_invite(&wrong, None).await, 401, 40102).await;
    }
    assert_eq!(
        app.create_invite(&a, None).await.status(),
        200,
        "a's budget untouched"
    );
    assert_error(app.create_invite(&a, None).await, 429, 42901).await;
    assert_eq!(
        app.create_invite(&b, None).await.status(),
        200,
        "b has its own"
    );
}

#[tokio::test]
async fn metrics_are_served_on_their_own_address_and_carry_no_ids() {
    let app = spawn_app_with(|s| s.metrics_listen = Some("127.0.0.1:0".into())).await;
    let site = app.create_site().await;
    let id = app
        .new_invite_id(&site, Some(serde_json::json!({"customId": "cid-77"})))
        .await;
    assert_eq!(app.verify(&id).await.status(), 200);
    assert_eq!(
        app.get_invite(&site, "AAAAAAAAAAAAAAAAAAAAAA")
            .await
            .status(),
        404
    );
    assert_error(
        app.client.get(app.url("/metrics")).send().await.unwrap(),
        404,
        40402,
    )
    .await;

    let metrics_base = app.metrics_base.as_deref().expect("a metrics address");
    let resp = app
        .client
        .get(format!("{metrics_base}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    let text = resp.text().await.unwrap();
    for line in [
        r#"agegate_http_requests_total{method="POST",route="/v1/website/{siteId}/invite",status="200"} 1"#,
        r#"agegate_http_requests_total{method="GET",route="/v1/website/{siteId}/invite/{inviteId}",status="404"} 1"#,
        r#"agegate_http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        "agegate_invites_created_total 1",
        r#"agegate_invites_verified_total{method="verifier"} 1"#,
        "agegate_database_errors_total 0",
        "agegate_webhook_backlog 0",
        r#"agegate_http_request_duration_seconds_bucket{le="0.0001",method="POST",route="/v1/website/{siteId}/invite"}"#,
    ] {
        assert!(text.contains(line), "{line} in:\n{text}");
    }
    for secret in [
        id.as_str(),
        "cid-77",
        site.site_id.as_str(),
        site.username.as_str(),
    ] {
        assert!(!text.contains(secret), "metrics leak {secret}");
    }
}

#[test]
fn json_logs_are_one_object_per_line() {
    let (_dir, db) = temp_db();
    let server = ServerProcess::start(&db, &["--log-format", "json"]);
    let line: serde_json::Value = serde_json::from_str(&server.first_line)
        .unwrap_or_else(|e| panic!("{e}: {}", server.first_line));
    assert_eq!(line["level"], "INFO");
    let message = line["fields"]["message"].as_str().unwrap();
    assert!(
        message.contains("listening on http://127.0.0.1:"),
        "{message}"
    );
    assert!(line["timestamp"].is_string());
    let (_site, _) = cli_site(&db, &[]);
}

/// Opens a connection, sends `partial`, and returns what the server answered and how
/// long it took to close the connection.
fn send_and_wait(base: &str, partial: &[u8]) -> (String, Duration) {
    let addr = base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(partial).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    (
        String::from_utf8_lossy(&answer).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let app = spawn_app_with(|_| {}).await;
    let base = app.base.clone();
    let (_, took) = tokio::task::spawn_blocking(move || {
        send_and_wait(&base, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    })
    .await
    .unwrap();
    assert!(took < Duration::from_secs(15), "closed after {took:?}");
}

#[tokio::test]
async fn a_body_that_stops_arriving_gets_408_with_the_error_body() {
    let app = spawn_app_with(|_| {}).await;
    let site = app.create_site().await;
    let base = app.base.clone();
    let auth = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!("{}:{}", site.username, site.password),
    );
    let head = format!(
        "POST /v1/website/{}/invite HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{\"custom",
        site.site_id
    );
    let (answer, took) = tokio::task::spawn_blocking(move || send_and_wait(&base, head.as_bytes()))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#"{"error":40801,"#), "{answer}");
    assert!(took < Duration::from_secs(15), "answered after {took:?}");
}

#[tokio::test]
async fn the_webhook_backlog_and_attempt_outcomes_are_measured() {
    let receiver = crate::receiver::TestReceiver::start().await;
    receiver.answer_always(500);
    let app = spawn_app_with(|s| {
        s.metrics_listen = Some("127.0.0.1:0".into());
        s.allow_private_webhooks = true;
    })
    .await;
    let site = app
        .create_site_with(crate::helpers::SiteOptions {
            webhook_url: Some(&receiver.url),
            ..Default::default()
        })
        .await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    eventually(
        "backlog and retry measured",
        Duration::from_secs(10),
        || async {
            let text = app.metrics().await;
            text.contains("agegate_webhook_backlog 1")
                && text.contains(r#"agegate_webhook_attempts_total{outcome="retry"} 1"#)
        },
    )
    .await;
}
