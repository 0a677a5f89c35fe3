//! `serve --zk-circuits DIR` (docs/zk.md#zero-knowledge-proofs): circuit files are
//! recognised by their SHA-256, unknown files are ignored, and what was loaded is logged.

use crate::helpers::{serve_outcome, temp_db, ServerProcess};
use crate::zk::{vectors, V7_1ATTR_HASH};

/// A directory holding the v7 1-attribute circuit (what a server needs for age_over_NN)
/// and whatever else `extra` names.
pub fn circuit_dir(extra: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let v7 = vectors().join("circuits/google-v7-1attr.circuit");
    std::os::unix::fs::symlink(&v7, dir.path().join("google-v7-1attr.circuit")).unwrap();
    for (name, bytes) in extra {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

#[tokio::test]
async fn known_circuits_load_once_and_unknown_files_are_logged_and_ignored() {
    let v6 = std::fs::read(vectors().join("circuits/google-v6-1attr.circuit")).unwrap();
    let mut v6_altered = v6.clone();
    v6_altered[100] ^= 1;
    let dir = circuit_dir(&[
        ("notes.txt", b"not a circuit"),
        ("altered.circuit", &v6_altered),
    ]);
    let (_db_dir, db) = temp_db();
    let dir_arg = dir.path().to_str().unwrap();
    let server = ServerProcess::start(&db, &["--zk-circuits", dir_arg, "--zk-workers", "3"]);
    server.logged("zero-knowledge proofs: on").await;
    let loaded = server.log_lines("ZK circuit ");
    let about =
        |name: &str| -> Vec<&String> { loaded.iter().filter(|l| l.contains(name)).collect() };
    let v7 = about("google-v7-1attr.circuit");
    assert_eq!(v7.len(), 1, "{loaded:?}");
    assert!(v7[0].contains(&format!(
        "version 7, 1 attribute(s), circuit_hash {V7_1ATTR_HASH}"
    )));
    for ignored in ["notes.txt", "altered.circuit"] {
        let lines = about(ignored);
        assert_eq!(lines.len(), 1, "{loaded:?}");
        assert!(lines[0].contains("ignoring"), "{}", lines[0]);
    }
    let on = server.log_lines("zero-knowledge proofs: on");
    assert!(
        on[0].contains(&format!("1 circuit(s) from {dir_arg}, 3 worker(s)")),
        "{on:?}"
    );
}

#[tokio::test]
async fn without_the_flag_or_without_known_files_zk_is_off() {
    let (_db_dir, db) = temp_db();
    let server = ServerProcess::start(&db, &[]);
    server
        .logged("zero-knowledge proofs: off (no --zk-circuits)")
        .await;
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("x.circuit"), b"\x28\xb5\x2f\xfd").unwrap();
    let server = ServerProcess::start(&db, &["--zk-circuits", empty.path().to_str().unwrap()]);
    server.logged("holds no known circuit file").await;
}

#[test]
fn a_missing_circuit_directory_stops_the_server_with_one_line_naming_it() {
    let (started, stderr) = serve_outcome(
        &["--zk-circuits".into(), "/nonexistent/zk-circuits".into()],
        &[],
    );
    assert!(!started);
    let lines: Vec<_> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("/nonexistent/zk-circuits"),
        "{}",
        lines[0]
    );
}
