use crate::helpers::{assert_error, eventually, spawn_app, TestSite};
use agegate::clock::Clock;
use agegate::domain::SiteId;
use agegate::store;
use std::time::Duration;

fn invite_url(app: &crate::helpers::TestApp, site: &TestSite) -> String {
    app.url(&format!("/v1/website/{}/invite", site.site_id))
}

#[tokio::test]
async fn missing_credentials_are_401_with_basic_challenge() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let resp = app
        .client
        .post(invite_url(&app, &site))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["www-authenticate"],
        "Basic realm=\"agegate\""
    );
    assert_error(resp, 401, 40101).await;
    let resp = app
        .client
        .get(format!(
            "{}/AAAAAAAAAAAAAAAAAAAAAA",
            invite_url(&app, &site)
        ))
        .send()
        .await
        .unwrap();
    assert_error(resp, 401, 40101).await;
}

#[tokio::test]
async fn unknown_username_and_wrong_password_look_exactly_alike() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let wrong_password = app
        .client
        .post(invite_url(&app, &site))
        .basic_auth(&site.username, Some("wrong"))
        .send()
        .await
        .unwrap();
    let unknown_user = app
        .client
        .post(invite_url(&app, &site))
        .basic_auth("key_nobody", Some(&site.password))
        .send()
        .await
        .unwrap();
    assert_eq!(
        wrong_password.headers()["www-authenticate"],
        "Basic realm=\"agegate\""
    );
    assert_eq!(
        unknown_user.headers()["www-authenticate"],
        "Basic realm=\"agegate\""
    );
    let a = assert_error(wrong_password, 401, 40102).await;
    let b = assert_error(unknown_user, 401, 40102).await;
    assert_eq!(a, b);
}

#[tokio::test]
async fn malformed_authorization_headers_are_401() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for header in [
        "Basic",
        "Basic !!!notbase64",
        "Basic bm9jb2xvbg==",
        "Bearer abc",
        "Digest x",
    ] {
        let resp = app
            .client
            .post(invite_url(&app, &site))
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_error(resp, 401, 40102).await;
    }
}

#[tokio::test]
async fn valid_credentials_of_another_site_are_403() {
    let app = spawn_app().await;
    let a = app.create_site().await;
    let b = app.create_site().await;
    let resp = app
        .client
        .post(invite_url(&app, &a))
        .basic_auth(&b.username, Some(&b.password))
        .send()
        .await
        .unwrap();
    assert_error(resp, 403, 40301).await;
    let invite = app.new_invite(&a, None).await;
    let resp = app
        .client
        .get(format!(
            "{}/{}",
            invite_url(&app, &a),
            invite["inviteId"].as_str().unwrap()
        ))
        .basic_auth(&b.username, Some(&b.password))
        .send()
        .await
        .unwrap();
    assert_error(resp, 403, 40301).await;
}

#[tokio::test]
async fn every_active_credential_of_a_site_works_and_a_revoked_one_is_refused_within_5s() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let site_id = SiteId::parse(&site.site_id).unwrap();

    // A second key, issued the way `agegate site key create` does.
    let password = agegate::domain::Password::generate();
    let username = agegate::domain::Username::generate();
    assert!(app
        .store
        .add_credential(
            site_id,
            store::NewCredential {
                username: username.clone(),
                digest: password.digest(),
                created_at: app.clock.now(),
            },
        )
        .await
        .unwrap());
    let second = TestSite {
        site_id: site.site_id.clone(),
        username: username.as_str().into(),
        password: password.expose().into(),
        ..TestSite::default()
    };
    app.new_invite(&site, None).await;
    app.new_invite(&second, None).await;

    // Revoke the first through a separate connection to the same database, as the CLI would.
    let other = store::open(&app.db_url).await.unwrap();
    other
        .revoke_credential(site_id, &site.username, app.clock.now())
        .await
        .unwrap();
    eventually(
        "the revoked credential refused",
        Duration::from_secs(5),
        || async {
            let status = app.create_invite(&site, None).await.status();
            assert!(status == 200 || status == 401, "status {status}");
            status == 401
        },
    )
    .await;
    let resp = app.create_invite(&site, None).await;
    assert_error(resp, 401, 40102).await;
    // The other key keeps working.
    app.new_invite(&second, None).await;
}

/// Credentials are trusted for up to two seconds without a database read; a create in
/// that window for a site deleted meanwhile stores nothing and is refused as one without
/// valid credentials (not a 500).
#[tokio::test]
async fn a_create_for_a_site_deleted_after_its_credential_was_checked_is_401() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    assert_eq!(app.create_invite(&site, None).await.status(), 200);
    let site_id = SiteId::parse(&site.site_id).unwrap();
    assert_eq!(app.store.delete_site(site_id).await.unwrap(), Some(1));

    let resp = app
        .create_invite(&site, Some(serde_json::json!({"customId": "after"})))
        .await;
    assert_error(resp, 401, 40102).await;
    let keyed = app
        .client
        .post(app.url(&format!("/v1/website/{}/invite", site.site_id)))
        .basic_auth(&site.username, Some(&site.password))
        .header("Idempotency-Key", "after-deletion")
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_error(keyed, 401, 40102).await;
    assert!(app.store.site(site_id).await.unwrap().is_none());
}
