//! The trust flags `serve` takes (docs/kinds.md#credential-kinds), shared with `trust show` and
//! `statement` so that each reads the same files from the same flags and environment. The
//! flags are rows of two tables — a PEM file of anchors per kind, a signed list and its
//! pinned signer — so a kind or a list is added by a row, not by another copy of a field.

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Command};

use crate::domain::Kind;
use crate::trust::lists::{ListType, EUDI_PID_LOTE, EU_AV_TRUSTED_LIST, MDL_LOTE, MDL_VICAL};
use crate::trust::{ListFiles, Source, TrustFiles};

/// A kind's PEM file of anchors: its flag (also its id), environment variable and help.
struct AnchorFlag(Kind, &'static str, &'static str, &'static str);

const ANCHOR_FLAGS: [AnchorFlag; 5] = [
    AnchorFlag(
        Kind::EU_AV,
        "eu-av-trust-anchors",
        "AGEGATE_EU_AV_TRUST_ANCHORS",
        "PEM file of the X.509 CA certificates trusted to issue EU Age Verification (Proof \
         of Age) attestations; set, the gateway accepts the eu-av kind",
    ),
    AnchorFlag(
        Kind::EUDI_PID,
        "eudi-pid-trust-anchors",
        "AGEGATE_EUDI_PID_TRUST_ANCHORS",
        "PEM file of the CA certificates trusted to issue EUDI PIDs (mdoc); set, the \
         gateway accepts the eudi-pid kind",
    ),
    AnchorFlag(
        Kind::MDL,
        "mdl-trust-anchors",
        "AGEGATE_MDL_TRUST_ANCHORS",
        "PEM file of the IACA root certificates trusted to issue mobile driving licences; \
         set (or with a VICAL), the gateway accepts the mdl kind",
    ),
    AnchorFlag(
        Kind::GOOGLE_ID,
        "google-id-trust-anchors",
        "AGEGATE_GOOGLE_ID_TRUST_ANCHORS",
        "PEM file of the IACA root certificates trusted to issue Google Wallet ID passes \
         (com.google.wallet.idcard.1); set, the gateway accepts the google-id kind",
    ),
    AnchorFlag(
        Kind::PHOTO_ID,
        "photo-id-trust-anchors",
        "AGEGATE_PHOTO_ID_TRUST_ANCHORS",
        "PEM file of the IACA root certificates trusted to issue ISO/IEC 23220 Photo IDs \
         (org.iso.23220.photoid.1, or photoID.1); set, the gateway accepts the photo-id kind",
    ),
];

/// A signed list's flag (its [`ListType::name`]) and its pinned signer's, each with its
/// environment variable and help; the two are given together or not at all.
struct ListFlag {
    list: &'static ListType,
    env: &'static str,
    help: &'static str,
    signer: &'static str,
    signer_env: &'static str,
    /// `PEM`, or `PATH` for the VICAL's anchor (as it always was).
    signer_value: &'static str,
    signer_help: &'static str,
}

const LIST_FLAGS: [ListFlag; 4] = [
    ListFlag {
        list: &MDL_VICAL,
        env: "AGEGATE_MDL_VICAL",
        help: "A VICAL (ISO/IEC 18013-5 C.1.7, e.g. AAMVA's), a file or an https:// URL, \
               whose mDL issuers become mdl anchors; its signature must chain to \
               --mdl-vical-anchor",
        signer: "mdl-vical-anchor",
        signer_env: "AGEGATE_MDL_VICAL_ANCHOR",
        signer_value: "PATH",
        signer_help: "PEM file of the certificate(s) the VICAL's signer must chain to; with \
                      --mdl-vical",
    },
    ListFlag {
        list: &EU_AV_TRUSTED_LIST,
        env: "AGEGATE_EU_AV_TRUSTED_LIST",
        help: "The EU age-verification trusted list (ETSI TS 119 612 XML, a file or an \
               https:// URL) whose recognised providers become eu-av anchors; its signature \
               must verify under --eu-av-trusted-list-signer",
        signer: "eu-av-trusted-list-signer",
        signer_env: "AGEGATE_EU_AV_TRUSTED_LIST_SIGNER",
        signer_value: "PEM",
        signer_help: "PEM file of the certificate(s) the list's signer must be or chain to \
                      (the Commission's, announced in the list's PointersToOtherTSL); with \
                      --eu-av-trusted-list",
    },
    ListFlag {
        list: &EUDI_PID_LOTE,
        env: "AGEGATE_EUDI_PID_LOTE",
        help: "The EU list of PID providers (ETSI TS 119 602, a compact JWS, a file or an \
               https:// URL) whose issuance services' certificates become eudi-pid anchors; \
               its x5c signer must be or chain to --eudi-pid-lote-signer",
        signer: "eudi-pid-lote-signer",
        signer_env: "AGEGATE_EUDI_PID_LOTE_SIGNER",
        signer_value: "PEM",
        signer_help: "PEM file of the certificate(s) the PID list's signer must be or chain to",
    },
    ListFlag {
        list: &MDL_LOTE,
        env: "AGEGATE_MDL_LOTE",
        help: "The EU list of mDL providers (ETSI TS 119 602, a compact JWS, a file or an \
               https:// URL) whose issuance services' certificates become mdl anchors; its \
               x5c signer must be or chain to --mdl-lote-signer",
        signer: "mdl-lote-signer",
        signer_env: "AGEGATE_MDL_LOTE_SIGNER",
        signer_value: "PEM",
        signer_help: "PEM file of the certificate(s) the mDL list's signer must be or chain to",
    },
];

/// The files and lists the flags name, by kind in the tables' order.
#[derive(Debug, Clone, Default)]
pub struct TrustArgs {
    files: TrustFiles,
}

impl TrustArgs {
    pub fn files(&self) -> TrustFiles {
        self.files.clone()
    }
}

fn path_arg(id: &'static str, env: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(id)
        .long(id)
        .env(env)
        .value_name(value)
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

impl clap::Args for TrustArgs {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.next_help_heading(super::headings::WALLETS);
        let pem = ANCHOR_FLAGS
            .iter()
            .map(|&AnchorFlag(_, flag, env, help)| path_arg(flag, env, "PATH", help));
        let lists = LIST_FLAGS.iter().flat_map(|f| {
            let list = Arg::new(f.list.name)
                .long(f.list.name)
                .env(f.env)
                .value_name("SOURCE")
                .value_parser(Source::parse)
                .requires(f.signer)
                .help(f.help);
            let signer = path_arg(f.signer, f.signer_env, f.signer_value, f.signer_help)
                .requires(f.list.name);
            [list, signer]
        });
        cmd.args(pem).args(lists)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for TrustArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let path = |id: &str| m.get_one::<PathBuf>(id).cloned();
        let pem = ANCHOR_FLAGS
            .iter()
            .filter_map(|&AnchorFlag(kind, flag, ..)| Some((kind, path(flag)?)))
            .collect();
        let lists = LIST_FLAGS
            .iter()
            .filter_map(|f| {
                Some(ListFiles {
                    list: f.list,
                    source: m.get_one::<Source>(f.list.name).cloned()?,
                    signer: path(f.signer)?,
                })
            })
            .collect();
        Ok(Self {
            files: TrustFiles { pem, lists },
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}
