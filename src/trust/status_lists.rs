//! Credential status lists in hand (docs/credential-status.md): fetched whole — never
//! per credential, so the list's host learns nothing of who is checked — only for a
//! credential whose issuer signature verified, under the trust lists' rules for URLs
//! (https, or http on loopback; redirects only to https) with a 5 s timeout and a
//! 4 MiB cap. One fetch at a time per list (answers that need it wait for it); a good
//! list is used until its `exp` and fetched again after its `ttl` (1 hour without one),
//! in the background while the copy in hand is still valid. The last good copy is kept
//! in the database: the nodes sharing it share one copy, and a node whose list host is
//! down still reads it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::source::{FetchError, Fetcher, Source};
use super::status_held::{Held, Slot};
pub use super::status_held::{ListSigner, DEFAULT_TTL};
use crate::clock::{Clock, UnixTime};
use crate::mdoc::status::{ListForm, ListToken, StatusRef, TokenError, MAX_TOKEN_BYTES};
use crate::store::{StatusListStore, StoredStatusList};

/// How long a list fetch may take, whole.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// After a failed fetch, how long before the same list is tried again (seconds), so a
/// host that is down is not asked once per answer.
const RETRY_AFTER_FAILURE: i64 = 30;

/// What the list says of one credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The status value at its entry (0 valid, 1 revoked, 2 suspended, others).
    Status(u8),
    /// Its index is past the list's end.
    OutOfRange,
    /// The list cannot be had or trusted: why, for the log and a refusal.
    Unknown(String),
}

/// A list in hand, as `trust show`, the statement and the console list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListInHand {
    pub form: ListForm,
    pub uri: String,
    pub iat: i64,
    pub exp: Option<i64>,
    pub entries: u64,
    /// Bytes the token had as fetched.
    pub size: usize,
    /// Bytes held in memory for it.
    pub held_bytes: usize,
    pub fetched_at: UnixTime,
}

/// Counts a fetch by its result word: ok, timeout, too_large, http_status, network,
/// uri, invalid, untrusted.
pub type FetchCounter = Box<dyn Fn(&'static str) + Send + Sync>;

/// The server's status lists.
pub struct StatusLists {
    fetcher: Fetcher,
    store: Arc<dyn StatusListStore>,
    clock: Arc<dyn Clock>,
    /// Counts a fetch by its result word (`agegate_status_list_fetches_total`).
    counted: FetchCounter,
    slots: Mutex<HashMap<(ListForm, String), Arc<Slot>>>,
}

impl StatusLists {
    pub fn new(
        store: Arc<dyn StatusListStore>,
        clock: Arc<dyn Clock>,
        counted: FetchCounter,
    ) -> Arc<Self> {
        Arc::new(Self {
            fetcher: Fetcher::new(FETCH_TIMEOUT, MAX_TOKEN_BYTES),
            store,
            clock,
            counted,
            slots: Mutex::new(HashMap::new()),
        })
    }

    /// What the list `status` names says of the credential, `signer` being who must
    /// have signed the list. Waits for a fetch only when no valid copy is in hand.
    pub async fn status(self: &Arc<Self>, status: &StatusRef, signer: ListSigner) -> Verdict {
        let now = self.clock.now();
        let form = status.form();
        let slot = self.slot(form, &status.uri);
        if let Some(held) = slot.current(now) {
            if held.stale(now) {
                self.refresh_in_background(&slot, form, &status.uri, &signer);
            }
            return judge(&held, status, &signer, now);
        }
        let _one_fetch = slot.fetching.lock().await;
        let now = self.clock.now();
        if let Some(held) = slot.current(now) {
            return judge(&held, status, &signer, now);
        }
        match self.load(&slot, form, &status.uri, &signer, now).await {
            Ok(held) => {
                slot.install(held.clone());
                judge(&held, status, &signer, now)
            }
            Err(why) => Verdict::Unknown(why),
        }
    }

    /// The lists in hand, by uri.
    pub fn in_hand(&self) -> Vec<ListInHand> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<ListInHand> = slots
            .iter()
            .filter_map(|((form, _), slot)| {
                let held = slot
                    .held
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()?;
                Some(ListInHand {
                    form: *form,
                    uri: held.uri.clone(),
                    iat: held.token.iat,
                    exp: held.token.exp,
                    entries: held.token.entries(),
                    size: held.token.size(),
                    held_bytes: held.token.held_bytes(),
                    fetched_at: held.fetched_at,
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.uri, a.form.as_str()).cmp(&(&b.uri, b.form.as_str())));
        out
    }

    fn slot(&self, form: ListForm, uri: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry((form, uri.to_owned())).or_default().clone()
    }

    /// A list for a credential that finds none in hand: the database's copy while
    /// within its `ttl` (another node fetched it), else a fetch, else the database's
    /// copy while before its `exp`.
    async fn load(
        &self,
        slot: &Slot,
        form: ListForm,
        uri: &str,
        signer: &ListSigner,
        now: UnixTime,
    ) -> Result<Arc<Held>, String> {
        let url = match list_url(uri) {
            Ok(url) => url,
            Err(why) => {
                (self.counted)("uri");
                tracing::warn!("status list {uri}: not fetched: {why}");
                return Err(format!("its status list is not fetched: {why}"));
            }
        };
        let from_db = self.database_copy(form, uri, signer, now).await;
        if let Some(held) = from_db.as_ref().filter(|h| !h.stale(now)) {
            return Ok(held.clone());
        }
        if slot.retry_at.load(Ordering::Relaxed) > now {
            return from_db
                .ok_or_else(|| "its status list could not be fetched a moment ago".into());
        }
        match self.fetch(&url, form, uri, signer, now).await {
            Ok(held) => Ok(held),
            Err(why) => {
                slot.retry_at
                    .store(now.saturating_add(RETRY_AFTER_FAILURE), Ordering::Relaxed);
                from_db.ok_or(why)
            }
        }
    }

    async fn database_copy(
        &self,
        form: ListForm,
        uri: &str,
        signer: &ListSigner,
        now: UnixTime,
    ) -> Option<Arc<Held>> {
        let copy = match self.store.status_list(form.as_str(), uri).await {
            Ok(copy) => copy?,
            Err(e) => {
                tracing::warn!("status list {uri}: database copy not read: {e}");
                return None;
            }
        };
        let (uri_owned, signer_owned) = (uri.to_owned(), signer.clone());
        let verified = tokio::task::spawn_blocking(move || {
            let token = ListToken::parse(&copy.body, form, &uri_owned, now)?;
            token.check_signer(signer_owned.borrowed(), now)?;
            Ok::<_, TokenError>((token, copy.fetched_at))
        })
        .await;
        match verified {
            Ok(Ok((token, fetched_at))) => {
                Some(Arc::new(Held::new(token, uri, fetched_at, signer)))
            }
            _ => None,
        }
    }

    /// Fetches, verifies and keeps (in hand is the caller's; in the database here).
    async fn fetch(
        &self,
        url: &url::Url,
        form: ListForm,
        uri: &str,
        signer: &ListSigner,
        now: UnixTime,
    ) -> Result<Arc<Held>, String> {
        let body = match self.fetcher.get_url(url, Some(form.media_type())).await {
            Ok(body) => body,
            Err(e) => {
                (self.counted)(fetch_result(&e));
                tracing::warn!("status list {uri}: not fetched: {e}");
                return Err(format!("its status list could not be fetched: {e}"));
            }
        };
        let (uri_owned, signer_owned) = (uri.to_owned(), signer.clone());
        let body = Arc::new(body);
        let bytes = body.clone();
        let verified = tokio::task::spawn_blocking(move || {
            let token = ListToken::parse(&bytes, form, &uri_owned, now)?;
            token.check_signer(signer_owned.borrowed(), now)?;
            Ok::<_, TokenError>(token)
        })
        .await
        .unwrap_or(Err(TokenError::NotCbor));
        let token = match verified {
            Ok(token) => token,
            Err(e) => {
                let result = match e {
                    TokenError::UntrustedSigner
                    | TokenError::SignatureInvalid
                    | TokenError::MissingX5chain
                    | TokenError::AlgorithmKeyMismatch
                    | TokenError::SignerValidity(_) => "untrusted",
                    _ => "invalid",
                };
                (self.counted)(result);
                tracing::warn!("status list {uri}: refused: {e}");
                return Err(format!("its status list was refused: {e}"));
            }
        };
        (self.counted)("ok");
        let copy = StoredStatusList {
            form: form.as_str().to_owned(),
            uri: uri.to_owned(),
            body: Arc::unwrap_or_clone(body),
            iat: token.iat,
            exp: token.exp,
            fetched_at: now,
        };
        if let Err(e) = self.store.save_status_list(copy).await {
            tracing::warn!("status list {uri}: not kept in the database: {e}");
        }
        tracing::info!(
            "status list {uri}: fetched, {} entries, issued {}",
            token.entries(),
            token.iat
        );
        Ok(Arc::new(Held::new(token, uri, now, signer)))
    }

    /// Fetches a list whose `ttl` has run out while the copy in hand stays in use; one
    /// at a time per list, and not again soon after a failure.
    fn refresh_in_background(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        form: ListForm,
        uri: &str,
        signer: &ListSigner,
    ) {
        if slot.retry_at.load(Ordering::Relaxed) > self.clock.now()
            || slot.refreshing.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let (this, slot, uri, signer) =
            (self.clone(), slot.clone(), uri.to_owned(), signer.clone());
        tokio::spawn(async move {
            let _one_fetch = slot.fetching.lock().await;
            let now = this.clock.now();
            let still_stale = slot.current(now).is_none_or(|h| h.stale(now));
            if still_stale {
                match this.load(&slot, form, &uri, &signer, now).await {
                    Ok(held) => slot.install(held),
                    Err(why) => tracing::warn!("status list {uri}: copy in hand kept: {why}"),
                }
            }
            slot.refreshing.store(false, Ordering::Release);
        });
    }
}

/// What `held` says of the credential `status` names, if `signer` signed it.
fn judge(held: &Held, status: &StatusRef, signer: &ListSigner, now: UnixTime) -> Verdict {
    if let Err(e) = held.trust(signer, now) {
        return Verdict::Unknown(format!("its status list was refused: {e}"));
    }
    match held.token.status_of(&status.entry) {
        Some(value) => Verdict::Status(value),
        None => Verdict::OutOfRange,
    }
}

/// The uri as a URL the fetcher may follow: `https://`, or `http://` on loopback.
fn list_url(uri: &str) -> Result<url::Url, String> {
    match Source::parse(uri) {
        Ok(Source::Url(url)) => Ok(url),
        Ok(Source::File(_)) => Err("it is not an https:// URL".into()),
        Err(why) => Err(why),
    }
}

/// A fetch error's word for `agegate_status_list_fetches_total{result}`.
fn fetch_result(e: &FetchError) -> &'static str {
    match e {
        FetchError::Timeout(_) => "timeout",
        FetchError::TooLarge(_) => "too_large",
        FetchError::Status(_) => "http_status",
        FetchError::Network(_) | FetchError::Read(_) => "network",
    }
}

#[cfg(test)]
#[path = "status_lists_tests.rs"]
mod tests;
