use crate::helpers::{agegate, cli_site, run_cli, temp_db};
use serde_json::Value;

fn assert_one_line_error(code: i32, stderr: &str, mentions: &str) {
    assert_ne!(code, 0, "should fail");
    let lines: Vec<_> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got: {stderr:?}");
    assert!(
        lines[0].contains(mentions),
        "'{}' should name '{mentions}'",
        lines[0]
    );
}

#[test]
fn site_create_json_prints_exactly_the_new_site_and_its_secrets() {
    let (_dir, db) = temp_db();
    let (code, stdout, stderr) = run_cli(&db, &["site", "create", "--name", "Shop", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(stdout.trim()).expect("exactly one JSON object");
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["password", "siteId", "username", "webhookSecret"]);
    assert!(uuid::Uuid::parse_str(v["siteId"].as_str().unwrap()).is_ok());
    assert!(v["webhookSecret"].as_str().unwrap().starts_with("whsec_"));
    assert!(v["password"].as_str().unwrap().len() >= 22, "≥128 bits");
}

#[test]
fn site_create_without_json_prints_the_same_facts_for_a_person() {
    let (_dir, db) = temp_db();
    let (code, stdout, _) = run_cli(&db, &["site", "create", "--name", "Shop", "--sandbox"]);
    assert_eq!(code, 0);
    for label in [
        "siteId:",
        "username:",
        "password:",
        "webhookSecret:",
        "whsec_",
        "sandbox",
    ] {
        assert!(stdout.contains(label), "{label} in {stdout}");
    }
}

#[test]
fn list_and_show_describe_sites_without_any_secret() {
    let (_dir, db) = temp_db();
    let (site, created) = cli_site(
        &db,
        &[
            "--redirect-url",
            "https://shop.example/back?x=1",
            "--webhook-url",
            "https://shop.example/hooks",
            "--sandbox",
        ],
    );
    let (code, stdout, _) = run_cli(&db, &["site", "show", &site.site_id, "--json"]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let mut keys: Vec<_> = shown.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "accept",
            "createdAt",
            "credentials",
            "minAge",
            "name",
            "redirectUrl",
            "sandbox",
            "siteId",
            "webhookFormat",
            "webhookUrl",
            "zk"
        ]
    );
    assert_eq!(shown["siteId"], site.site_id.as_str());
    assert_eq!(shown["name"], "CLI shop");
    // `all`, the default, written out as the kinds' names (docs/kinds.md#credential-kinds).
    assert_eq!(
        shown["accept"],
        serde_json::json!(["eu-av", "eudi-pid", "mdl", "google-id", "photo-id"])
    );
    assert_eq!(shown["redirectUrl"], "https://shop.example/back?x=1");
    assert_eq!(shown["webhookUrl"], "https://shop.example/hooks");
    assert_eq!(shown["sandbox"], true);
    assert_eq!(shown["minAge"], 18);
    assert_eq!(shown["webhookFormat"], "standard");
    assert_eq!(shown["zk"], "prefer");
    assert!(humantime::parse_rfc3339(shown["createdAt"].as_str().unwrap()).is_ok());
    let creds = shown["credentials"].as_array().unwrap();
    assert_eq!(creds.len(), 1);
    assert_eq!(creds[0]["username"], site.username.as_str());
    assert_eq!(creds[0]["revokedAt"], Value::Null);

    let (code, stdout, _) = run_cli(&db, &["site", "list", "--json"]);
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(list, Value::Array(vec![shown]));
    for out in [&stdout, &run_cli(&db, &["site", "list"]).1] {
        assert!(!out.contains(&site.password));
        assert!(!out.contains(created["webhookSecret"].as_str().unwrap()));
    }
}

#[test]
fn the_database_keeps_no_password() {
    let (dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let (code, stdout, _) = run_cli(&db, &["site", "key", "create", &site.site_id, "--json"]);
    assert_eq!(code, 0);
    let key: Value = serde_json::from_str(&stdout).unwrap();
    let stored: Vec<Vec<u8>> = match &db.path {
        // Every file SQLite wrote (database, WAL, shared memory).
        Some(_) => std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
            .collect(),
        // Everything PostgreSQL holds for this database.
        None => {
            let dump = std::process::Command::new("pg_dump")
                .arg(&db.url)
                .output()
                .unwrap();
            assert!(dump.status.success(), "pg_dump");
            vec![dump.stdout]
        }
    };
    assert!(
        stored.iter().map(Vec::len).sum::<usize>() > 1000,
        "something was read"
    );
    for bytes in stored {
        for password in [site.password.as_str(), key["password"].as_str().unwrap()] {
            assert!(
                !bytes
                    .windows(password.len())
                    .any(|w| w == password.as_bytes()),
                "a password is stored in the clear"
            );
        }
    }
}

#[test]
fn update_changes_urls_and_an_empty_value_clears_one() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--webhook-url", "https://a.example/h"]);
    let (code, _, stderr) = run_cli(
        &db,
        &[
            "site",
            "update",
            &site.site_id,
            "--redirect-url",
            "https://b.example/done",
            "--webhook-url",
            "",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, stdout, _) = run_cli(&db, &["site", "show", &site.site_id, "--json"]);
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["redirectUrl"], "https://b.example/done");
    assert_eq!(shown["webhookUrl"], Value::Null);
}

#[test]
fn keys_can_be_added_and_revoked() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let (code, stdout, _) = run_cli(&db, &["site", "key", "create", &site.site_id, "--json"]);
    assert_eq!(code, 0);
    let key: Value = serde_json::from_str(&stdout).unwrap();
    let mut keys: Vec<_> = key.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["password", "username"]);
    let (code, _, stderr) = run_cli(
        &db,
        &["site", "key", "revoke", &site.site_id, &site.username],
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, stdout, _) = run_cli(&db, &["site", "show", &site.site_id, "--json"]);
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let creds = shown["credentials"].as_array().unwrap();
    assert_eq!(creds.len(), 2);
    let first = creds
        .iter()
        .find(|c| c["username"] == site.username.as_str())
        .unwrap();
    assert!(first["revokedAt"].is_string());
    let second = creds
        .iter()
        .find(|c| c["username"] == key["username"])
        .unwrap();
    assert_eq!(second["revokedAt"], Value::Null);
}

#[test]
fn webhook_secret_rotation_prints_a_new_secret() {
    let (_dir, db) = temp_db();
    let (site, created) = cli_site(&db, &[]);
    let (code, stdout, _) = run_cli(
        &db,
        &["site", "webhook-secret", "rotate", &site.site_id, "--json"],
    );
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 1);
    let secret = v["webhookSecret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    assert_ne!(secret, created["webhookSecret"].as_str().unwrap());
}

#[test]
fn bad_input_exits_non_zero_with_one_line_naming_the_problem() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let unknown = "6f9619ff-8b86-d011-b42d-00cf4fc964ff";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["site", "show", unknown], unknown),
        (vec!["site", "show", "not-a-uuid"], "not-a-uuid"),
        (vec!["site", "create"], "--name"),
        (
            vec![
                "site",
                "create",
                "--name",
                "x",
                "--redirect-url",
                "nota url",
            ],
            "nota url",
        ),
        (
            vec![
                "site",
                "create",
                "--name",
                "x",
                "--webhook-url",
                "ftp://x.example/",
            ],
            "ftp://x.example/",
        ),
        (
            vec![
                "site",
                "update",
                unknown,
                "--redirect-url",
                "https://x.example/",
            ],
            unknown,
        ),
        (
            vec!["site", "update", &site.site_id, "--webhook-url", "bad"],
            "bad",
        ),
        (vec!["site", "update", &site.site_id], "nothing to update"),
        (vec!["site", "key", "create", unknown], unknown),
        (
            vec!["site", "key", "revoke", &site.site_id, "key_nobody"],
            "key_nobody",
        ),
        (
            vec!["site", "key", "revoke", unknown, "key_nobody"],
            unknown,
        ),
        (vec!["site", "webhook-secret", "rotate", unknown], unknown),
        (vec!["site", "frobnicate"], "frobnicate"),
        (vec!["serve", "--webhook-retry-schedule", "soon"], "soon"),
    ];
    for (args, mentions) in cases {
        let (code, _, stderr) = run_cli(&db, &args);
        assert_one_line_error(code, &stderr, mentions);
    }
}

/// docs/operations.md#command-line-rules: a value that starts with `-` is that flag's value, refused naming the
/// flag (not "unexpected argument").
#[test]
fn a_value_starting_with_a_dash_is_refused_naming_its_flag() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &[]);
    let cases: [&[&str]; 6] = [
        &["site", "create", "--name", "x", "--min-age", "-1"],
        &["site", "update", &site.site_id, "--min-age", "-18"],
        &["site", "deliveries", &site.site_id, "--limit", "-5"],
        &["serve", "--retention", "-5d"],
        &["serve", "--rate-limit", "-1"],
        &["serve", "--webhook-retry-schedule", "-1s"],
    ];
    for args in cases {
        let flag = args[args.len() - 2];
        let (code, _, stderr) = run_cli(&db, args);
        assert_one_line_error(code, &stderr, flag);
        assert!(
            !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(args[args.len() - 1]), "{args:?}: {stderr}");
    }
}

#[test]
fn default_database_is_agegate_db_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = agegate()
        .current_dir(dir.path())
        .args(["site", "create", "--name", "Default", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(dir.path().join("agegate.db").exists());
    // The environment variable is honoured too.
    let other = dir.path().join("other.db");
    let out = agegate()
        .current_dir(dir.path())
        .env(
            "AGEGATE_DATABASE_URL",
            format!("sqlite:{}", other.display()),
        )
        .args(["site", "list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "[]");
    assert!(other.exists());
}

#[test]
fn min_age_is_set_at_create_changed_by_update_and_must_be_1_to_99() {
    let (_dir, db) = temp_db();
    let (site, created) = cli_site(&db, &["--min-age", "16"]);
    assert_eq!(created["siteId"], site.site_id.as_str());
    let show = |db| {
        let (code, stdout, _) = run_cli(db, &["site", "show", &site.site_id, "--json"]);
        assert_eq!(code, 0);
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    assert_eq!(show(&db)["minAge"], 16);
    let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--min-age", "21"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(show(&db)["minAge"], 21);
    for bad in ["0", "100", "eighteen"] {
        let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--min-age", bad]);
        assert_one_line_error(code, &stderr, "minimum age");
        let (code, _, stderr) = run_cli(&db, &["site", "create", "--name", "x", "--min-age", bad]);
        assert_one_line_error(code, &stderr, "minimum age");
    }
    assert_eq!(show(&db)["minAge"], 21);
}

#[test]
fn accepted_kinds_are_set_at_create_changed_by_update_and_written_out_in_the_table_order() {
    let (_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "mdl,eu-av"]);
    let show = |db| {
        let (code, stdout, _) = run_cli(db, &["site", "show", &site.site_id, "--json"]);
        assert_eq!(code, 0);
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    assert_eq!(show(&db)["accept"], serde_json::json!(["eu-av", "mdl"]));
    let (code, _, stderr) = run_cli(
        &db,
        &["site", "update", &site.site_id, "--accept", "eudi-pid"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(show(&db)["accept"], serde_json::json!(["eudi-pid"]));
    let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--accept", "all"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        show(&db)["accept"],
        serde_json::json!(["eu-av", "eudi-pid", "mdl", "google-id", "photo-id"])
    );
    let (_, text, _) = run_cli(&db, &["site", "show", &site.site_id]);
    assert!(
        text.contains("accepts:      eu-av, eudi-pid, mdl, google-id, photo-id"),
        "{text}"
    );
    let (code, _, stderr) = run_cli(
        &db,
        &[
            "site",
            "update",
            &site.site_id,
            "--accept",
            "photo-id,google-id",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        show(&db)["accept"],
        serde_json::json!(["google-id", "photo-id"])
    );
    for (bad, names) in [("passport", "passport"), ("", "empty"), ("mdl,,x", "'x'")] {
        let (code, _, stderr) = run_cli(&db, &["site", "update", &site.site_id, "--accept", bad]);
        assert_one_line_error(code, &stderr, names);
        assert!(stderr.contains("--accept"), "names the flag: {stderr}");
        let (code, _, stderr) = run_cli(&db, &["site", "create", "--name", "x", "--accept", bad]);
        assert_one_line_error(code, &stderr, names);
    }
    assert_eq!(
        show(&db)["accept"],
        serde_json::json!(["google-id", "photo-id"]),
        "a refused update changes nothing"
    );
}
