//! docs/api.md#finding-invites-list, the customId filter at volume, on either backend. On SQLite a customId's invites are found
//! among the newest invites, in a log and in sorted runs that the writer builds and
//! merges as creates go on (src/store/sqlite/custom_ids.rs); whichever holds an invite, the list finds it exactly
//! once, in creation order, with the status filter and the cursor, and an erased invite
//! is gone from all of them.

use crate::helpers::spawn_app;
use crate::list_invites::every_page;
use futures_util::future::join_all;
use serde_json::json;
use std::collections::BTreeMap;

/// The ids of invites whose customId was `user`, newest first.
fn newest_first(made: &[(String, String)], user: &str) -> Vec<String> {
    made.iter()
        .rev()
        .filter(|(_, u)| u == user)
        .map(|(id, _)| id.clone())
        .collect()
}

#[tokio::test]
async fn a_custom_ids_invites_are_listed_once_each_in_order_wherever_the_store_keeps_them() {
    let app = spawn_app().await;
    let site = app.create_site().await;
    let other = app.create_site().await;
    // More than two runs' worth (a run takes 1,024 invites), in batches of 32 at once
    // so that group commits carry many creates; 37 users, scattered.
    let mut made: Vec<(String, String)> = Vec::new();
    for batch in 0..80 {
        if batch % 8 == 0 {
            app.clock.advance(1);
        }
        let users: Vec<String> = (0..32)
            .map(|i| format!("user-{}", (batch * 32 + i) * 7 % 37))
            .collect();
        let ids = join_all(
            users
                .iter()
                .map(|u| app.new_invite_id(&site, Some(json!({"customId": u})))),
        )
        .await;
        made.extend(ids.into_iter().zip(users));
        // The same customIds at another site, which must never show.
        app.new_invite(&other, Some(json!({"customId": "user-3"})))
            .await;
    }
    // Creation order is the order of ids within a batch of concurrent creates too.
    made.sort();

    // On SQLite the test must reach the runs, not only the newest invites (PostgreSQL
    // keeps an index).
    if let Some(path) = app.db_url.strip_prefix("sqlite:") {
        let conn = rusqlite::Connection::open(path).unwrap();
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM custom_id_runs", [], |r| r.get(0))
            .unwrap();
        assert!(runs >= 2048, "the runs hold {runs} entries");
    }

    // Cancel some and erase some of two users' invites.
    let mut status: BTreeMap<String, &str> =
        made.iter().map(|(id, _)| (id.clone(), "pending")).collect();
    for (n, id) in newest_first(&made, "user-5").iter().enumerate() {
        if n % 3 == 0 {
            assert_eq!(app.cancel(&site, id).await.status(), 200);
            status.insert(id.clone(), "expired");
        }
    }
    let erased: Vec<String> = newest_first(&made, "user-11")
        .into_iter()
        .step_by(4)
        .collect();
    for id in &erased {
        assert_eq!(app.erase(&site, id).await.status(), 204);
    }
    made.retain(|(id, _)| !erased.contains(id));

    for user in ["user-0", "user-5", "user-11", "user-36"] {
        let all = newest_first(&made, user);
        assert!(all.len() > 40, "{user}: {}", all.len());
        for limit in [7, 50, 500] {
            assert_eq!(
                every_page(&app, &site, &format!("customId={user}&limit={limit}")).await,
                all,
                "{user}, limit {limit}"
            );
        }
        for wanted in ["pending", "expired"] {
            let with_status: Vec<String> = all
                .iter()
                .filter(|id| status[*id] == wanted)
                .cloned()
                .collect();
            assert_eq!(
                every_page(
                    &app,
                    &site,
                    &format!("customId={user}&status={wanted}&limit=9")
                )
                .await,
                with_status,
                "{user}, {wanted}"
            );
        }
    }
    assert_eq!(
        every_page(&app, &other, "customId=user-3&limit=500")
            .await
            .len(),
        80
    );
    assert!(every_page(&app, &site, "customId=user-37&limit=500")
        .await
        .is_empty());
}
