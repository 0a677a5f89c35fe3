//! The status cache on PostgreSQL (`store::postgres::status_sync`): a node answers a
//! status read it has made before from memory, and still never older than a change
//! committed before the read began, by whoever made it — another node, the command line,
//! or any client of the database (here: SQL of the test's own). Run in the PostgreSQL
//! pass of the suite; `multinode.rs` covers changes made through another node's API.

use crate::helpers::{cli_site, eventually, temp_db, until, ServerProcess, TestDb, TestSite};
use crate::pg::postgres_backend;
use std::time::Duration;

/// A connection of the test's own to the node's database.
async fn sql(db: &TestDb) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

async fn status(node: &ServerProcess, site: &TestSite, id: &str) -> (u16, Option<String>) {
    let resp = node.get_invite(site, id).await;
    let code = resp.status().as_u16();
    let body: serde_json::Value = resp.json().await.unwrap();
    (code, body[0]["status"].as_str().map(str::to_owned))
}

/// A new invite, read twice: the second read is the one the cache answers.
async fn read_invite(node: &ServerProcess, site: &TestSite) -> String {
    let id = node.new_invite(site, None).await["inviteId"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..2 {
        assert_eq!(status(node, site, &id).await, (200, Some("pending".into())));
    }
    id
}

async fn expire(db: &tokio_postgres::Client, id: &str) {
    let changed = db
        .execute(
            "UPDATE invites SET status = 'expired', settled_at = expires_at
             WHERE invite_id = $1",
            &[&id],
        )
        .await
        .unwrap();
    assert_eq!(changed, 1);
}

/// On the PostgreSQL pass only: a node with `flags` on a fresh database, a site, and a
/// connection of the test's own.
async fn one_node(
    flags: &[&str],
) -> Option<(
    tempfile::TempDir,
    TestDb,
    ServerProcess,
    TestSite,
    tokio_postgres::Client,
)> {
    if !postgres_backend() {
        return None;
    }
    let (dir, db) = temp_db();
    let node = ServerProcess::start(&db, flags);
    let (site, _) = cli_site(&db, &[]);
    let client = sql(&db).await;
    Some((dir, db, node, site, client))
}

/// The PostgreSQL backends of the status-sync connections of the nodes on this test's
/// database (tests running at once on the same server have their own).
async fn listeners(db: &tokio_postgres::Client) -> i64 {
    db.query_one(
        "SELECT count(*) FROM pg_stat_activity
         WHERE application_name = 'agegate-listener' AND query LIKE 'LISTEN%'
           AND datname = current_database()",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn a_status_read_shows_at_once_what_any_client_of_the_database_changed() {
    let Some((_dir, _db, node, site, client)) = one_node(&[]).await else {
        return;
    };
    // Many rounds: the change's notification and the read race each other, and only the
    // sync each read waits for makes the read come second every time.
    for _ in 0..100 {
        let expired = read_invite(&node, &site).await;
        let erased = read_invite(&node, &site).await;
        expire(&client, &expired).await;
        assert_eq!(
            status(&node, &site, &expired).await,
            (200, Some("expired".into()))
        );
        client
            .execute("DELETE FROM invites WHERE invite_id = $1", &[&erased])
            .await
            .unwrap();
        assert_eq!(status(&node, &site, &erased).await.0, 404);
    }
}

#[tokio::test]
async fn a_status_read_the_node_has_made_is_answered_without_reading_the_table() {
    // A read of the locked table gives up (503) after 200 ms instead of 5 s.
    let Some((_dir, _db, node, site, client)) =
        one_node(&["--database-statement-timeout", "200ms"]).await
    else {
        return;
    };
    let id = read_invite(&node, &site).await;
    let pending = (200, Some("pending".to_owned()));
    // The node starts listening at its first status read and, once it listens, lets go of
    // what it kept before (changes made meanwhile were not notified to it): a record is
    // kept only from a read that began after. So each attempt reads the invite (kept, once
    // the node listens), then reads it again with the table locked: from memory, or a 503
    // once its 200 ms are up.
    // Behind a lock so that each attempt may hold the connection's one transaction.
    let client = tokio::sync::Mutex::new(client);
    let answered = until(Duration::from_secs(10), || async {
        assert_eq!(status(&node, &site, &id).await, pending);
        let mut client = client.lock().await;
        let lock = client.transaction().await.unwrap();
        lock.batch_execute("LOCK TABLE invites IN ACCESS EXCLUSIVE MODE")
            .await
            .unwrap();
        let answered = status(&node, &site, &id).await;
        lock.rollback().await.unwrap();
        if answered == pending {
            Ok(())
        } else {
            Err(answered)
        }
    })
    .await;
    assert!(
        answered.is_ok(),
        "the read invite was not answered while the table was locked within 10s: {answered:?}"
    );
}

#[tokio::test]
async fn status_reads_stay_exact_while_the_nodes_listening_connection_is_cut_and_after() {
    let Some((_dir, _db, node, site, client)) = one_node(&[]).await else {
        return;
    };
    let (at_once, later) = (
        read_invite(&node, &site).await,
        read_invite(&node, &site).await,
    );
    let listening = |n: i64| {
        let client = &client;
        move || async move { listeners(client).await == n }
    };
    eventually("the node listens", Duration::from_secs(10), listening(1)).await;
    let cut: Vec<i32> = client
        .query(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'agegate-listener' AND datname = current_database()",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(!cut.is_empty(), "no listener to cut");
    // Waits for those backends to be gone, not for no listener at all: the node listens
    // again 500 ms after, and a test starved of the CPU for longer (CI runs many at once)
    // would never see the count at 0.
    eventually("the connection is cut", Duration::from_secs(10), || {
        let (client, cut) = (&client, &cut);
        async move {
            let left: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)",
                    &[cut],
                )
                .await
                .unwrap()
                .get(0);
            left == 0
        }
    })
    .await;
    // Changed while nobody listens (unless this test was that slow): no notification of
    // these reaches the node.
    expire(&client, &at_once).await;
    expire(&client, &later).await;
    assert_eq!(
        status(&node, &site, &at_once).await,
        (200, Some("expired".into()))
    );
    // Once it listens again it has let go of what it kept from before.
    eventually(
        "the node listens again",
        Duration::from_secs(10),
        listening(1),
    )
    .await;
    assert_eq!(
        status(&node, &site, &later).await,
        (200, Some("expired".into()))
    );
    // And it answers from memory again, exactly.
    let after = read_invite(&node, &site).await;
    expire(&client, &after).await;
    assert_eq!(
        status(&node, &site, &after).await,
        (200, Some("expired".into()))
    );
}
