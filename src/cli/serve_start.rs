//! What `serve` loads and watches as it starts, beside the database: the ZK circuits, the
//! signing identity and the start-up line about the Digital Credentials API, and the
//! signals that reload the trust anchors (SIGHUP) or stop the server (SIGINT, SIGTERM).

use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::signing_args::SigningArgs;
use crate::clock::{Clock, SystemClock};
use crate::config::load_dc_api_signer;
use crate::trust::TrustHandle;

/// Loads `--zk-circuits` once (docs/zk.md#zero-knowledge-proofs); a known file that
/// fails stops the server with one line naming it. Returns the log lines to print.
pub(super) fn load_zk(
    dir: Option<&std::path::Path>,
    workers: Option<usize>,
) -> anyhow::Result<(Option<Arc<crate::zk::Zk>>, Vec<String>)> {
    let Some(dir) = dir else {
        return Ok((
            None,
            vec!["zero-knowledge proofs: off (no --zk-circuits)".into()],
        ));
    };
    let (circuits, report) = crate::zk::ZkCircuits::load_dir(dir).map_err(anyhow::Error::msg)?;
    let mut lines = report.lines;
    let workers = workers.unwrap_or_else(crate::zk::default_workers);
    let zk = crate::zk::Zk::new(circuits, workers);
    lines.push(match &zk {
        Some(zk) => format!(
            "zero-knowledge proofs: on, {} circuit(s) from {}, {} worker(s)",
            zk.circuits.all().len(),
            dir.display(),
            zk.pool.workers()
        ),
        None => format!(
            "zero-knowledge proofs: off ({} holds no known circuit file)",
            dir.display()
        ),
    });
    Ok((zk, lines))
}

/// The signing identity (`--request-signing-key`/`-cert` or their older names) with
/// `--verifier-info`, and the one warning a self-signed leaf gets. A file at fault stops
/// the start with one line naming it.
pub(super) fn load_signer(
    args: &SigningArgs,
) -> anyhow::Result<(Option<crate::dcapi::RequestSigner>, Option<String>)> {
    let verifier_info = args
        .verifier_info()
        .map(|path| crate::config::load_verifier_info(path))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let Some((key, cert)) = args.identity() else {
        return Ok((None, None));
    };
    let signer = load_dc_api_signer(key, cert, SystemClock.now()).map_err(anyhow::Error::msg)?;
    let warning = signer.self_signed_leaf().then(|| {
        format!(
            "request signing certificate '{}': the leaf is self-signed; wallets that follow \
             HAIP 1.0 (EUDI wallets, Multipaz) refuse its requests",
            cert.display()
        )
    });
    let signer = match verifier_info {
        Some(info) => signer.with_verifier_info(info),
        None => signer,
    };
    Ok((Some(signer), warning))
}

/// The start-up line about the Digital Credentials API channel (docs/dc-api.md#when-it-is-on).
pub(super) fn dc_api_summary(
    wallet_on: bool,
    signer: Option<&crate::dcapi::RequestSigner>,
) -> String {
    match (wallet_on, signer) {
        (false, None) => "Digital Credentials API: off (no wallet method on)".into(),
        (false, Some(_)) => "Digital Credentials API: off (no wallet method on); \
             the signing key and certificate are loaded but unused"
            .into(),
        (true, None) => "Digital Credentials API: on, unsigned requests \
             (no --dc-api-signing-key: Google Wallet and Apple Wallet will not answer)"
            .into(),
        (true, Some(signer)) => format!(
            "Digital Credentials API: on, signed requests, client_id {}, certificate valid until {}",
            signer.client_id(),
            crate::clock::rfc3339(signer.leaf_validity().1)
        ),
    }
}

/// Installs the SIGHUP handler now, and returns a future that, on each SIGHUP, has the
/// refresher read every anchor file and fetch every list again: a good file or list
/// replaces the old one at once; a bad one keeps it in force, and the log says why.
pub(super) fn reload_on_hangup(
    trust: std::sync::Arc<TrustHandle>,
) -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(async move {
        while hangup.recv().await.is_some() {
            trust.refresh_soon();
        }
    })
}

/// Installs the SIGINT and SIGTERM handlers now (so a signal that arrives right after
/// start-up is not fatal), and returns a future that cancels `shutdown` on either.
pub(super) fn stop_on_signal(
    shutdown: CancellationToken,
) -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
        tracing::info!("shutting down: finishing in-flight requests");
        shutdown.cancel();
    })
}
