//! A credential status list in hand ([`Held`]) and its place in the server's map
//! ([`Slot`]): the verified token, when it was fetched, and which signer requirements
//! it met (`status_lists` fetches and judges).

use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex, RwLock};

use sha2::{Digest, Sha256};

use crate::clock::UnixTime;
use crate::mdoc::status::{ListToken, Signer, StatusRef, TokenError};
use crate::mdoc::TrustAnchors;

/// How long a list without `ttl` is used before it is fetched again (seconds).
pub const DEFAULT_TTL: u64 = 3600;
/// Who must have signed a list, owned (a refresh in the background outlives the answer).
#[derive(Debug, Clone)]
pub enum ListSigner {
    /// The MSO status's `certificate` (DER).
    Certificate(Vec<u8>),
    /// The credential's kind's anchors, which the token's x5chain must chain to.
    Anchors(Arc<TrustAnchors>),
}

impl ListSigner {
    /// The signer a credential names: its `certificate`, else its kind's anchors.
    pub fn of(status: &StatusRef, anchors: Arc<TrustAnchors>) -> Self {
        match &status.certificate {
            Some(der) => ListSigner::Certificate(der.clone()),
            None => ListSigner::Anchors(anchors),
        }
    }

    pub(super) fn borrowed(&self) -> Signer<'_> {
        match self {
            ListSigner::Certificate(der) => Signer::Certificate(der),
            ListSigner::Anchors(anchors) => Signer::Anchors(anchors),
        }
    }

    /// Names this requirement, to remember that a list met it.
    fn memo_key(&self) -> [u8; 32] {
        match self {
            ListSigner::Certificate(der) => Sha256::digest(der).into(),
            ListSigner::Anchors(anchors) => anchors.identity(),
        }
    }
}

/// A list in hand: verified, with the signer requirements it met.
pub(super) struct Held {
    pub(super) token: ListToken,
    pub(super) uri: String,
    pub(super) fetched_at: UnixTime,
    trusted: Mutex<Vec<[u8; 32]>>,
}

impl Held {
    pub(super) fn new(
        token: ListToken,
        uri: &str,
        fetched_at: UnixTime,
        signer: &ListSigner,
    ) -> Self {
        Held {
            token,
            uri: uri.to_owned(),
            fetched_at,
            trusted: Mutex::new(vec![signer.memo_key()]),
        }
    }

    /// Before its `exp`.
    pub(super) fn usable(&self, now: UnixTime) -> bool {
        self.token.exp.is_none_or(|exp| exp > now)
    }

    /// Its `ttl` has run out since it was fetched: fetch it again.
    pub(super) fn stale(&self, now: UnixTime) -> bool {
        let ttl = self.token.ttl.unwrap_or(DEFAULT_TTL);
        let ttl = i64::try_from(ttl).unwrap_or(i64::MAX);
        self.fetched_at.saturating_add(ttl) <= now
    }

    /// Whether `signer` signed it; a signature check is done once per requirement.
    pub(super) fn trust(&self, signer: &ListSigner, now: UnixTime) -> Result<(), TokenError> {
        let key = signer.memo_key();
        let mut trusted = self.trusted.lock().unwrap_or_else(|e| e.into_inner());
        if trusted.contains(&key) {
            return Ok(());
        }
        self.token.check_signer(signer.borrowed(), now)?;
        trusted.push(key);
        Ok(())
    }
}

/// One list's place: the copy in hand, and the one fetch at a time.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) held: RwLock<Option<Arc<Held>>>,
    pub(super) fetching: tokio::sync::Mutex<()>,
    pub(super) refreshing: AtomicBool,
    /// No fetch before this (Unix seconds) after a failure.
    pub(super) retry_at: AtomicI64,
}

impl Slot {
    pub(super) fn current(&self, now: UnixTime) -> Option<Arc<Held>> {
        let held = self.held.read().unwrap_or_else(|e| e.into_inner());
        held.as_ref().filter(|h| h.usable(now)).cloned()
    }

    pub(super) fn install(&self, held: Arc<Held>) {
        *self.held.write().unwrap_or_else(|e| e.into_inner()) = Some(held);
    }
}
