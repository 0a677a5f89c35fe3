//! Trust anchors per credential kind (docs/kinds.md#credential-kinds): an attestation is accepted only
//! under the anchors of its own kind, so a driving licence signed under a PID anchor is
//! refused even though both are mdocs with `age_over_NN`.

use std::sync::Arc;

use super::TrustAnchors;
use crate::kind::KINDS;
use crate::kind::{Kind, KindSet};

/// For each kind, its anchors, if it has any (a kind without anchors is off).
#[derive(Clone, Default)]
pub struct KindAnchors {
    by_kind: [Option<Arc<TrustAnchors>>; KINDS.len()],
}

impl KindAnchors {
    /// No kind on.
    pub fn none() -> Self {
        Self::default()
    }

    /// Only `kind`, under `anchors`.
    pub fn single(kind: Kind, anchors: TrustAnchors) -> Self {
        Self::none().with(kind, Arc::new(anchors))
    }

    /// The same, with `kind` under `anchors` (an empty set turns it off).
    pub fn with(mut self, kind: Kind, anchors: Arc<TrustAnchors>) -> Self {
        self.by_kind[kind.index()] = (!anchors.is_empty()).then_some(anchors);
        self
    }

    /// The anchors of `kind`; `None` when it is off.
    pub fn get(&self, kind: Kind) -> Option<&TrustAnchors> {
        self.by_kind[kind.index()].as_deref()
    }

    /// The anchors of `kind`, shared; `None` when it is off.
    pub fn shared(&self, kind: Kind) -> Option<Arc<TrustAnchors>> {
        self.by_kind[kind.index()].clone()
    }

    /// The kinds that have anchors.
    pub fn on(&self) -> KindSet {
        Kind::all().filter(|k| self.get(*k).is_some()).collect()
    }

    /// Only the kinds of `kinds` (what a request asked for).
    pub fn restricted_to(&self, kinds: KindSet) -> Self {
        let mut out = Self::none();
        for kind in kinds.iter() {
            out.by_kind[kind.index()] = self.by_kind[kind.index()].clone();
        }
        out
    }

    /// Only `kind`.
    pub fn only(&self, kind: Kind) -> Self {
        self.restricted_to(KindSet::one(kind))
    }
}

/// Brief: which kinds are on and with how many anchors.
impl std::fmt::Debug for KindAnchors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(Kind::all().filter_map(|k| self.get(k).map(|a| (k.name(), a.len()))))
            .finish()
    }
}
