//! `serve`'s flags for signed wallet requests (docs/wallets.md#signed-requests-by-reference):
//! the signing identity under its two names (`--request-signing-*`, and the older
//! `--dc-api-signing-*`, which keep working), `--verifier-info`, the by-reference link's
//! scheme and which links the page shows.

use std::path::PathBuf;

use super::headings::WALLETS;
use crate::domain::presentation::{parse_wallet_scheme, WalletLinks, DEFAULT_SIGNED_WALLET_SCHEME};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("signing_key")
    .args(["request_signing_key", "dc_api_signing_key"]).multiple(true)))]
#[command(group(clap::ArgGroup::new("signing_cert")
    .args(["request_signing_cert", "dc_api_signing_cert"]).multiple(true)))]
pub struct SigningArgs {
    /// PEM file of the P-256 private key (PKCS#8 or SEC1) that signs wallet requests: the
    /// Digital Credentials API's and the signed request objects by reference (EUDI
    /// wallets, Multipaz, Google Wallet and Apple Wallet answer only signed requests); with
    /// --request-signing-cert.
    #[arg(
        long,
        env = "AGEGATE_REQUEST_SIGNING_KEY",
        value_name = "PATH",
        requires = "signing_cert",
        help_heading = WALLETS
    )]
    request_signing_key: Option<PathBuf>,

    /// PEM file of that key's certificate chain, leaf first (a self-signed root at its
    /// end is left out of requests); with --request-signing-key.
    #[arg(
        long,
        env = "AGEGATE_REQUEST_SIGNING_CERT",
        value_name = "PATH",
        requires = "signing_key",
        help_heading = WALLETS
    )]
    request_signing_cert: Option<PathBuf>,

    /// The older name of --request-signing-key.
    #[arg(
        long,
        env = "AGEGATE_DC_API_SIGNING_KEY",
        value_name = "PATH",
        requires = "signing_cert",
        help_heading = WALLETS
    )]
    dc_api_signing_key: Option<PathBuf>,

    /// The older name of --request-signing-cert.
    #[arg(
        long,
        env = "AGEGATE_DC_API_SIGNING_CERT",
        value_name = "PATH",
        requires = "signing_key",
        help_heading = WALLETS
    )]
    dc_api_signing_cert: Option<PathBuf>,

    /// JSON file: an array of OpenID4VP verifier_info objects ({"format", "data",
    /// "credential_ids"?}), e.g. a registration certificate, put verbatim into every
    /// signed request.
    #[arg(long, env = "AGEGATE_VERIFIER_INFO", value_name = "PATH", help_heading = WALLETS)]
    verifier_info: Option<PathBuf>,

    /// URI scheme of the signed by-reference link (EU Digital Identity Wallets and others).
    #[arg(
        long,
        env = "AGEGATE_SIGNED_WALLET_SCHEME",
        default_value = DEFAULT_SIGNED_WALLET_SCHEME,
        value_name = "SCHEME",
        value_parser = parse_wallet_scheme,
        help_heading = WALLETS
    )]
    signed_wallet_scheme: String,

    /// Which wallet links the gateway page shows [default: both with a signing key, else
    /// value].
    #[arg(
        long,
        env = "AGEGATE_WALLET_LINKS",
        value_name = "value|reference|both",
        value_parser = WalletLinks::parse,
        help_heading = WALLETS
    )]
    wallet_links: Option<WalletLinks>,
}

impl SigningArgs {
    /// The key and certificate files, under whichever names were given.
    pub fn identity(&self) -> Option<(&PathBuf, &PathBuf)> {
        let key = self
            .request_signing_key
            .as_ref()
            .or(self.dc_api_signing_key.as_ref())?;
        let cert = self
            .request_signing_cert
            .as_ref()
            .or(self.dc_api_signing_cert.as_ref())?;
        Some((key, cert))
    }

    pub fn verifier_info(&self) -> Option<&PathBuf> {
        self.verifier_info.as_ref()
    }

    pub fn signed_wallet_scheme(&self) -> &str {
        &self.signed_wallet_scheme
    }

    /// `--wallet-links`, or its default: both with a signing identity, else by value.
    pub fn wallet_links(&self, signing: bool) -> WalletLinks {
        self.wallet_links.unwrap_or(if signing {
            WalletLinks::Both
        } else {
            WalletLinks::Value
        })
    }
}
