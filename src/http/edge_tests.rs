use super::{Edge, COMPRESS_FROM_BYTES};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use tower_service::Service;

/// Long enough for the compression layer to take it on.
fn long() -> String {
    "an answer long enough for the compression layer to take it on. ".repeat(20)
}

fn of_length(n: u16) -> String {
    "x".repeat(n.into())
}

fn edge() -> Edge {
    Edge::new(
        Router::new()
            .route("/long", get(|| async { long() }))
            .route(
                "/just-under",
                get(|| async { of_length(COMPRESS_FROM_BYTES - 1) }),
            )
            .route(
                "/just-enough",
                get(|| async { of_length(COMPRESS_FROM_BYTES) }),
            )
            .route("/short", get(|| async { "ok" }))
            .route(
                "/varies",
                get(|| async { ([("vary", "Origin, Accept-Encoding")], long()) }),
            )
            .route(
                "/panics",
                get(|| async {
                    if long().len() > 1 {
                        panic!("a handler's bug");
                    }
                    "unreachable"
                }),
            ),
    )
}

async fn send(path: &str, encoding: Option<&str>) -> Response {
    let mut req = Request::get(path);
    if let Some(e) = encoding {
        req = req.header("accept-encoding", e);
    }
    edge().call(req.body(Body::empty()).unwrap()).await.unwrap()
}

fn header(resp: &Response, name: &str) -> Vec<String> {
    resp.headers()
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

async fn body(resp: Response) -> Vec<u8> {
    axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap()
        .to_vec()
}

#[tokio::test]
async fn an_answer_to_a_request_without_accept_encoding_is_plain_and_says_it_varies() {
    let resp = send("/long", None).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get("content-encoding").is_none());
    assert_eq!(header(&resp, "vary"), ["accept-encoding"]);
    assert_eq!(body(resp).await, long().as_bytes());
}

#[tokio::test]
async fn an_answer_to_a_request_that_accepts_gzip_is_gzipped_and_says_it_varies() {
    let resp = send("/long", Some("gzip")).await;
    assert_eq!(header(&resp, "content-encoding"), ["gzip"]);
    assert_eq!(header(&resp, "vary"), ["accept-encoding"]);
    let zipped = body(resp).await;
    assert_eq!(&zipped[..2], &[0x1f, 0x8b], "a gzip stream");
}

#[tokio::test]
async fn an_answer_under_a_kilobyte_goes_plain_even_to_a_client_that_accepts_compression() {
    for encoding in [None, Some("gzip"), Some("br"), Some("gzip, deflate, br")] {
        let resp = send("/just-under", encoding).await;
        assert!(
            resp.headers().get("content-encoding").is_none(),
            "{encoding:?}"
        );
        // Not compressible, so not varying: no Vary either way.
        assert!(header(&resp, "vary").is_empty(), "{encoding:?}");
        assert_eq!(
            body(resp).await,
            of_length(COMPRESS_FROM_BYTES - 1).as_bytes()
        );
    }
    for encoding in ["gzip", "br"] {
        let resp = send("/just-enough", Some(encoding)).await;
        assert_eq!(header(&resp, "content-encoding"), [encoding]);
        assert_eq!(header(&resp, "vary"), ["accept-encoding"]);
    }
    let resp = send("/just-enough", None).await;
    assert!(resp.headers().get("content-encoding").is_none());
    assert_eq!(header(&resp, "vary"), ["accept-encoding"]);
}

#[tokio::test]
async fn both_ways_give_the_same_vary_as_the_compression_layer() {
    // Too short to compress: no Vary either way.
    for encoding in [None, Some("identity"), Some("gzip")] {
        assert!(header(&send("/short", encoding).await, "vary").is_empty());
    }
    // A Vary that already names Accept-Encoding is left as it is.
    for encoding in [None, Some("gzip")] {
        let resp = send("/varies", encoding).await;
        assert_eq!(header(&resp, "vary"), ["Origin, Accept-Encoding"]);
    }
}

#[tokio::test]
async fn a_handler_that_panics_answers_the_json_500_and_the_next_request_is_served() {
    for encoding in [None, Some("gzip")] {
        let resp = send("/panics", encoding).await;
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(header(&resp, "content-type"), ["application/json"]);
        let json: serde_json::Value = serde_json::from_slice(&body(resp).await).unwrap();
        assert_eq!(json["error"], 50001);
    }
    assert_eq!(send("/long", None).await.status(), StatusCode::OK);
}
