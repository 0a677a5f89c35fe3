//! docs/zk.md#zero-knowledge-proofs: a site's zero-knowledge policy is set by `site
//! create|update --zk off|prefer|require` (default prefer), shown in the site JSON as
//! `"zk"`, on the console's site page (which changes it) and in `statement`.

use serde_json::Value;

use crate::console_actions::{by_id, signed_in, text};
use crate::console_helpers::{db, get, post, spawn_console};
use crate::helpers::{cli_site, run_cli, temp_db, TestDb};

fn show(db: &TestDb, site_id: &str) -> Value {
    let (code, stdout, stderr) = run_cli(db, &["site", "show", site_id, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

fn assert_one_line_error(code: i32, stderr: &str, mentions: &[&str]) {
    assert_ne!(code, 0, "should fail");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    for m in mentions {
        assert!(stderr.contains(m), "{m:?} in {stderr:?}");
    }
}

#[test]
fn the_zk_policy_is_set_at_create_changed_by_update_and_shown_in_the_site_json() {
    let (_dir, db) = temp_db();
    let (plain, _) = cli_site(&db, &[]);
    assert_eq!(show(&db, &plain.site_id)["zk"], "prefer", "the default");
    let (site, _) = cli_site(&db, &["--zk", "require"]);
    assert_eq!(show(&db, &site.site_id)["zk"], "require");
    for policy in ["off", "prefer", "require"] {
        let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--zk", policy]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(show(&db, &site.site_id)["zk"], policy);
    }
    let (code, stdout, _) = run_cli(&db, &["site", "list", "--json"]);
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    // Sites made in the same second list in no fixed order: compare by id.
    let policies: std::collections::BTreeMap<_, _> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["siteId"].as_str().unwrap(), s["zk"].as_str().unwrap()))
        .collect();
    let expected = [
        (plain.site_id.as_str(), "prefer"),
        (site.site_id.as_str(), "require"),
    ];
    assert_eq!(policies, expected.into_iter().collect());
    let (_, text, _) = run_cli(&db, &["site", "show", &site.site_id]);
    assert!(text.contains("ZK proofs:    require"), "{text}");
}

#[test]
fn an_unknown_zk_policy_is_a_usage_error_naming_the_flag_and_changes_nothing() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--zk", "off"]);
    for bad in ["on", "Require", ""] {
        let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--zk", bad]);
        assert_one_line_error(code, &stderr, &["--zk", "off, prefer or require"]);
        let (code, _, stderr) = run_cli(&db, &["site", "create", "--name", "x", "--zk", bad]);
        assert_one_line_error(code, &stderr, &["--zk", "off, prefer or require"]);
    }
    assert_eq!(show(&db, &site.site_id)["zk"], "off");
    let (code, stdout, _) = run_cli(&db, &["site", "list", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1,
        "no site was created"
    );
}

#[tokio::test]
async fn the_console_site_page_shows_the_zk_policy_and_changes_it() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let form = [("name", "ZK shop"), ("zk", "require")];
    let resp = post(&app, &session, "/admin/sites", Some(&session.csrf), &form).await;
    assert_eq!(resp.status(), 200);
    let site_id = by_id(&text(resp).await, "new-site-id").to_owned();
    assert_eq!(show(&db(&app), &site_id)["zk"], "require");
    let path = format!("/admin/sites/{site_id}");
    let page = text(get(&app, &session.cookie, &path).await).await;
    assert_eq!(by_id(&page, "zk"), "require");
    assert!(
        page.contains(r#"<option value="require" selected>require</option>"#),
        "{page}"
    );
    let set = format!("/admin/sites/{site_id}/zk");
    let resp = post(&app, &session, &set, Some(&session.csrf), &[("zk", "off")]).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(
        resp.headers()["location"],
        format!("/admin/sites/{site_id}?notice=zk-changed").as_str()
    );
    assert_eq!(show(&db(&app), &site_id)["zk"], "off");
    let page = text(get(&app, &session.cookie, &path).await).await;
    assert_eq!(by_id(&page, "zk"), "off");
    // A value the policy does not know is refused and changes nothing; so is a form
    // without this session's CSRF token.
    let resp = post(&app, &session, &set, Some(&session.csrf), &[("zk", "on")]).await;
    assert_eq!(resp.status(), 400);
    assert!(text(resp).await.contains("off, prefer or require"));
    let resp = post(&app, &session, &set, None, &[("zk", "require")]).await;
    assert_eq!(resp.status(), 403);
    assert_eq!(show(&db(&app), &site_id)["zk"], "off");
}

#[test]
fn the_statement_names_each_sites_zk_policy() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--zk", "require"]);
    let (code, stdout, stderr) = run_cli(&db, &["statement"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| site | id | minimum age | accepts | zero-knowledge proofs | sandbox |"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.contains(&site.site_id))
        .expect("the site's row");
    assert!(row.ends_with("| require | no |"), "{row}");
}
