//! Logs go to stderr, as `key=value` text or one JSON object per line (`--log-format`);
//! `RUST_LOG` overrides the level. Nothing logged carries a password, a webhook secret
//! or a customId.

use std::io::{IsTerminal, Write};
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub fn init(default_directive: &str, format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_directive));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LossyStderr)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().with_current_span(false).try_init(),
    };
}

/// Stderr that never fails: a log line that cannot be written (the reader of a pipe
/// went away) is dropped. Otherwise the subscriber reports the failure with `eprintln!`,
/// which panics on the same broken pipe, and the task that logged dies (the signal
/// handler among them, so SIGTERM would no longer stop the server).
struct LossyStderr;

impl Write for LossyStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}
