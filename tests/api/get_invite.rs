use crate::helpers::{assert_error, spawn_app};
use serde_json::{json, Value};

#[tokio::test]
async fn get_returns_an_array_holding_one_status_record() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app
        .new_invite(&site, Some(json!({"customId": "session-7"})))
        .await;
    let id = invite["inviteId"].as_str().unwrap();
    let resp = app.get_invite(&site, id).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body,
        json!([{
            "inviteId": id,
            "url": invite["url"],
            "status": "pending",
            "customId": "session-7",
        }])
    );
}

#[tokio::test]
async fn custom_id_is_null_when_none_was_given() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let record = app
        .status_record(&site, invite["inviteId"].as_str().unwrap())
        .await;
    assert!(record.as_object().unwrap().contains_key("customId"));
    assert_eq!(record["customId"], Value::Null);
}

#[tokio::test]
async fn unknown_invite_is_404() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    // Well-formed but unknown, and malformed.
    for id in ["AAAAAAAAAAAAAAAAAAAAAA", "nope", "%E2%9C%93"] {
        let resp = app.get_invite(&site, id).await;
        assert_error(resp, 404, 40401).await;
    }
}

#[tokio::test]
async fn another_sites_invite_is_404_with_own_credentials() {
    let app = spawn_app().await;
    let a = app.create_site().await;
    let b = app.create_site().await;
    let invite = app.new_invite(&a, None).await;
    let resp = app
        .get_invite(&b, invite["inviteId"].as_str().unwrap())
        .await;
    assert_error(resp, 404, 40401).await;
}

#[tokio::test]
async fn site_id_in_upper_case_names_the_same_site() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let resp = app
        .client
        .get(app.url(&format!(
            "/v1/website/{}/invite/{}",
            site.site_id.to_uppercase(),
            invite["inviteId"].as_str().unwrap()
        )))
        .basic_auth(&site.username, Some(&site.password))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

/// A status record is far under a kilobyte: compressing it saves no packet and cost the
/// read 3.7 times its CPU, so it goes plain even to a client that asks for gzip or Brotli
/// (as most HTTP clients do by default). A list of invites, longer, is compressed.
#[tokio::test]
async fn a_status_read_goes_plain_to_a_client_that_accepts_compression_and_a_long_list_does_not() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let id = invite["inviteId"].as_str().unwrap();
    let get = |path: String, encoding: &'static str| {
        app.client
            .get(app.url(&path))
            .basic_auth(&site.username, Some(&site.password))
            .header("accept-encoding", encoding)
            .send()
    };
    let status_path = format!("/v1/website/{}/invite/{id}", site.site_id);
    for encoding in ["gzip", "br", "gzip, deflate, br, zstd"] {
        let resp = get(status_path.clone(), encoding).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert!(
            resp.headers().get("content-encoding").is_none(),
            "{encoding}"
        );
        assert!(resp.headers().get("vary").is_none(), "{encoding}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body[0]["inviteId"], id);
    }
    for _ in 0..9 {
        app.new_invite(&site, None).await;
    }
    for encoding in ["gzip", "br"] {
        let list_path = format!("/v1/website/{}/invite", site.site_id);
        let resp = get(list_path, encoding).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-encoding"], encoding);
        assert_eq!(resp.headers()["vary"], "accept-encoding");
    }
}
