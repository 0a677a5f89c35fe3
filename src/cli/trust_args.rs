//! The trust flags `serve` takes (docs/wallets.md#credential-kinds), shared with `trust show` and
//! `statement` so that each reads the same files from the same flags and environment.

use std::path::PathBuf;

use crate::domain::Kind;
use crate::trust::lists::{EUDI_PID_LOTE, EU_AV_TRUSTED_LIST, MDL_LOTE, MDL_VICAL};
use crate::trust::{ListFiles, Source, TrustFiles};

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = super::serve::WALLETS)]
pub struct TrustArgs {
    /// PEM file of the X.509 CA certificates trusted to issue EU Age Verification (Proof
    /// of Age) attestations; set, the gateway accepts the eu-av kind.
    #[arg(long, env = "AGEGATE_EU_AV_TRUST_ANCHORS", value_name = "PATH")]
    pub eu_av_trust_anchors: Option<PathBuf>,

    /// PEM file of the CA certificates trusted to issue EUDI PIDs (mdoc); set, the
    /// gateway accepts the eudi-pid kind.
    #[arg(long, env = "AGEGATE_EUDI_PID_TRUST_ANCHORS", value_name = "PATH")]
    pub eudi_pid_trust_anchors: Option<PathBuf>,

    /// PEM file of the IACA root certificates trusted to issue mobile driving licences;
    /// set (or with a VICAL), the gateway accepts the mdl kind.
    #[arg(long, env = "AGEGATE_MDL_TRUST_ANCHORS", value_name = "PATH")]
    pub mdl_trust_anchors: Option<PathBuf>,

    /// PEM file of the IACA root certificates trusted to issue Google Wallet ID passes
    /// (com.google.wallet.idcard.1); set, the gateway accepts the google-id kind.
    #[arg(long, env = "AGEGATE_GOOGLE_ID_TRUST_ANCHORS", value_name = "PATH")]
    pub google_id_trust_anchors: Option<PathBuf>,

    /// PEM file of the IACA root certificates trusted to issue ISO/IEC 23220 Photo IDs
    /// (org.iso.23220.photoid.1, or photoID.1); set, the gateway accepts the photo-id kind.
    #[arg(long, env = "AGEGATE_PHOTO_ID_TRUST_ANCHORS", value_name = "PATH")]
    pub photo_id_trust_anchors: Option<PathBuf>,

    /// A VICAL (ISO/IEC 18013-5 C.1.7, e.g. AAMVA's), a file or an https:// URL, whose
    /// mDL issuers become mdl anchors; its signature must chain to --mdl-vical-anchor.
    #[arg(
        long,
        env = "AGEGATE_MDL_VICAL",
        value_name = "SOURCE",
        value_parser = Source::parse,
        requires = "mdl_vical_anchor"
    )]
    pub mdl_vical: Option<Source>,

    /// PEM file of the certificate(s) the VICAL's signer must chain to; with --mdl-vical.
    #[arg(
        long,
        env = "AGEGATE_MDL_VICAL_ANCHOR",
        value_name = "PATH",
        requires = "mdl_vical"
    )]
    pub mdl_vical_anchor: Option<PathBuf>,

    /// The EU age-verification trusted list (ETSI TS 119 612 XML, a file or an https://
    /// URL) whose
    /// recognised providers become eu-av anchors; its signature must verify under
    /// --eu-av-trusted-list-signer.
    #[arg(
        long,
        env = "AGEGATE_EU_AV_TRUSTED_LIST",
        value_name = "SOURCE",
        value_parser = Source::parse,
        requires = "eu_av_trusted_list_signer"
    )]
    pub eu_av_trusted_list: Option<Source>,

    /// PEM file of the certificate(s) the list's signer must be or chain to (the
    /// Commission's, announced in the list's PointersToOtherTSL); with
    /// --eu-av-trusted-list.
    #[arg(
        long,
        env = "AGEGATE_EU_AV_TRUSTED_LIST_SIGNER",
        value_name = "PEM",
        requires = "eu_av_trusted_list"
    )]
    pub eu_av_trusted_list_signer: Option<PathBuf>,

    /// The EU list of PID providers (ETSI TS 119 602, a compact JWS, a file or an
    /// https:// URL) whose
    /// issuance services' certificates become eudi-pid anchors; its x5c signer must be
    /// or chain to --eudi-pid-lote-signer.
    #[arg(
        long,
        env = "AGEGATE_EUDI_PID_LOTE",
        value_name = "SOURCE",
        value_parser = Source::parse,
        requires = "eudi_pid_lote_signer"
    )]
    pub eudi_pid_lote: Option<Source>,

    /// PEM file of the certificate(s) the PID list's signer must be or chain to.
    #[arg(
        long,
        env = "AGEGATE_EUDI_PID_LOTE_SIGNER",
        value_name = "PEM",
        requires = "eudi_pid_lote"
    )]
    pub eudi_pid_lote_signer: Option<PathBuf>,

    /// The EU list of mDL providers (ETSI TS 119 602, a compact JWS, a file or an
    /// https:// URL) whose
    /// issuance services' certificates become mdl anchors; its x5c signer must be or
    /// chain to --mdl-lote-signer.
    #[arg(
        long,
        env = "AGEGATE_MDL_LOTE",
        value_name = "SOURCE",
        value_parser = Source::parse,
        requires = "mdl_lote_signer"
    )]
    pub mdl_lote: Option<Source>,

    /// PEM file of the certificate(s) the mDL list's signer must be or chain to.
    #[arg(
        long,
        env = "AGEGATE_MDL_LOTE_SIGNER",
        value_name = "PEM",
        requires = "mdl_lote"
    )]
    pub mdl_lote_signer: Option<PathBuf>,
}

impl TrustArgs {
    /// The files, by kind in the table's order.
    pub fn files(&self) -> TrustFiles {
        let pem = [
            (Kind::EU_AV, &self.eu_av_trust_anchors),
            (Kind::EUDI_PID, &self.eudi_pid_trust_anchors),
            (Kind::MDL, &self.mdl_trust_anchors),
            (Kind::GOOGLE_ID, &self.google_id_trust_anchors),
            (Kind::PHOTO_ID, &self.photo_id_trust_anchors),
        ]
        .into_iter()
        .filter_map(|(kind, path)| Some((kind, path.clone()?)))
        .collect();
        let lists = [
            (&MDL_VICAL, &self.mdl_vical, &self.mdl_vical_anchor),
            (
                &EU_AV_TRUSTED_LIST,
                &self.eu_av_trusted_list,
                &self.eu_av_trusted_list_signer,
            ),
            (
                &EUDI_PID_LOTE,
                &self.eudi_pid_lote,
                &self.eudi_pid_lote_signer,
            ),
            (&MDL_LOTE, &self.mdl_lote, &self.mdl_lote_signer),
        ]
        .into_iter()
        .filter_map(|(list, source, signer)| {
            Some(ListFiles {
                list,
                source: source.clone()?,
                signer: signer.clone()?,
            })
        })
        .collect();
        TrustFiles { pem, lists }
    }
}
