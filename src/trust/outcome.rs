//! What one refresh of the signed lists came to (docs/trust.md#where-trust-anchors-come-from):
//! per list an [`Outcome`] and its one log line naming the list (taken, or refused with
//! the reason and what is in force instead; the line is written in `refresh.rs`), and the
//! failures counted for `/metrics`. Below `load.rs`, which keeps the failures.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::lists::Refusal;

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
