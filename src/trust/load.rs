//! Loading the anchors from `serve`'s trust flags, and holding them so that SIGHUP can
//! swap in a fresh set while requests are answered: every reader takes the current set
//! through [`TrustHandle::current`], so a reload reaches every page, answer and listing
//! at once, and a bad file leaves the old set in place.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::AnchorSource;
use crate::clock::UnixTime;
use crate::domain::Kind;
use crate::mdoc::{KindAnchors, TrustAnchors};

/// The files the anchors come from (`serve`'s trust flags).
#[derive(Debug, Clone, Default)]
pub struct TrustFiles {
    /// PEM bundles of CA certificates, each for one kind (`--eu-av-trust-anchors`,
    /// `--eudi-pid-trust-anchors`, `--mdl-trust-anchors`).
    pub pem: Vec<(Kind, PathBuf)>,
    /// `--mdl-vical` and its `--mdl-vical-anchor`.
    pub mdl_vical: Option<VicalFiles>,
    /// Signed lists: `--eu-av-trusted-list`, `--eudi-pid-lote`, `--mdl-lote`, each with
    /// its signer.
    pub lists: Vec<ListFiles>,
}

/// A signed trusted list and the PEM file of the certificates its signer must be, or
/// chain to.
#[derive(Debug, Clone)]
pub struct ListFiles {
    /// The kind its anchors are for, which also says how it is read.
    pub kind: Kind,
    pub list: PathBuf,
    pub signer: PathBuf,
}

/// A trusted list in force, for people (`trust show`) and for the next load (its
/// sequence number may not go backwards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListStatus {
    pub kind: Kind,
    /// Where it was read from.
    pub location: String,
    pub sequence: u64,
    /// `ListIssueDateTime` and `NextUpdate`, Unix seconds.
    pub issued: i64,
    pub next_update: i64,
    /// When agegate read and verified it.
    pub loaded: UnixTime,
    /// How many anchors it gave.
    pub anchors: usize,
    /// Recognised providers' certificates left out: their key is neither P-256 nor P-384.
    pub skipped_unsupported_key: usize,
}

/// A VICAL and the PEM anchor its signer must chain to.
#[derive(Debug, Clone)]
pub struct VicalFiles {
    pub vical: PathBuf,
    pub anchor: PathBuf,
}

/// The anchors in force: per kind for the verifier, per source for people.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pub anchors: KindAnchors,
    pub sources: Vec<AnchorSource>,
    /// The signed lists among the sources.
    pub lists: Vec<ListStatus>,
}

impl Trust {
    /// The kinds of `sources` under their anchors (a kind's sources are merged).
    pub fn from_sources(sources: Vec<AnchorSource>) -> Self {
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
            lists: Vec::new(),
        }
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
        self.pem.is_empty() && self.mdl_vical.is_none() && self.lists.is_empty()
    }

    /// Every file, read and checked at `now`; the first problem, in one line naming its
    /// file, is the error.
    pub fn load(&self, now: UnixTime) -> Result<Trust, String> {
        self.load_after(now, &Trust::default())
    }

    /// As [`Self::load`], refusing a list older (by sequence number) than the one of
    /// `previous` read from the same place.
    pub fn load_after(&self, now: UnixTime, previous: &Trust) -> Result<Trust, String> {
        let mut sources = Vec::new();
        let mut lists = Vec::new();
        for (kind, path) in &self.pem {
            sources.push(AnchorSource {
                kind: *kind,
                origin: path.display().to_string(),
                anchors: Arc::new(load_pem(&format!("{kind} trust anchors"), path)?),
            });
        }
        if let Some(files) = &self.mdl_vical {
            sources.push(files.load(now)?);
        }
        for files in &self.lists {
            let (source, status) = files.load(now, previous)?;
            sources.push(source);
            lists.push(status);
        }
        let mut trust = Trust::from_sources(sources);
        trust.lists = lists;
        Ok(trust)
    }
}

/// What a signed list is read as, by the kind it gives anchors to: the EU AV trusted
/// list (TS 119 612 XML), the PID and mDL lists of trusted entities (TS 119 602 JWS).
fn read_list(
    kind: Kind,
    bytes: &[u8],
    signers: &[crate::trustlist::SignerCert],
    now: UnixTime,
    in_force: Option<u64>,
) -> Result<(&'static str, crate::trustlist::EntityList), String> {
    use crate::trustlist::{lote, LoteKind};
    let err = |e: crate::trustlist::ListError| e.to_string();
    if kind == Kind::EU_AV {
        let l = crate::trustlist::eu_av_list(bytes, signers, now, in_force).map_err(err)?;
        let as_entities = crate::trustlist::EntityList {
            lote_type: l.tsl_type,
            sequence: l.sequence,
            issued: l.issued,
            next_update: l.next_update,
            anchors: l.anchors,
            skipped_unsupported_key: l.skipped_unsupported_key,
            signer: l.signer,
        };
        return Ok(("EU AV trusted list", as_entities));
    }
    let (what, lote_kind) = match kind {
        Kind::EUDI_PID => ("EUDI PID providers list", LoteKind::EudiPid),
        Kind::MDL => ("mDL providers list", LoteKind::Mdl),
        other => return Err(format!("no signed list gives {other} anchors")),
    };
    let list =
        lote(bytes, lote_kind, signers, now, in_force).map_err(|e| format!("{what}: {e}"))?;
    Ok((what, list))
}

impl ListFiles {
    /// The list: its signature, type, freshness and sequence checked (src/trustlist), its
    /// recognised providers as anchors of its kind.
    fn load(&self, now: UnixTime, previous: &Trust) -> Result<(AnchorSource, ListStatus), String> {
        let signer_shown = self.signer.display();
        let kind = self.kind;
        let pem = std::fs::read_to_string(&self.signer)
            .map_err(|e| format!("cannot read {kind} list signer '{signer_shown}': {e}"))?;
        let signers = crate::trustlist::signers_from_pem(&pem)
            .map_err(|e| format!("{kind} list signer '{signer_shown}': {e}"))?;
        let location = self.list.display().to_string();
        let bytes = std::fs::read(&self.list)
            .map_err(|e| format!("cannot read {kind} list '{location}': {e}"))?;
        let in_force = previous
            .lists
            .iter()
            .find(|l| l.kind == kind && l.location == location)
            .map(|l| l.sequence);
        let (_, list) = read_list(kind, &bytes, &signers, now, in_force)
            .map_err(|e| format!("{kind} list '{location}' refused: {e}"))?;
        let anchors = TrustAnchors::from_ders(list.anchors.iter().map(Vec::as_slice))
            .unwrap_or_else(|_| TrustAnchors::merged([]));
        let status = ListStatus {
            kind,
            location: location.clone(),
            sequence: list.sequence,
            issued: list.issued,
            next_update: list.next_update,
            loaded: now,
            anchors: anchors.len(),
            skipped_unsupported_key: list.skipped_unsupported_key,
        };
        let origin = if kind == Kind::EU_AV {
            format!("eu-av-trusted-list:{location}")
        } else {
            format!("lote:{location}")
        };
        let source = AnchorSource {
            kind,
            origin,
            anchors: Arc::new(anchors),
        };
        Ok((source, status))
    }
}

impl VicalFiles {
    fn load(&self, now: UnixTime) -> Result<AnchorSource, String> {
        let anchor = load_pem("mDL VICAL anchor", &self.anchor)?;
        let shown = self.vical.display();
        let bytes =
            std::fs::read(&self.vical).map_err(|e| format!("cannot read VICAL '{shown}': {e}"))?;
        let vical = crate::mdoc::vical::mdl_anchors(&bytes, &anchor, now)
            .map_err(|e| format!("VICAL '{shown}': {e}"))?;
        if vical.next_update.is_some_and(|next| next < now) {
            tracing::warn!(
                "VICAL '{shown}' was due to be replaced on {}: fetch the current one",
                crate::clock::rfc3339(vical.next_update.unwrap_or(now))
            );
        }
        // No mDL entry: a valid list that leaves the kind off (unless a PEM file has it).
        let anchors = match vical.trust_anchors() {
            Ok(anchors) => anchors,
            Err(crate::mdoc::AnchorError::Empty) => TrustAnchors::merged([]),
            Err(e) => return Err(format!("VICAL '{shown}': {e}")),
        };
        Ok(AnchorSource {
            kind: Kind::MDL,
            origin: format!("vical:{shown}"),
            anchors: Arc::new(anchors),
        })
    }
}

/// A PEM bundle of CA certificates; `what` names the file's role in errors.
pub fn load_pem(what: &str, path: &Path) -> Result<TrustAnchors, String> {
    let shown = path.display();
    let pem =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} '{shown}': {e}"))?;
    TrustAnchors::from_pem(&pem).map_err(|e| format!("{what} '{shown}': {e}"))
}

/// The anchors in force, and the files to reload them from.
#[derive(Debug)]
pub struct TrustHandle {
    files: TrustFiles,
    current: RwLock<Arc<Trust>>,
}

impl TrustHandle {
    /// `trust`, loaded from `files`.
    pub fn new(files: TrustFiles, trust: Trust) -> Arc<Self> {
        Arc::new(Self {
            files,
            current: RwLock::new(Arc::new(trust)),
        })
    }

    /// A set no file stands behind (tests, embedders): a reload keeps it.
    pub fn fixed(trust: Trust) -> Arc<Self> {
        Self::new(TrustFiles::default(), trust)
    }

    /// No anchors: no wallet kind is on.
    pub fn none() -> Arc<Self> {
        Self::fixed(Trust::default())
    }

    pub fn current(&self) -> Arc<Trust> {
        // A poisoned lock still holds a whole set: the swap below cannot panic halfway.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reads every file again; on success the new set replaces the old one whole, on
    /// failure the old one stays and the error says why.
    pub fn reload(&self, now: UnixTime) -> Result<Arc<Trust>, String> {
        if self.files.is_empty() {
            return Ok(self.current());
        }
        let fresh = Arc::new(self.files.load_after(now, &self.current())?);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        Ok(fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mdoc::testkit::{Pki, NOW};
    use crate::testkit::{Vical, VicalEntry as Entry, VicalPki};

    fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn each_file_gives_its_kind_and_a_vical_adds_to_mdl() {
        let dir = tempfile::tempdir().unwrap();
        let (av, pid, iaca, listed) = (Pki::fixed(), Pki::fixed(), Pki::fixed(), Pki::fixed());
        let vical_pki = VicalPki::new();
        let files = TrustFiles {
            pem: vec![
                (Kind::EU_AV, write(dir.path(), "av.pem", &av.ca_pem)),
                (Kind::EUDI_PID, write(dir.path(), "pid.pem", &pid.ca_pem)),
                (Kind::MDL, write(dir.path(), "mdl.pem", &iaca.ca_pem)),
            ],
            mdl_vical: Some(VicalFiles {
                vical: write(
                    dir.path(),
                    "vical.cbor",
                    Vical::new(vec![Entry::mdl(&listed.ca_der)]).bytes(&vical_pki),
                ),
                anchor: write(dir.path(), "vical-anchor.pem", &vical_pki.anchor_pem),
            }),
            lists: Vec::new(),
        };
        let trust = files.load(NOW).expect("loads");
        let three: crate::domain::KindSet = [Kind::EU_AV, Kind::EUDI_PID, Kind::MDL]
            .into_iter()
            .collect();
        assert_eq!(trust.anchors.on(), three);
        assert_eq!(trust.anchors.get(Kind::MDL).map(TrustAnchors::len), Some(2));
        assert_eq!(
            trust.anchors.get(Kind::EUDI_PID).map(TrustAnchors::len),
            Some(1)
        );
        let origins: Vec<String> = trust.sources.iter().map(|s| s.origin.clone()).collect();
        assert!(origins[3].starts_with("vical:") && origins[3].ends_with("vical.cbor"));
    }

    #[test]
    fn a_vical_without_an_mdl_entry_leaves_mdl_off() {
        let dir = tempfile::tempdir().unwrap();
        let vical_pki = VicalPki::new();
        let other = Pki::fixed();
        let vical = Vical::new(vec![Entry::with(
            &other.ca_der,
            Some(&["eu.europa.ec.eudi.pid.1"]),
        )]);
        let files = TrustFiles {
            pem: vec![],
            mdl_vical: Some(VicalFiles {
                vical: write(dir.path(), "v.cbor", vical.bytes(&vical_pki)),
                anchor: write(dir.path(), "a.pem", &vical_pki.anchor_pem),
            }),
            lists: Vec::new(),
        };
        let trust = files.load(NOW).expect("a valid list");
        assert!(trust.anchors.on().is_empty());
    }

    #[test]
    fn a_reload_swaps_the_whole_set_and_a_bad_file_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Pki::fixed(), Pki::fixed());
        let path = write(dir.path(), "mdl.pem", &a.ca_pem);
        let files = TrustFiles {
            pem: vec![(Kind::MDL, path.clone())],
            mdl_vical: None,
            lists: Vec::new(),
        };
        let handle = TrustHandle::new(files.clone(), files.load(NOW).unwrap());
        let fingerprint = |h: &TrustHandle| {
            let listed = super::super::list(&h.current().sources, NOW);
            listed.iter().map(|l| l.sha256.clone()).collect::<Vec<_>>()
        };
        let before = fingerprint(&handle);
        std::fs::write(&path, &b.ca_pem).unwrap();
        handle.reload(NOW).expect("reloads");
        let after = fingerprint(&handle);
        assert_ne!(before, after);
        std::fs::write(&path, "not a certificate").unwrap();
        let err = handle.reload(NOW).expect_err("a bad file");
        assert!(err.contains("mdl.pem"), "{err}");
        assert_eq!(fingerprint(&handle), after, "the old set stays");
    }
}
