//! The kinds of credential the gateway accepts (docs/kinds.md#credential-kinds): one table that the
//! request builders (link, QR code, the Digital Credentials API's R1 and R2), the
//! verifier, the webhooks' `data.method`, receipts and metrics all read. Adding a kind
//! is one entry in [`KINDS`]; nothing else branches on a kind.

use std::fmt;

/// What the gateway knows of one kind of ISO/IEC 18013-5 mdoc with `age_over_NN`.
#[derive(Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// Its name in flags, the site JSON, metrics and `data.method`.
    pub name: &'static str,
    /// The docTypes it is issued under, each with its DCQL credential id; a request asks
    /// for every one and an answer may be any one (docs/kinds.md#credential-kinds).
    pub doc_types: &'static [DocType],
    /// The namespace its `age_over_NN` elements are in.
    pub namespace: &'static str,
    /// For people: what a visitor holds.
    pub title: &'static str,
}

/// One docType of a kind and the ids of its DCQL credential queries (the key of the
/// answer's `vp_token`): the plain `mso_mdoc` one and the zero-knowledge `mso_mdoc_zk`
/// one (docs/zk.md#zero-knowledge-proofs); ids are unique across the table.
#[derive(Debug, PartialEq, Eq)]
pub struct DocType {
    pub doc_type: &'static str,
    pub dcql_id: &'static str,
    pub zk_dcql_id: &'static str,
}

/// The kinds table (docs/kinds.md#credential-kinds), in its order (the order requests
/// list the kinds in).
pub const KINDS: [KindInfo; 5] = [
    KindInfo {
        name: "eu-av",
        doc_types: &[DocType {
            doc_type: "eu.europa.ec.av.1",
            dcql_id: "proof_of_age",
            zk_dcql_id: "proof_of_age_zk",
        }],
        namespace: "eu.europa.ec.av.1",
        title: "EU Age Verification app",
    },
    KindInfo {
        name: "eudi-pid",
        doc_types: &[DocType {
            doc_type: "eu.europa.ec.eudi.pid.1",
            dcql_id: "pid",
            zk_dcql_id: "pid_zk",
        }],
        namespace: "eu.europa.ec.eudi.pid.1",
        title: "EU Digital Identity Wallet (PID)",
    },
    KindInfo {
        name: "mdl",
        doc_types: &[DocType {
            doc_type: "org.iso.18013.5.1.mDL",
            dcql_id: "mdl",
            zk_dcql_id: "mdl_zk",
        }],
        namespace: "org.iso.18013.5.1",
        title: "Mobile driving licence (mDL)",
    },
    // Google Wallet's ID pass, made from a passport; its elements are in the mDL's
    // namespace.
    KindInfo {
        name: "google-id",
        doc_types: &[DocType {
            doc_type: "com.google.wallet.idcard.1",
            dcql_id: "google_id",
            zk_dcql_id: "google_id_zk",
        }],
        namespace: "org.iso.18013.5.1",
        title: "Google Wallet ID pass",
    },
    // The ISO/IEC 23220 Photo ID (Apple's Digital ID, Google's ID pass as it moves);
    // an earlier draft spelled the docType `photoID`, and credentials of both exist.
    KindInfo {
        name: "photo-id",
        doc_types: &[
            DocType {
                doc_type: "org.iso.23220.photoid.1",
                dcql_id: "photo_id",
                zk_dcql_id: "photo_id_zk",
            },
            DocType {
                doc_type: "org.iso.23220.photoID.1",
                dcql_id: "photo_id_2",
                zk_dcql_id: "photo_id_2_zk",
            },
        ],
        namespace: "org.iso.23220.1",
        title: "Photo ID (ISO/IEC 23220)",
    },
];

/// One entry of [`KINDS`]; only ever made from a valid index.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind(u8);

impl Kind {
    pub const EU_AV: Kind = Kind(0);
    pub const EUDI_PID: Kind = Kind(1);
    pub const MDL: Kind = Kind(2);
    pub const GOOGLE_ID: Kind = Kind(3);
    pub const PHOTO_ID: Kind = Kind(4);

    /// Every kind, in the table's order.
    pub fn all() -> impl Iterator<Item = Kind> {
        (0..KINDS.len() as u8).map(Kind)
    }

    /// Its row in [`KINDS`], for tables indexed by kind.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    pub fn info(self) -> &'static KindInfo {
        // Indices are only made in this module, below KINDS.len().
        &KINDS[usize::from(self.0)]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    fn find(pred: impl Fn(&KindInfo) -> bool) -> Option<Kind> {
        Kind::all().find(|k| pred(k.info()))
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::find(|k| k.name == name)
    }

    /// The kind issued under `doc_type` (any of its docTypes), and that docType's row.
    pub fn by_doc_type(doc_type: &str) -> Option<(Kind, &'static DocType)> {
        Kind::all().find_map(|k| {
            let found = k.info().doc_types.iter().find(|d| d.doc_type == doc_type)?;
            Some((k, found))
        })
    }

    /// The kind one of whose DCQL credential ids is `id`.
    pub fn by_dcql_id(id: &str) -> Option<Kind> {
        Kind::find(|k| k.doc_types.iter().any(|d| d.dcql_id == id))
    }

    /// The kind one of whose zero-knowledge DCQL credential ids is `id`, and that
    /// docType's row.
    pub fn by_zk_dcql_id(id: &str) -> Option<(Kind, &'static DocType)> {
        Kind::all().find_map(|k| {
            let found = k.info().doc_types.iter().find(|d| d.zk_dcql_id == id)?;
            Some((k, found))
        })
    }

    /// The DCQL credential id of its first docType: the kind's own id.
    pub fn dcql_id(self) -> &'static str {
        self.info().doc_types[0].dcql_id
    }
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of kinds, iterated in the table's order.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct KindSet(u32);

impl KindSet {
    pub const EMPTY: KindSet = KindSet(0);

    pub fn all() -> KindSet {
        Kind::all().collect()
    }

    pub fn one(kind: Kind) -> KindSet {
        KindSet(1 << kind.0)
    }

    pub fn contains(self, kind: Kind) -> bool {
        self.0 & (1 << kind.0) != 0
    }

    pub fn insert(&mut self, kind: Kind) {
        self.0 |= 1 << kind.0;
    }

    pub fn and(self, other: KindSet) -> KindSet {
        KindSet(self.0 & other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn iter(self) -> impl Iterator<Item = Kind> {
        Kind::all().filter(move |k| self.contains(*k))
    }

    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Kind::name).collect()
    }
}

impl FromIterator<Kind> for KindSet {
    fn from_iter<I: IntoIterator<Item = Kind>>(iter: I) -> Self {
        let mut set = KindSet::EMPTY;
        for kind in iter {
            set.insert(kind);
        }
        set
    }
}

impl fmt::Debug for KindSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// The kinds a site accepts (`site create|update --accept`). `All` stays all: a kind
/// added in a later release is accepted by a site that said `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accept {
    #[default]
    All,
    Only(KindSet),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    #[error("unknown credential kind '{0}' (kinds: {names}; or all)", names = KindSet::all().names().join(", "))]
    UnknownKind(String),
    #[error("the list of accepted kinds is empty (name at least one kind, or all)")]
    Empty,
}

impl Accept {
    /// `all`, or a comma-separated list of kind names (spaces around names ignored).
    pub fn parse(s: &str) -> Result<Accept, AcceptError> {
        if s.trim() == "all" {
            return Ok(Accept::All);
        }
        let mut set = KindSet::EMPTY;
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            set.insert(Kind::parse(name).ok_or_else(|| AcceptError::UnknownKind(name.into()))?);
        }
        if set.is_empty() {
            return Err(AcceptError::Empty);
        }
        Ok(Accept::Only(set))
    }

    pub fn kinds(self) -> KindSet {
        match self {
            Accept::All => KindSet::all(),
            Accept::Only(set) => set,
        }
    }

    /// How it is stored: `all`, or the names in the table's order, comma-separated.
    pub fn to_stored(self) -> String {
        match self {
            Accept::All => "all".into(),
            Accept::Only(set) => set.names().join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_every_kind_with_its_doc_types_namespace_and_ids() {
        let rows: Vec<_> = Kind::all()
            .map(|k| {
                let i = k.info();
                let doc_types: Vec<_> = i
                    .doc_types
                    .iter()
                    .map(|d| (d.doc_type, d.dcql_id))
                    .collect();
                (i.name, doc_types, i.namespace)
            })
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "eu-av",
                    vec![("eu.europa.ec.av.1", "proof_of_age")],
                    "eu.europa.ec.av.1"
                ),
                (
                    "eudi-pid",
                    vec![("eu.europa.ec.eudi.pid.1", "pid")],
                    "eu.europa.ec.eudi.pid.1"
                ),
                (
                    "mdl",
                    vec![("org.iso.18013.5.1.mDL", "mdl")],
                    "org.iso.18013.5.1"
                ),
                (
                    "google-id",
                    vec![("com.google.wallet.idcard.1", "google_id")],
                    "org.iso.18013.5.1"
                ),
                (
                    "photo-id",
                    vec![
                        ("org.iso.23220.photoid.1", "photo_id"),
                        ("org.iso.23220.photoID.1", "photo_id_2")
                    ],
                    "org.iso.23220.1"
                ),
            ]
        );
        for k in Kind::all() {
            assert_eq!(Kind::parse(k.name()), Some(k));
            for d in k.info().doc_types {
                assert_eq!(Kind::by_doc_type(d.doc_type), Some((k, d)));
                assert_eq!(Kind::by_dcql_id(d.dcql_id), Some(k));
                assert_eq!(Kind::by_zk_dcql_id(d.zk_dcql_id), Some((k, d)));
                assert_eq!(d.zk_dcql_id, format!("{}_zk", d.dcql_id));
                assert_eq!(Kind::by_dcql_id(d.zk_dcql_id), None);
                assert_eq!(Kind::by_zk_dcql_id(d.dcql_id), None);
            }
        }
        assert_eq!(Kind::PHOTO_ID.dcql_id(), "photo_id");
        assert_eq!(Kind::GOOGLE_ID.name(), "google-id");
        assert_eq!(Kind::parse("EU-AV"), None);
        assert_eq!(Kind::by_doc_type("org.iso.23220.PHOTOID.1"), None);
        let ids: std::collections::BTreeSet<_> = KINDS
            .iter()
            .flat_map(|k| k.doc_types.iter().flat_map(|d| [d.dcql_id, d.zk_dcql_id]))
            .collect();
        assert_eq!(ids.len(), 12, "DCQL ids, plain and ZK, are unique");
    }

    #[test]
    fn accept_lists_parse_and_are_stored_in_table_order() {
        assert_eq!(Accept::parse("all"), Ok(Accept::All));
        assert_eq!(Accept::All.kinds(), KindSet::all());
        let only = Accept::parse("mdl, eu-av").unwrap();
        assert_eq!(only.kinds().names(), ["eu-av", "mdl"]);
        assert_eq!(only.to_stored(), "eu-av,mdl");
        assert_eq!(Accept::parse(&only.to_stored()), Ok(only));
        assert_eq!(Accept::parse("mdl,mdl").unwrap().kinds().len(), 1);
        assert_eq!(Accept::parse(""), Err(AcceptError::Empty));
        assert_eq!(Accept::parse(" , "), Err(AcceptError::Empty));
        assert_eq!(
            Accept::parse("mdl,passport"),
            Err(AcceptError::UnknownKind("passport".into()))
        );
        assert_eq!(
            AcceptError::UnknownKind("passport".into()).to_string(),
            "unknown credential kind 'passport' (kinds: eu-av, eudi-pid, mdl, google-id, photo-id; or all)"
        );
        assert_eq!(
            Accept::parse("photo-id,google-id").unwrap().to_stored(),
            "google-id,photo-id"
        );
        assert!(Accept::parse("all,mdl").is_err());
    }

    #[test]
    fn kind_sets_intersect() {
        let a: KindSet = [Kind::EU_AV, Kind::MDL].into_iter().collect();
        let b: KindSet = [Kind::MDL, Kind::EUDI_PID].into_iter().collect();
        assert_eq!(a.and(b), KindSet::one(Kind::MDL));
        assert!(a.and(KindSet::EMPTY).is_empty());
    }
}
