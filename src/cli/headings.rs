//! The headings of `serve --help`, so its flags read by topic: their own file, because
//! `serve`'s flags and the trust flags `serve`, `trust show` and `statement` share
//! (`trust_args.rs`) are grouped under them.

pub(super) const NETWORK: &str = "Network";
pub(super) const DATABASE: &str = "Database";
pub(super) const WEBHOOKS: &str = "Webhooks";
pub(super) const WALLETS: &str = "Wallets and trust";
pub(super) const CONSOLE: &str = "Console";
pub(super) const OBSERVABILITY: &str = "Observability";
