//! The database's password is never printed (docs/operations.md#logs): not
//! in `serve`'s first log line or any other, not in an error, not in `statement` or
//! `--help`, whichever form of URL carries it. The test cluster trusts loopback, so
//! the server starts with whatever password the URL holds; the point is what it prints.

use crate::helpers::{agegate, run_cli, ServerProcess, TestDb};
use crate::pg::{postgres_backend, shared};

const SECRET: &str = "Pw-s3cret-Xq9";

/// The shared cluster's new database, as `postgres://postgres@127.0.0.1:PORT/NAME`.
fn database() -> (String, u16, String) {
    let url = shared().create_database();
    let name = url.rsplit('/').next().unwrap().to_owned();
    (url, shared().port, name)
}

fn dead_port() -> u16 {
    // Bound and dropped: nothing listens there afterwards.
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

fn assert_hidden(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows the password: {text}");
    assert!(
        !text.contains("s3cret"),
        "{what} shows part of the password: {text}"
    );
}

#[tokio::test]
async fn serve_never_prints_the_password_of_a_multi_host_or_parameter_url() {
    if !postgres_backend() {
        return;
    }
    let (_, port, name) = database();
    let dead = dead_port();
    for url in [
        // Several hosts, the first one down: the driver moves on to the second.
        format!("postgres://postgres:{SECRET}@127.0.0.1:{dead},127.0.0.1:{port}/{name}?target_session_attrs=read-write"),
        format!("postgres://postgres@127.0.0.1:{port}/{name}?password={SECRET}"),
        format!("postgresql://postgres@127.0.0.1:{port},127.0.0.1:{port}/{name}?sslmode=disable&password=Pw-s3cret%2DXq9"),
        format!("postgres://postgres:Pw-s3cret%2DXq9@127.0.0.1:{port}/{name}"),
    ] {
        let db = TestDb { url: url.clone(), path: None };
        let mut server = ServerProcess::start(&db, &[]);
        assert_hidden("the first log line", &server.first_line);
        assert!(
            server.first_line.contains(&format!("127.0.0.1:{port}/{name}")),
            "the first line names the database: {}",
            server.first_line
        );
        server.stop().await;
        for line in server.log_lines("") {
            assert_hidden("a log line", &line);
        }

        let (code, stdout, stderr) = run_cli(&db, &["statement"]);
        assert_eq!(code, 0, "{stderr}");
        assert_hidden("statement", &stdout);
        assert_hidden("statement's log", &stderr);
    }
}

#[test]
fn an_unreachable_database_is_named_without_its_password() {
    if !postgres_backend() {
        return;
    }
    let (a, b) = (dead_port(), dead_port());
    for url in [
        format!("postgres://postgres:{SECRET}@127.0.0.1:{a},127.0.0.1:{b}/agegate"),
        format!("postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/agegate?PASSWORD={SECRET}"),
        format!("postgres://postgres:{SECRET}@127.0.0.1:{a}/agegate?x=a@b"),
        format!("mysql://root:{SECRET}@127.0.0.1:{a}/agegate"),
    ] {
        let db = TestDb {
            url: url.clone(),
            path: None,
        };
        for args in [&["serve", "--listen", "127.0.0.1:0"][..], &["site", "list"]] {
            let (code, _, stderr) = run_cli(&db, args);
            assert_ne!(code, 0, "{args:?} on {url} should fail: {stderr}");
            assert!(stderr.contains("cannot open database"), "{stderr}");
            assert_hidden("the error", &stderr);
        }
    }
}

#[test]
fn help_does_not_show_a_database_url_from_the_environment() {
    let out = agegate()
        .env(
            "AGEGATE_DATABASE_URL",
            format!("postgres://postgres:{SECRET}@h1,h2/agegate"),
        )
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_hidden("serve --help", &String::from_utf8_lossy(&out.stdout));
}
