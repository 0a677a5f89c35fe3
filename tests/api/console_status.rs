//! The console's overview counts verified invites by the credential status their
//! receipts record (docs/console.md#what-it-shows, docs/credential-status.md): answers
//! whose lists say valid, a credential naming no list, a list host that is down under
//! `check`, a node with `--credential-status off`, and a verifier's verification; and
//! verifications stored before the counts began are counted once. Both backends.

use agegate::domain::StatusMode;
use agegate::testkit::status_list_ref;
use serde_json::json;

use crate::console_actions::{signed_in, text};
use crate::console_helpers::{get, Session};
use crate::credential_status_helpers::{
    answer_with_status, receipt_status, refused, status_list, ListServer, Served,
};
use crate::eu_av::eu_av_app_with;
use crate::helpers::{spawn_beside, trusting, TestApp, T0};
use crate::wallet::TestIssuer;

/// `2026-…`: the UTC day of T0, the day every verification here happens.
fn today() -> String {
    agegate::clock::rfc3339(T0 / 86_400 * 86_400)[..10].to_owned()
}

/// A console node trusting `issuer`, checking credential status; a list host whose
/// `/sl/1` revokes entry 1, and whose `/sl/down` answers 503.
async fn console_and_lists(issuer: &TestIssuer) -> (TestApp, ListServer, String) {
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/1");
    let signer = issuer.status_signer(T0);
    lists.serve_body("/sl/1", status_list(&uri, &signer, json!({"1": 1}), |_| {}));
    lists.serve(
        "/sl/down",
        Served {
            status: Some(503),
            ..Served::default()
        },
    );
    let app = eu_av_app_with(issuer, |s| {
        s.credential_status = StatusMode::Check;
        s.admin_listen = Some("127.0.0.1:0".into());
    })
    .await;
    (app, lists, uri)
}

/// Verifies an invite with a credential naming `status`, whose receipt records `recorded`.
async fn verify_with(
    app: &TestApp,
    issuer: &TestIssuer,
    status: Option<ciborium::Value>,
    recorded: &str,
) {
    let (site, id, resp) = answer_with_status(app, issuer, status).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(app, &site, &id).await, recorded);
}

/// Verifies an invite through the verifier API: no credential, so no status.
async fn verify_by_verifier(app: &TestApp) {
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
}

/// The overview's row of today in the table by credential status, and the status
/// chart's `<title>` of today.
async fn todays_statuses(app: &TestApp, session: &Session) -> (String, String) {
    let html = text(get(app, &session.cookie, "/admin/").await).await;
    let table = html
        .split("id=\"status-days\"")
        .nth(1)
        .expect("the table by status");
    let at = table.find(&format!(">{}</td>", today())).unwrap();
    let row = table[at..].split("</tr>").next().unwrap().to_owned();
    let chart = html
        .split("id=\"statuses\"")
        .nth(1)
        .expect("the status chart");
    let title = chart
        .split("<title>")
        .find(|t| t.starts_with(&today()))
        .and_then(|t| t.split("</title>").next())
        .unwrap()
        .to_owned();
    (row, title)
}

fn assert_cells(row: &str, cells: &[(&str, u64)]) {
    for (label, n) in cells {
        let cell = format!("data-label=\"{label}\">{n}<");
        assert!(row.contains(&cell), "{cell} in {row}");
    }
}

#[tokio::test]
async fn the_overview_counts_verified_invites_by_the_credential_status_their_receipts_record() {
    let issuer = TestIssuer::new(T0);
    let (app, lists, uri) = console_and_lists(&issuer).await;
    verify_with(&app, &issuer, Some(status_list_ref(2, &uri, None)), "valid").await;
    // Revoked: refused, so neither verified nor counted by status.
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(1, &uri, None))).await;
    refused(resp).await;
    verify_with(&app, &issuer, None, "none").await;
    let down = Some(status_list_ref(3, &lists.uri("/sl/down"), None));
    verify_with(&app, &issuer, down, "unknown").await;
    let off = spawn_beside(&app, |s| {
        s.trust = trusting(agegate::domain::Kind::EU_AV, &issuer.ca_pem);
        s.credential_status = StatusMode::Off;
    })
    .await;
    verify_with(
        &off,
        &issuer,
        Some(status_list_ref(4, &uri, None)),
        "unchecked",
    )
    .await;
    verify_by_verifier(&app).await;

    let session = signed_in(&app).await;
    let (row, title) = todays_statuses(&app, &session).await;
    assert_eq!(
        title,
        format!(
            "{}: 5 verified (valid 1, unknown 1, unchecked 1, none 1, not recorded 1)",
            today()
        )
    );
    assert_cells(
        &row,
        &[
            ("Verified", 5),
            ("Status: valid", 1),
            ("Status: unknown", 1),
            ("Status: unchecked", 1),
            ("Status: none", 1),
            ("Status: not recorded", 1),
        ],
    );
    let html = text(get(&app, &session.cookie, "/admin/").await).await;
    assert!(
        html.contains(&format!(
            "<title>{}: 6 created, 5 verified (eu-av 4, verifier 1), 0 expired</title>",
            today()
        )),
        "{html}"
    );
    assert!(html.contains(
        "<desc id=\"status-chart-desc\">In all: valid 1, unknown 1, unchecked 1, none 1, \
         not recorded 1."
    ));
}

#[tokio::test]
async fn verifications_stored_before_the_counts_by_status_began_are_counted_once() {
    let issuer = TestIssuer::new(T0);
    let (app, _lists, uri) = console_and_lists(&issuer).await;
    verify_with(&app, &issuer, Some(status_list_ref(2, &uri, None)), "valid").await;
    verify_with(&app, &issuer, Some(status_list_ref(3, &uri, None)), "valid").await;
    verify_with(&app, &issuer, None, "none").await;
    verify_by_verifier(&app).await;
    let session = signed_in(&app).await;
    let counted = [
        ("Verified", 4),
        ("Status: valid", 2),
        ("Status: none", 1),
        ("Status: not recorded", 1),
    ];
    assert_cells(&todays_statuses(&app, &session).await.0, &counted);

    // The database as the previous release left it: no counts by status, and the
    // migration that adds them not yet run.
    before_the_migration(&app).await;
    let (row, _) = todays_statuses(&app, &session).await;
    assert_cells(&row, &[("Status: valid", 0), ("Status: not recorded", 4)]);

    // A node of this release migrates, counting each stored receipt once; a second
    // start finds nothing left to do.
    for _ in 0..2 {
        let node = spawn_beside(&app, |_| {}).await;
        node.stop().await;
        assert_cells(&todays_statuses(&app, &session).await.0, &counted);
    }
}

/// The migrations that count stored receipts by credential status (SQLite, PostgreSQL).
const STATUS_MIGRATION: (i64, i64) = (19, 14);
/// Why this test stops when a later migration exists: it marks the credential-status
/// migration as not run, and SQLite's runner would run every later one again too.
const NOT_LAST: &str = "the credential-status migration is no longer the last: mark only \
    it as not run here, or re-run it another way";

/// Removes the counts by credential status and marks their migration as not run.
async fn before_the_migration(app: &TestApp) {
    const REMOVE: &str = "DELETE FROM invite_tallies WHERE event = 'credential-status'";
    if crate::pg::postgres_backend() {
        let (client, connection) = tokio_postgres::connect(&app.db_url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let last: i64 = client
            .query_one("SELECT MAX(version)::bigint FROM schema_migrations", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(last, STATUS_MIGRATION.1, "{NOT_LAST}");
        let sql = format!(
            "{REMOVE}; DELETE FROM schema_migrations WHERE version = {}",
            STATUS_MIGRATION.1
        );
        client.batch_execute(&sql).await.unwrap();
    } else {
        let path = app.db_url.strip_prefix("sqlite:").unwrap();
        let conn = rusqlite::Connection::open(path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, STATUS_MIGRATION.0, "{NOT_LAST}");
        conn.execute_batch(&format!("{REMOVE}; PRAGMA user_version = {}", version - 1))
            .unwrap();
    }
}
