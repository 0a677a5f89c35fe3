//! What one refresh of the signed lists came to (docs/trust.md#where-trust-anchors-come-from):
//! per list an [`Outcome`] and its one log line naming the list (taken, or refused with
//! the reason and what is in force instead), and the failures counted for `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::lists::Refusal;
use super::load::{ListFiles, ListStatus};
use crate::clock::rfc3339;

/// How one list's refresh went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub list: &'static str,
    pub location: String,
    /// The sequence number now in force, or why the fetched list was not taken.
    pub result: Result<u64, Refusal>,
    /// The one line that says so, naming the list.
    pub line: String,
}

impl Outcome {
    /// Logs [`Outcome::line`]: info when taken, a warning when refused.
    pub fn log(&self) {
        match self.result {
            Ok(_) => tracing::info!("{}", self.line),
            Err(_) => tracing::warn!("{}", self.line),
        }
    }
}

/// Failures so far, by (location, reason label): `/metrics`'
/// `agegate_trust_list_refresh_failures_total`.
#[derive(Debug, Default)]
pub struct Failures(Mutex<BTreeMap<(String, &'static str), u64>>);

impl Failures {
    pub fn count(&self, outcomes: &[Outcome]) {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for o in outcomes {
            if let Err(refusal) = &o.result {
                *counts
                    .entry((o.location.clone(), refusal.reason.label()))
                    .or_default() += 1;
            }
        }
    }

    pub fn snapshot(&self) -> Vec<((String, &'static str), u64)> {
        let counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        counts.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// Where the list now in force came from, when the fetch failed.
pub(super) enum Kept {
    Database,
    InForce,
    Nothing,
}

/// One line per list and refresh: taken (sequence, anchors), or refused (the reason and
/// what is in force instead).
pub(super) fn line(
    l: &ListFiles,
    location: &str,
    status: Option<&ListStatus>,
    result: &Result<(), (Refusal, Kept)>,
) -> String {
    let name = l.list.name;
    let next = |s: &ListStatus| s.next_update.map_or("none".to_owned(), rfc3339);
    match (result, status) {
        (Ok(()), Some(s)) => format!(
            "trusted list {name} {location}: sequence {} in force, issued {}, next update {}, {} anchor(s){}",
            s.sequence,
            rfc3339(s.issued),
            next(s),
            s.anchors(),
            left_out(s)
        ),
        (Ok(()), None) => format!("trusted list {name} {location}: taken"),
        (Err((refusal, kept)), status) => {
            let instead = match (kept, status) {
                (Kept::Database, Some(s)) => format!(
                    "the database's copy is in force (sequence {}, {} anchor(s))",
                    s.sequence,
                    s.anchors()
                ),
                (Kept::InForce, Some(s)) => format!("sequence {} stays in force", s.sequence),
                _ => format!("no {} anchors from it", l.list.kind),
            };
            format!(
                "trusted list {name} {location} refused ({}): {}; {instead}",
                refusal.reason.label(),
                refusal.detail
            )
        }
    }
}

fn left_out(s: &ListStatus) -> String {
    match s.skipped_unsupported_key {
        0 => String::new(),
        n => format!(", {n} certificate(s) left out (key neither P-256 nor P-384)"),
    }
}
