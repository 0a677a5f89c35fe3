//! `serve`'s flags for signed wallet requests (docs/wallets.md#signed-requests-by-reference):
//! the signing identity under its two names (`--request-signing-*`, and the older
//! `--dc-api-signing-*`, which keep working), `--verifier-info`, the by-reference link's
//! scheme and which links the page shows.

use std::path::PathBuf;

use super::headings::WALLETS;
use crate::domain::presentation::{parse_wallet_scheme, WalletLinks, DEFAULT_SIGNED_WALLET_SCHEME};

/// The signing identity: a key and its certificate chain, each under two names (the
/// newer first). One table builds all four flags, so the older names cannot drift from
/// the newer ones; clap's derive would need a field and its attributes for each.
#[derive(Debug, Clone, Default)]
struct Identity {
    key: Option<PathBuf>,
    cert: Option<PathBuf>,
}

/// One flag of the identity: its long name (also its id), environment variable,
/// the group it joins, the group it requires, and its help.
struct Flag {
    long: &'static str,
    env: &'static str,
    group: &'static str,
    requires: &'static str,
    help: &'static str,
}

const KEY: &str = "signing_key";
const CERT: &str = "signing_cert";

/// In `serve --help`'s order; in each group, the newer name wins when both are given.
const FLAGS: [Flag; 4] = [
    Flag {
        long: "request-signing-key",
        env: "AGEGATE_REQUEST_SIGNING_KEY",
        group: KEY,
        requires: CERT,
        help: "PEM file of the P-256 private key (PKCS#8 or SEC1) that signs wallet requests: \
               the Digital Credentials API's and the signed request objects by reference (EUDI \
               wallets, Multipaz, Google Wallet and Apple Wallet answer only signed requests); \
               with --request-signing-cert",
    },
    Flag {
        long: "request-signing-cert",
        env: "AGEGATE_REQUEST_SIGNING_CERT",
        group: CERT,
        requires: KEY,
        help: "PEM file of that key's certificate chain, leaf first (a self-signed root at its \
               end is left out of requests); with --request-signing-key",
    },
    Flag {
        long: "dc-api-signing-key",
        env: "AGEGATE_DC_API_SIGNING_KEY",
        group: KEY,
        requires: CERT,
        help: "The older name of --request-signing-key",
    },
    Flag {
        long: "dc-api-signing-cert",
        env: "AGEGATE_DC_API_SIGNING_CERT",
        group: CERT,
        requires: KEY,
        help: "The older name of --request-signing-cert",
    },
];

impl clap::Args for Identity {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let group = |name: &'static str| {
            let members = FLAGS.iter().filter(|f| f.group == name).map(|f| f.long);
            clap::ArgGroup::new(name).args(members).multiple(true)
        };
        let cmd = cmd.group(group(KEY)).group(group(CERT));
        FLAGS.iter().fold(cmd, |cmd, f| {
            cmd.arg(
                clap::Arg::new(f.long)
                    .long(f.long)
                    .env(f.env)
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .action(clap::ArgAction::Set)
                    .requires(f.requires)
                    .help_heading(WALLETS)
                    .help(f.help),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for Identity {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut identity = Identity::default();
        identity.update_from_arg_matches(matches)?;
        Ok(identity)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        // FLAGS lists the newer name of each group first: the first one given wins.
        let first = |group: &str| {
            FLAGS
                .iter()
                .filter(|f| f.group == group)
                .find_map(|f| matches.get_one::<PathBuf>(f.long).cloned())
        };
        self.key = first(KEY).or(self.key.take());
        self.cert = first(CERT).or(self.cert.take());
        Ok(())
    }
}

#[derive(Debug, clap::Args)]
pub struct SigningArgs {
    #[command(flatten)]
    identity: Identity,

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
        Some((self.identity.key.as_ref()?, self.identity.cert.as_ref()?))
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
