use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;

#[test]
fn a_source_is_a_file_an_https_url_or_http_on_loopback_only() {
    assert_eq!(
        Source::parse("/etc/agegate/av-tl.xml"),
        Ok(Source::File("/etc/agegate/av-tl.xml".into()))
    );
    for ok in [
        "https://acceptance.trust.tech.ec.europa.eu/lists/age-verification/av-tl.xml",
        "http://127.0.0.1:8080/av-tl.xml",
        "http://[::1]/l.jwt",
        "http://localhost/v.cbor",
    ] {
        assert!(Source::parse(ok).is_ok_and(|s| s.is_url()), "{ok}");
    }
    for (bad, why) in [
        ("http://10.0.0.1/av-tl.xml", "loopback address only"),
        ("http://example.eu/av-tl.xml", "loopback address only"),
        ("ftp://example.eu/av-tl.xml", "a file or an https:// URL"),
    ] {
        let err = Source::parse(bad).unwrap_err();
        assert!(err.contains(why) && err.contains(bad), "{err}");
    }
}

#[test]
fn a_urls_password_is_never_shown() {
    let source = Source::parse("https://agegate:s3cret@lists.example.eu/av-tl.xml").unwrap();
    assert_eq!(
        source.to_string(),
        "https://agegate:***@lists.example.eu/av-tl.xml"
    );
    let source = Source::parse("https://lists.example.eu/av-tl.xml?Password=s3cret").unwrap();
    assert_eq!(
        source.to_string(),
        "https://lists.example.eu/av-tl.xml?Password=***"
    );
    assert!(!format!("{source:?}").contains("s3cret"));
    let err = Source::parse("http://agegate:s3cret@lists.example.eu/av-tl.xml").unwrap_err();
    assert!(!err.contains("s3cret"), "{err}");
}

/// A one-connection server on loopback that reads the request and answers `reply`
/// (or nothing, holding the connection, when `None`).
fn serve_once(reply: Option<Vec<u8>>) -> (Source, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/list", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = stream.read(&mut buf);
        match reply {
            Some(reply) => {
                let _ = stream.write_all(&reply);
            }
            None => std::thread::sleep(Duration::from_millis(1500)),
        }
    });
    (Source::parse(&url).unwrap(), handle)
}

fn chunked(body_len: usize) -> Vec<u8> {
    // Chunked, so no Content-Length tells the size in advance: the cap must hold while
    // the body streams.
    let mut reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..body_len / 1000 {
        reply.extend_from_slice(b"3e8\r\n");
        reply.extend_from_slice(&[b'x'; 1000]);
        reply.extend_from_slice(b"\r\n");
    }
    reply.extend_from_slice(b"0\r\n\r\n");
    reply
}

#[tokio::test]
async fn a_fetch_returns_the_body_within_the_cap() {
    let (source, server) = serve_once(Some(chunked(5000)));
    let got = Fetcher::new(Duration::from_secs(5), 5000)
        .get(&source)
        .await;
    assert_eq!(got.map(|b| b.len()), Ok(5000));
    server.join().unwrap();
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_while_it_streams() {
    let (source, server) = serve_once(Some(chunked(10_000)));
    let got = Fetcher::new(Duration::from_secs(5), 4000)
        .get(&source)
        .await;
    assert_eq!(got, Err(FetchError::TooLarge(4000)));
    server.join().unwrap();
}

#[tokio::test]
async fn a_server_that_never_answers_is_refused_at_the_timeout() {
    let (source, server) = serve_once(None);
    let started = std::time::Instant::now();
    let got = Fetcher::new(Duration::from_millis(300), 4000)
        .get(&source)
        .await;
    assert_eq!(got, Err(FetchError::Timeout(Duration::from_millis(300))));
    assert!(started.elapsed() < Duration::from_millis(1400));
    server.join().unwrap();
}

#[tokio::test]
async fn an_error_status_is_refused_with_its_code() {
    let reply = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n".to_vec();
    let (source, server) = serve_once(Some(reply));
    let got = Fetcher::new(Duration::from_secs(5), 4000)
        .get(&source)
        .await;
    assert_eq!(got, Err(FetchError::Status(500)));
    server.join().unwrap();
}

#[test]
fn the_product_timeout_is_ten_seconds() {
    assert_eq!(FETCH_TIMEOUT, Duration::from_secs(10));
}
