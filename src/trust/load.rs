//! The anchors in force and the one path that builds them: PEM files read at start and on
//! SIGHUP, signed lists fetched at start, on each refresh and on SIGHUP
//! ([`super::refresh`]). Every reader takes the current set through
//! [`TrustHandle::current`]; a new set replaces the old one whole, so a change reaches
//! every page, answer, listing and cache at once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::lists::ListType;
use super::source::Source;
use super::AnchorSource;
use crate::clock::UnixTime;
use crate::domain::Kind;
use crate::mdoc::{KindAnchors, TrustAnchors};

/// Where the anchors come from (`serve`'s trust flags).
#[derive(Debug, Clone, Default)]
pub struct TrustFiles {
    /// PEM bundles of CA certificates, each for one kind (`--eu-av-trust-anchors`, ...).
    pub pem: Vec<(Kind, PathBuf)>,
    /// Signed lists: `--mdl-vical`, `--eu-av-trusted-list`, `--eudi-pid-lote`,
    /// `--mdl-lote`, each with its signer.
    pub lists: Vec<ListFiles>,
}

/// A signed list's source and the PEM file of the certificates its signer must be, or
/// chain to.
#[derive(Debug, Clone)]
pub struct ListFiles {
    pub list: &'static ListType,
    pub source: Source,
    pub signer: PathBuf,
}

/// A signed list in force, for people (`trust show`, `/metrics`) and for the next refresh
/// (its sequence number may not go backwards).
#[derive(Debug, Clone)]
pub struct ListStatus {
    pub list: &'static ListType,
    /// Where it was read from: the path or URL.
    pub location: String,
    pub sequence: u64,
    /// Issue date and `NextUpdate` (none: a VICAL without one), Unix seconds.
    pub issued: i64,
    pub next_update: Option<i64>,
    /// When a node last fetched and verified it.
    pub last_success: UnixTime,
    /// Recognised providers' certificates left out: their key is neither P-256 nor P-384.
    pub skipped_unsupported_key: usize,
    /// Its anchors.
    pub source: AnchorSource,
}

impl ListStatus {
    pub fn kind(&self) -> Kind {
        self.list.kind
    }

    pub fn anchors(&self) -> usize {
        self.source.anchors.len()
    }

    /// Past `NextUpdate` by more than 7 days, for a list whose anchors then end.
    pub fn is_stale(&self, now: UnixTime) -> bool {
        self.list.drops_when_stale
            && self
                .next_update
                .is_some_and(|next| now > next + crate::trustlist::tsl::STALE_AFTER_SECS)
    }
}

/// The anchors in force: per kind for the verifier, per source for people.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pub anchors: KindAnchors,
    /// Every source: the PEM files', then the lists'.
    pub sources: Vec<AnchorSource>,
    /// The signed lists in force.
    pub lists: Vec<ListStatus>,
    /// The PEM files' sources alone (a refresh keeps them; SIGHUP reads them again).
    pub files: Vec<AnchorSource>,
}

impl Trust {
    /// The kinds of `sources` under their anchors (a kind's sources are merged).
    pub fn from_sources(sources: Vec<AnchorSource>) -> Self {
        Self::assemble(sources, Vec::new(), UnixTime::MIN)
    }

    /// The one way a set is built: the files' sources and the lists in force at `now`
    /// (a list past `NextUpdate` + 7 days gives nothing).
    pub fn assemble(files: Vec<AnchorSource>, lists: Vec<ListStatus>, now: UnixTime) -> Self {
        let lists: Vec<ListStatus> = lists.into_iter().filter(|l| !l.is_stale(now)).collect();
        let sources: Vec<AnchorSource> = files
            .iter()
            .cloned()
            .chain(lists.iter().map(|l| l.source.clone()))
            .collect();
        let mut anchors = KindAnchors::none();
        for kind in Kind::all() {
            let of_kind: Vec<&TrustAnchors> = sources
                .iter()
                .filter(|s| s.kind == kind)
                .map(|s| s.anchors.as_ref())
                .collect();
            if !of_kind.is_empty() {
                anchors = anchors.with(kind, Arc::new(TrustAnchors::merged(of_kind)));
            }
        }
        Self {
            anchors,
            sources,
            lists,
            files,
        }
    }

    /// One start-up line per credential kind: on with how many anchors from where, or off.
    /// (Each signed list logs its own line when it is fetched.)
    pub fn kinds_summary(&self) -> Vec<String> {
        let trust = self;
        crate::domain::Kind::all()
            .map(|kind| {
                let sources: Vec<&str> = trust
                    .sources
                    .iter()
                    .filter(|s| s.kind == kind)
                    .map(|s| s.origin.as_str())
                    .collect();
                match trust.anchors.get(kind) {
                    Some(anchors) => format!(
                        "credential kind {kind}: on, {} trust anchor(s) from {}",
                        anchors.len(),
                        sources.join(" and ")
                    ),
                    None if sources.is_empty() => {
                        format!("credential kind {kind}: off (no anchors)")
                    }
                    None => format!(
                        "credential kind {kind}: off ({} holds no anchor for it)",
                        sources.join(" and ")
                    ),
                }
            })
            .collect()
    }

    /// One kind under `anchors`, from `origin` (tests and embedders).
    pub fn single(kind: Kind, anchors: TrustAnchors, origin: &str) -> Self {
        Self::from_sources(vec![AnchorSource {
            kind,
            origin: origin.to_owned(),
            anchors: Arc::new(anchors),
        }])
    }
}

impl TrustFiles {
    pub fn is_empty(&self) -> bool {
        self.pem.is_empty() && self.lists.is_empty()
    }

    /// The PEM files' anchors; the first problem, in one line naming its file, is the
    /// error.
    pub fn load_files(&self) -> Result<Vec<AnchorSource>, String> {
        self.pem
            .iter()
            .map(|(kind, path)| {
                Ok(AnchorSource {
                    kind: *kind,
                    origin: path.display().to_string(),
                    anchors: Arc::new(load_pem(&format!("{kind} trust anchors"), path)?),
                })
            })
            .collect()
    }

    /// The configuration errors that stop a start: an unreadable anchor file or list
    /// signer. (A list that cannot be had or does not verify does not.)
    pub fn check(&self) -> Result<Vec<AnchorSource>, String> {
        for l in &self.lists {
            let shown = l.signer.display();
            let pem = std::fs::read_to_string(&l.signer)
                .map_err(|e| format!("cannot read {} signer '{shown}': {e}", l.list.name))?;
            l.list
                .check_signer(&pem)
                .map_err(|e| format!("{} signer '{shown}': {e}", l.list.name))?;
        }
        self.load_files()
    }
}

/// A PEM bundle of CA certificates; `what` names the file's role in errors.
pub fn load_pem(what: &str, path: &Path) -> Result<TrustAnchors, String> {
    let shown = path.display();
    let pem =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} '{shown}': {e}"))?;
    TrustAnchors::from_pem(&pem).map_err(|e| format!("{what} '{shown}': {e}"))
}

/// The anchors in force, and the files and lists to refresh them from.
#[derive(Debug)]
pub struct TrustHandle {
    pub(super) files: TrustFiles,
    current: RwLock<Arc<Trust>>,
    /// Wakes the refresher at once (SIGHUP).
    pub(super) wake: tokio::sync::Notify,
    /// The lists' failures so far, for `/metrics`.
    pub failures: super::outcome::Failures,
}

impl TrustHandle {
    /// `trust`, loaded from `files`.
    pub fn new(files: TrustFiles, trust: Trust) -> Arc<Self> {
        Arc::new(Self {
            files,
            current: RwLock::new(Arc::new(trust)),
            wake: tokio::sync::Notify::new(),
            failures: Default::default(),
        })
    }

    /// A set no file stands behind (tests, embedders): a refresh keeps it.
    pub fn fixed(trust: Trust) -> Arc<Self> {
        Self::new(TrustFiles::default(), trust)
    }

    /// No anchors: no wallet kind is on.
    pub fn none() -> Arc<Self> {
        Self::fixed(Trust::default())
    }

    pub fn files(&self) -> &TrustFiles {
        &self.files
    }

    pub fn current(&self) -> Arc<Trust> {
        // A poisoned lock still holds a whole set: the swap below cannot panic halfway.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Puts `fresh` in force, whole.
    pub(super) fn swap(&self, fresh: Trust) -> Arc<Trust> {
        let fresh = Arc::new(fresh);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        fresh
    }

    /// Asks the refresher to read every file and list again now (SIGHUP).
    pub fn refresh_soon(&self) {
        self.wake.notify_one();
    }
}
