//! Logs go to stderr as structured `key=value` lines; `RUST_LOG` overrides the level.
//! Nothing logged carries a password, a webhook secret or a customId.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

pub fn init(default_directive: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_directive));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
