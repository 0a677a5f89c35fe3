use super::*;

#[test]
fn only_https_or_loopback_http_uris_are_fetched() {
    for ok in [
        "https://issuer.example/status/1",
        "http://127.0.0.1:8080/list",
        "http://[::1]/list",
        "http://localhost/list",
    ] {
        assert!(list_url(ok).is_ok(), "{ok}");
    }
    for refused in [
        "file:///etc/passwd",
        "file:/etc/passwd",
        "/etc/passwd",
        "http://issuer.example/list",
        "http://10.0.0.1/list",
        "ftp://issuer.example/list",
        "gopher://127.0.0.1/list",
    ] {
        assert!(list_url(refused).is_err(), "{refused}");
    }
}

#[test]
fn fetch_errors_have_stable_words() {
    assert_eq!(fetch_result(&FetchError::Timeout(FETCH_TIMEOUT)), "timeout");
    assert_eq!(fetch_result(&FetchError::TooLarge(1)), "too_large");
    assert_eq!(fetch_result(&FetchError::Status(302)), "http_status");
    assert_eq!(fetch_result(&FetchError::Network("x".into())), "network");
}
