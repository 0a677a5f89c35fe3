//! docs/reliability.md#connections-after-an-early-answer: an answer given before the
//! request's body has arrived (a wrong password, another site's credentials, an unknown
//! route, a wrong method, a rate limit) leaves the keep-alive connection usable, so the
//! client's next request on it is answered; an answer that will not read the body (too
//! large, of unknown length) says `Connection: close` and the server closes. On a raw
//! socket, so that the body really arrives after the headers: each body is sent only once
//! its answer has been read.

use crate::helpers::{spawn_app_with, RawConnection};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

fn basic(username: &str, password: &str) -> String {
    STANDARD.encode(format!("{username}:{password}"))
}

/// The head of a JSON request of `length` bytes.
fn head(method: &str, path: &str, auth: Option<&str>, length: usize) -> String {
    let auth = auth.map_or(String::new(), |a| format!("Authorization: Basic {a}\r\n"));
    format!(
        "{method} {path} HTTP/1.1\r\nHost: agegate.test\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

const BODY: &str = r#"{"customId":"order-1"}"#;

#[tokio::test]
async fn an_answer_given_before_the_body_arrived_keeps_the_connection_usable() {
    let app = spawn_app_with(|s| s.rate_limit = 1).await;
    let (a, b, limited, fresh) = (
        app.create_site().await,
        app.create_site().await,
        app.create_site().await,
        app.create_site().await,
    );
    // The rate-limited site's one request of the second (the clock stands still).
    assert_eq!(app.create_invite(&limited, None).await.status(), 200);
    let invite = |site: &str| format!("/v1/website/{site}/invite");
    let a_auth = basic(&a.username, &a.password);
    let early = [
        (
            head(
                "POST",
                &invite(&a.site_id),
                Some(&basic(&a.username, "wrong")),
                BODY.len(),
            ),
            401,
            40102,
        ),
        (
            head("POST", &invite(&b.site_id), Some(&a_auth), BODY.len()),
            403,
            40301,
        ),
        (
            head("POST", "/v1/no-such-route", Some(&a_auth), BODY.len()),
            404,
            40402,
        ),
        (
            head("PUT", &invite(&a.site_id), Some(&a_auth), BODY.len()),
            405,
            40501,
        ),
        (
            head(
                "POST",
                &invite(&limited.site_id),
                Some(&basic(&limited.username, &limited.password)),
                BODY.len(),
            ),
            429,
            42901,
        ),
    ];
    let mut conn = RawConnection::open(&app.base).await;
    for (head, status, code) in early {
        conn.send(head.as_bytes()).await;
        let answer = conn
            .answer()
            .await
            .unwrap_or_else(|| panic!("no answer to {head}"));
        assert_eq!(answer.status, status, "{head}");
        assert_eq!(answer.json()["error"], code, "{head}");
        assert!(!answer.closes(), "{head}: {:?}", answer.headers);
        if status == 429 {
            assert_eq!(answer.header("retry-after"), Some("1"));
        }
        // The body, only now: in a later write than the headers, after the answer.
        conn.send(BODY.as_bytes()).await;
    }
    // The same connection still takes a request, and answers it.
    let good = head(
        "POST",
        &invite(&fresh.site_id),
        Some(&basic(&fresh.username, &fresh.password)),
        BODY.len(),
    );
    conn.send(format!("{good}{BODY}").as_bytes()).await;
    let answer = conn.answer().await.expect("the next request is answered");
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(answer.json()["inviteId"].is_string(), "{}", answer.json());
}

#[tokio::test]
async fn an_answer_before_a_body_over_the_limit_says_connection_close_and_closes() {
    let app = spawn_app_with(|_| {}).await;
    let site = app.create_site().await;
    let auth = basic(&site.username, "wrong");
    let path = format!("/v1/website/{}/invite", site.site_id);
    // More to come than is ever read and dropped (64 KiB): not drained but closed.
    let mut conn = RawConnection::open(&app.base).await;
    conn.send(head("POST", &path, Some(&auth), 200_000).as_bytes())
        .await;
    let answer = conn.answer().await.expect("an answer");
    assert_eq!(answer.status, 401);
    assert_eq!(answer.json()["error"], 40102);
    assert!(answer.closes(), "{:?}", answer.headers);
    assert!(conn.closed().await, "the server closes as it said");

    // A chunked body, of unknown length: the same.
    let mut conn = RawConnection::open(&app.base).await;
    let chunked = format!(
        "POST {path} HTTP/1.1\r\nHost: agegate.test\r\nAuthorization: Basic {auth}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    conn.send(chunked.as_bytes()).await;
    let answer = conn.answer().await.expect("an answer");
    assert_eq!(answer.status, 401);
    assert!(answer.closes(), "{:?}", answer.headers);
    assert!(conn.closed().await, "the server closes as it said");

    // Too large: 413 once the limit is passed, and the rest is not read.
    let good = basic(&site.username, &site.password);
    let mut conn = RawConnection::open(&app.base).await;
    conn.send(head("POST", &path, Some(&good), 70_000).as_bytes())
        .await;
    conn.send(&vec![b' '; 66_000]).await;
    let answer = conn.answer().await.expect("an answer");
    assert_eq!(answer.status, 413);
    assert_eq!(answer.json()["error"], 41301);
    assert!(answer.closes(), "{:?}", answer.headers);
}
