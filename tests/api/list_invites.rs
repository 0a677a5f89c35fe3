//! docs/api.md#finding-invites-list: `GET /v1/website/{siteId}/invite`, newest first, filtered, paged
//! by an opaque keyset cursor.

use crate::helpers::{assert_error, spawn_app, spawn_app_with, TestApp, TestSite, T0};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

async fn page(app: &TestApp, site: &TestSite, query: &str) -> Value {
    let resp = app.list_invites(site, query).await;
    assert_eq!(resp.status(), 200, "{query}");
    assert_eq!(resp.headers()["content-type"], "application/json");
    resp.json().await.unwrap()
}

/// Every page of `query`, following the cursor: the invite ids in the order listed.
pub async fn every_page(app: &TestApp, site: &TestSite, query: &str) -> Vec<String> {
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = match &cursor {
            Some(c) => format!("{query}&cursor={c}"),
            None => query.to_owned(),
        };
        let body = page(app, site, &q).await;
        listed.extend(
            ids(body["data"].as_array().unwrap())
                .into_iter()
                .map(str::to_owned),
        );
        match body["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return listed,
        }
    }
}

fn ids(invites: &[Value]) -> Vec<&str> {
    invites
        .iter()
        .map(|i| i["inviteId"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_site_without_invites_lists_an_empty_last_page() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    assert_eq!(
        page(&app, &site, "").await,
        json!({"data": [], "nextCursor": null})
    );
}

#[tokio::test]
async fn invites_are_listed_newest_first_with_their_fields() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let a = app
        .new_invite(&site, Some(json!({"customId": "u-1"})))
        .await;
    app.clock.advance(1);
    let b = app.new_invite(&site, None).await;
    let listed = page(&app, &site, "").await;
    assert_eq!(
        listed,
        json!({
            "data": [
                {"inviteId": b["inviteId"], "url": b["url"], "status": "pending",
                 "customId": null, "created": T0 + 1, "expires": T0 + 1 + 86400},
                {"inviteId": a["inviteId"], "url": a["url"], "status": "pending",
                 "customId": "u-1", "created": T0, "expires": T0 + 86400},
            ],
            "nextCursor": null
        })
    );
}

/// The test clock stands still, so every invite here is made in the same millisecond:
/// they still list in the order they were made, newest first, across pages and filters.
#[tokio::test]
async fn invites_made_in_the_same_millisecond_list_newest_first() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let mut made = Vec::new();
    for _ in 0..40 {
        let invite = app
            .new_invite(&site, Some(json!({"customId": "same-user"})))
            .await;
        made.push(invite["inviteId"].as_str().unwrap().to_owned());
    }
    made.reverse();
    for query in [
        "limit=7",
        "customId=same-user&limit=9",
        "status=pending&limit=11",
    ] {
        let listed = every_page(&app, &site, query).await;
        assert_eq!(listed, made, "{query}");
    }
}

#[tokio::test]
async fn status_is_decided_now_exactly_as_get_decides_it() {
    // No sweeper: a pending invite past its time is still stored as pending.
    let app = spawn_app_with(|s| s.sweep_interval = Duration::from_secs(3600)).await;
    let site = app.create_site().await;
    let old = app.new_invite_id(&site, None).await;
    app.clock.advance(86_400 - 1);
    let young = app.new_invite_id(&site, None).await;
    app.clock.advance(1);
    assert_eq!(app.status_record(&site, &old).await["status"], "expired");
    let all = app.all_invites(&site, "").await;
    assert_eq!(ids(&all), [young.as_str(), old.as_str()]);
    assert_eq!(all[0]["status"], "pending");
    assert_eq!(all[1]["status"], "expired");
    assert_eq!(
        ids(&app.all_invites(&site, "status=expired").await),
        [old.as_str()]
    );
    assert_eq!(
        ids(&app.all_invites(&site, "status=pending").await),
        [young.as_str()]
    );
}

#[tokio::test]
async fn status_and_custom_id_filter_exactly() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let mut made = Vec::new();
    for custom_id in ["user-1", "User-1", "user-1 ", "user-1", "😀"] {
        app.clock.advance(1);
        made.push(
            app.new_invite_id(&site, Some(json!({"customId": custom_id})))
                .await,
        );
    }
    app.clock.advance(1);
    let plain = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&made[0]).await.status(), 200);
    assert_eq!(app.cancel(&site, &made[1]).await.status(), 200);

    let by_custom_id = app.all_invites(&site, "customId=user-1").await;
    assert_eq!(ids(&by_custom_id), [made[3].as_str(), made[0].as_str()]);
    let emoji = app.all_invites(&site, "customId=%F0%9F%98%80").await;
    assert_eq!(ids(&emoji), [made[4].as_str()]);
    assert!(app.all_invites(&site, "customId=").await.is_empty());

    let verified = app.all_invites(&site, "status=verified").await;
    assert_eq!(ids(&verified), [made[0].as_str()]);
    assert_eq!(verified[0]["status"], "verified");
    assert_eq!(
        ids(&app.all_invites(&site, "status=expired").await),
        [made[1].as_str()]
    );
    let pending = app.all_invites(&site, "status=pending").await;
    assert_eq!(
        ids(&pending),
        [
            plain.as_str(),
            made[4].as_str(),
            made[3].as_str(),
            made[2].as_str()
        ]
    );
    let both = app
        .all_invites(&site, "status=pending&customId=user-1")
        .await;
    assert_eq!(ids(&both), [made[3].as_str()]);
}

#[tokio::test]
async fn the_limit_sizes_pages_and_the_cursor_moves_on() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    for _ in 0..3 {
        app.new_invite(&site, None).await;
    }
    let first = page(&app, &site, "limit=2").await;
    assert_eq!(first["data"].as_array().unwrap().len(), 2);
    let cursor = first["nextCursor"].as_str().expect("a next page");
    let second = page(&app, &site, &format!("limit=2&cursor={cursor}")).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 1);
    assert_eq!(second["nextCursor"], Value::Null);
    assert_eq!(
        page(&app, &site, "limit=3").await["nextCursor"],
        Value::Null
    );
    // Fifty by default.
    for _ in 0..48 {
        app.new_invite(&site, None).await;
    }
    let default = page(&app, &site, "").await;
    assert_eq!(default["data"].as_array().unwrap().len(), 50);
    assert!(default["nextCursor"].is_string());
    assert_eq!(
        page(&app, &site, "limit=500").await["data"]
            .as_array()
            .unwrap()
            .len(),
        51
    );
}

#[tokio::test]
async fn paging_visits_every_invite_exactly_once_while_creates_run() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let mut before = HashSet::new();
    for i in 0..120 {
        if i % 10 == 0 {
            app.clock.advance(1); // several invites share each second
        }
        before.insert(app.new_invite_id(&site, None).await);
    }
    let creating = async {
        let mut made = HashSet::new();
        for _ in 0..60 {
            made.insert(app.new_invite_id(&site, None).await);
        }
        made
    };
    let paging = async {
        let mut seen = Vec::new();
        let mut cursor = String::new();
        loop {
            let query = if cursor.is_empty() {
                "limit=7".to_owned()
            } else {
                format!("limit=7&cursor={cursor}")
            };
            let p = page(&app, &site, &query).await;
            seen.extend(
                ids(p["data"].as_array().unwrap())
                    .into_iter()
                    .map(str::to_owned),
            );
            match p["nextCursor"].as_str() {
                Some(next) => cursor = next.to_owned(),
                None => return seen,
            }
            tokio::task::yield_now().await;
        }
    };
    let (made, seen) = tokio::join!(creating, paging);
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no invite is listed twice");
    assert!(
        before.is_subset(&unique),
        "every invite there at the start is listed"
    );
    assert!(unique.is_subset(&before.union(&made).cloned().collect()));
}

#[tokio::test]
async fn bad_parameters_are_400() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    app.new_invite(&site, None).await;
    let long = "x".repeat(129);
    let cases = [
        ("status=Pending", 40014),
        ("status=", 40014),
        ("status=cancelled", 40014),
        ("limit=0", 40015),
        ("limit=501", 40015),
        ("limit=ten", 40015),
        ("limit=-1", 40015),
        ("limit=", 40015),
        ("cursor=garbage", 40016),
        ("cursor=", 40016),
        ("cursor=MTIz", 40016),
        ("limit=1&limit=2", 40017),
        (&format!("customId={long}"), 40004),
    ];
    for (query, code) in cases {
        let resp = app.list_invites(&site, query).await;
        assert_error(resp, 400, code).await;
    }
    // Only the exact spelling this server writes is taken back.
    app.new_invite(&site, None).await;
    let cursor = page(&app, &site, "limit=1").await["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    for spelling in [
        format!("{cursor}="),
        format!("{cursor}AA"),
        cursor.replace('-', "+"),
    ] {
        if spelling != cursor {
            let resp = app.list_invites(&site, &format!("cursor={spelling}")).await;
            assert_error(resp, 400, 40016).await;
        }
    }
    assert_eq!(
        page(&app, &site, &format!("cursor={cursor}")).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_site_lists_only_its_own_invites_with_its_own_credentials() {
    let app = spawn_app().await;
    let mine = app.create_site().await;
    let theirs = app.create_site().await;
    let my_invite = app.new_invite_id(&mine, None).await;
    app.new_invite(&theirs, None).await;
    assert_eq!(ids(&app.all_invites(&mine, "").await), [my_invite.as_str()]);

    let path = format!("/v1/website/{}/invite", mine.site_id);
    let anonymous = app.client.get(app.url(&path)).send().await.unwrap();
    assert_error(anonymous, 401, 40101).await;
    let wrong_site = app
        .client
        .get(app.url(&path))
        .basic_auth(&theirs.username, Some(&theirs.password))
        .send()
        .await
        .unwrap();
    assert_error(wrong_site, 403, 40301).await;
    let not_uuid = app
        .client
        .get(app.url("/v1/website/not-a-uuid/invite"))
        .basic_auth(&mine.username, Some(&mine.password))
        .send()
        .await
        .unwrap();
    assert_error(not_uuid, 400, 40006).await;
}
