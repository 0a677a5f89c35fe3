use crate::helpers::{assert_error, spawn_app};
use agegate::http::error::ErrorCode;

#[tokio::test]
async fn unknown_routes_are_404_json() {
    let app = spawn_app().await;
    for path in ["/", "/v1", "/v2/website/x/invite", "/v1/website/", "/nope"] {
        let resp = app.client.get(app.url(path)).send().await.unwrap();
        assert_error(resp, 404, 40402).await;
    }
}

#[tokio::test]
async fn wrong_methods_on_existing_routes_are_405_json() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = format!("/v1/website/{}/invite", site.site_id);
    let one = format!("{invite}/AAAAAAAAAAAAAAAAAAAAAA");
    let cancel = format!("{one}/cancel");
    let cases = [
        (reqwest::Method::PATCH, invite.as_str()),
        (reqwest::Method::DELETE, invite.as_str()),
        (reqwest::Method::GET, cancel.as_str()),
        (reqwest::Method::PUT, one.as_str()),
        (reqwest::Method::POST, one.as_str()),
        (reqwest::Method::GET, "/v1/verifier/invite/x"),
        (reqwest::Method::POST, "/healthz"),
        (reqwest::Method::DELETE, "/v1/openapi.json"),
    ];
    for (method, path) in cases {
        let resp = app
            .client
            .request(method.clone(), app.url(path))
            .basic_auth(&site.username, Some(&site.password))
            .send()
            .await
            .unwrap();
        assert_error(resp, 405, 40501).await;
    }
}

#[tokio::test]
async fn oversized_bodies_are_413_json_on_every_route_that_reads_one() {
    let app = spawn_app().await;
    let big = "x".repeat(65 * 1024);
    let resp = app
        .client
        .post(app.url("/v1/verifier/invite/AAAAAAAAAAAAAAAAAAAAAA"))
        .bearer_auth(crate::helpers::VERIFIER_TOKEN)
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_error(resp, 413, 41301).await;
    // The wallet endpoints read theirs before anything else (docs/presentations.md#what-is-checked,
    // docs/dc-api.md#the-answers), up to 2 MiB: zero-knowledge proofs are large.
    for (path, content_type) in [
        ("dc-api", "application/json"),
        ("openid4vp", "application/x-www-form-urlencoded"),
    ] {
        let resp = app
            .client
            .post(app.url(&format!("/gateway/AAAAAAAAAAAAAAAAAAAAAA/{path}")))
            .header("content-type", content_type)
            .body("x".repeat(2 * 1024 * 1024 + 1))
            .send()
            .await
            .unwrap();
        assert_error(resp, 413, 41302).await;
    }
}

#[test]
fn readme_documents_the_whole_error_catalogue() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    for code in ErrorCode::ALL {
        let row = format!(
            "| {} | {} | {} |",
            code.code(),
            code.status().as_u16(),
            code.message()
        );
        assert!(
            readme.contains(&row),
            "README lacks the catalogue row: {row}"
        );
    }
}
