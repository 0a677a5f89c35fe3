//! Keeping the signed lists current (docs/trust.md#where-trust-anchors-come-from): at
//! start, every `--trust-refresh` or at a list's `NextUpdate` if sooner, and on SIGHUP.
//! For each list a node takes the newest good one of what it fetched and what the
//! database holds, never one older than the list in force; a list that fails keeps the
//! one in force (unless that is past `NextUpdate` + 7 days). Each outcome is one log line
//! naming the list. Fetching and the database are awaited, verifying runs on the blocking
//! pool, and the new set is swapped in whole: request handling never waits for any of it.

use std::sync::Arc;
use std::time::Duration;

use super::lists::{Reason, Refusal, Verified};
use super::load::{ListFiles, ListStatus, Trust, TrustFiles, TrustHandle};
pub use super::outcome::{Failures, Outcome};
use super::source::Fetcher;
use super::AnchorSource;
use crate::clock::{rfc3339, Clock, UnixTime};
use crate::store::{StoredList, TrustListStore};

/// The default of `--trust-refresh`.
pub const DEFAULT_REFRESH: &str = "1h";

impl TrustHandle {
    /// The set a server starts with: the PEM files (an unreadable one, an unreadable list
    /// signer, or a list from a file that fails is the error) and each list from a URL as
    /// [`refresh_lists`] finds it. The caller logs the outcomes (a server after its first
    /// line).
    pub async fn start<S: TrustListStore + ?Sized>(
        files: TrustFiles,
        store: &S,
        fetcher: &Fetcher,
        now: UnixTime,
    ) -> Result<(Arc<Self>, Vec<Outcome>), String> {
        let pem = files.check()?;
        let (lists, outcomes) = refresh_lists(&files, &Trust::default(), store, fetcher, now).await;
        // A list from a file is configuration, like a PEM file: one that fails stops the
        // start. A URL's may be down for a while: the database's copy stands in.
        for (l, o) in files.lists.iter().zip(&outcomes) {
            if let (false, Err(refusal)) = (l.source.is_url(), &o.result) {
                return Err(format!(
                    "trusted list {} {} refused ({}): {}",
                    o.list,
                    o.location,
                    refusal.reason.label(),
                    refusal.detail
                ));
            }
        }
        let handle = Self::new(files, Trust::assemble(pem, lists, now));
        handle.failures.count(&outcomes);
        Ok((handle, outcomes))
    }

    /// Fetches every list again (and, with `reread_files`, the PEM files: SIGHUP) and puts
    /// the result in force. A PEM file that fails keeps the files' anchors in force.
    pub async fn refresh<S: TrustListStore + ?Sized>(
        &self,
        store: &S,
        fetcher: &Fetcher,
        now: UnixTime,
        reread_files: bool,
    ) -> Vec<Outcome> {
        if self.files.is_empty() {
            return Vec::new();
        }
        let previous = self.current();
        let reread = reread_files.then(|| self.files.load_files());
        let files = match &reread {
            Some(Ok(files)) => files.clone(),
            _ => previous.files.clone(),
        };
        let (lists, outcomes) = refresh_lists(&self.files, &previous, store, fetcher, now).await;
        let fresh = self.swap(Trust::assemble(files, lists, now));
        outcomes.iter().for_each(Outcome::log);
        match reread {
            Some(Ok(_)) => {
                tracing::info!("SIGHUP: trust anchors reloaded");
                for line in fresh.kinds_summary() {
                    tracing::info!("{line}");
                }
            }
            Some(Err(why)) => {
                tracing::error!("SIGHUP: trust anchors not reloaded, the old ones stay: {why}")
            }
            None => {}
        }
        self.failures.count(&outcomes);
        outcomes
    }
}

/// Each list of `files`, refreshed against the ones in force in `previous`.
async fn refresh_lists<S: TrustListStore + ?Sized>(
    files: &TrustFiles,
    previous: &Trust,
    store: &S,
    fetcher: &Fetcher,
    now: UnixTime,
) -> (Vec<ListStatus>, Vec<Outcome>) {
    let mut lists = Vec::new();
    let mut outcomes = Vec::new();
    for l in &files.lists {
        let location = l.source.to_string();
        let in_force = previous
            .lists
            .iter()
            .find(|s| s.list.name == l.list.name && s.location == location);
        let (status, result) = refresh_one(l, &location, in_force, store, fetcher, now).await;
        let line = line(l, &location, status.as_ref(), &result);
        let result = match result {
            Ok(()) => Ok(status.as_ref().map_or(0, |s| s.sequence)),
            Err((refusal, _)) => Err(refusal),
        };
        lists.extend(status);
        outcomes.push(Outcome {
            list: l.list.name,
            location,
            result,
            line,
        });
    }
    (lists, outcomes)
}

/// The list in force after one refresh, and how the fetch went.
async fn refresh_one<S: TrustListStore + ?Sized>(
    l: &ListFiles,
    location: &str,
    in_force: Option<&ListStatus>,
    store: &S,
    fetcher: &Fetcher,
    now: UnixTime,
) -> (Option<ListStatus>, Result<(), (Refusal, Kept)>) {
    let kept = |refusal: Refusal| {
        let still = in_force.filter(|s| !s.is_stale(now)).cloned();
        let how = if still.is_some() {
            Kept::InForce
        } else {
            Kept::Nothing
        };
        (still, Err((refusal, how)))
    };
    let signer_pem = match std::fs::read_to_string(&l.signer) {
        Ok(pem) => pem,
        Err(e) => {
            let shown = l.signer.display();
            return kept(Refusal::new(
                Reason::Signer,
                format!("cannot read signer '{shown}': {e}"),
            ));
        }
    };
    let stored = match store.trust_list(l.list.name, location).await {
        Ok(stored) => stored,
        Err(e) => {
            tracing::warn!(
                "trusted list {} {location}: database copy not read: {e}",
                l.list.name
            );
            None
        }
    };
    let fetched = fetcher.get(&l.source).await.map_err(Refusal::from);
    let list = l.list;
    let floor = in_force.map(|s| s.sequence);
    let verified = tokio::task::spawn_blocking(move || {
        let from_db = newer_copy(stored, floor, |body| {
            list.read(body, &signer_pem, now, floor).ok()
        });
        let floor = floor.max(from_db.as_ref().map(|(v, _)| v.sequence));
        let fetched = fetched.and_then(|bytes| {
            let v = list.read(&bytes, &signer_pem, now, floor)?;
            Ok((v, bytes))
        });
        (from_db, fetched)
    })
    .await;
    let (from_db, fetched) = match verified {
        Ok(both) => both,
        Err(e) => {
            return kept(Refusal::new(
                Reason::Invalid,
                format!("verification failed: {e}"),
            ))
        }
    };
    let status = |v: Verified, last_success| ListStatus {
        list,
        location: location.to_owned(),
        sequence: v.sequence,
        issued: v.issued,
        next_update: v.next_update,
        last_success,
        skipped_unsupported_key: v.skipped_unsupported_key,
        source: AnchorSource {
            kind: list.kind,
            origin: format!("{}{location}", list.origin_prefix),
            anchors: Arc::new(v.anchors),
        },
    };
    match fetched {
        Ok((v, body)) => {
            let copy = StoredList {
                list: list.name.to_owned(),
                location: location.to_owned(),
                body,
                sequence: v.sequence,
                issued: v.issued,
                next_update: v.next_update,
                last_success: now,
            };
            if let Err(e) = store.save_trust_list(copy).await {
                tracing::warn!(
                    "trusted list {} {location}: not kept in the database: {e}",
                    list.name
                );
            }
            (Some(status(v, now)), Ok(()))
        }
        Err(refusal) => match from_db {
            Some((v, last_success)) => (
                Some(status(v, last_success)),
                Err((refusal, Kept::Database)),
            ),
            _ => kept(refusal),
        },
    }
}

/// The database's copy, verified by `read`, if it is newer than the list in force
/// (sequence `floor`). A copy whose stored sequence is not above `floor` could replace
/// nothing, so it is not verified at all: a refresh of a list in force costs one
/// verification, not two. The stored sequence is the one its node verified; the body's
/// is checked again.
fn newer_copy(
    stored: Option<StoredList>,
    floor: Option<u64>,
    read: impl FnOnce(&[u8]) -> Option<Verified>,
) -> Option<(Verified, UnixTime)> {
    let newer = |sequence: u64| floor.is_none_or(|f| sequence > f);
    let copy = stored.filter(|s| newer(s.sequence))?;
    let verified = read(&copy.body).filter(|v| newer(v.sequence))?;
    Some((verified, copy.last_success))
}

/// How long until the next refresh: `every`, or sooner if a list's `NextUpdate` comes
/// first; at least a second.
pub fn next_wait(trust: &Trust, now: UnixTime, every: Duration) -> Duration {
    let soonest = trust
        .lists
        .iter()
        .filter_map(|l| l.next_update)
        .filter(|&next| next > now)
        .map(|next| Duration::from_secs(u64::try_from(next - now).unwrap_or(0)))
        .min();
    soonest
        .map_or(every, |s| s.min(every))
        .max(Duration::from_secs(1))
}

/// Where `trust show` keeps no copies: without a list from a URL it opens no database
/// (the files say everything), so a look at a configuration creates none.
pub struct NoDatabase;

#[async_trait::async_trait]
impl TrustListStore for NoDatabase {
    async fn trust_list(
        &self,
        _list: &str,
        _location: &str,
    ) -> crate::store::StoreResult<Option<StoredList>> {
        Ok(None)
    }

    async fn save_trust_list(&self, _copy: StoredList) -> crate::store::StoreResult<()> {
        Ok(())
    }
}

/// The refresher: runs until `shutdown`, refreshing on schedule and when woken (SIGHUP,
/// which also rereads the PEM files).
pub async fn run<S: TrustListStore + ?Sized>(
    handle: Arc<TrustHandle>,
    store: Arc<S>,
    clock: Arc<dyn Clock>,
    every: Duration,
    shutdown: tokio_util::sync::CancellationToken,
) {
    if handle.files().is_empty() {
        return;
    }
    let fetcher = Fetcher::default();
    loop {
        let wait = next_wait(&handle.current(), clock.now(), every);
        let reread_files = tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(wait) => false,
            _ = handle.wake.notified() => true,
        };
        handle
            .refresh(store.as_ref(), &fetcher, clock.now(), reread_files)
            .await;
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

#[cfg(test)]
#[path = "refresh_tests.rs"]
mod tests;
