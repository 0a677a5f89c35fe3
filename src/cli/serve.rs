//! `agegate serve`: its flags, and the start: the database opened (`startup::Database`,
//! which it can only hand on), the trust anchors loaded, the server built and run until a
//! signal stops it. What else it loads and watches is in `serve_start.rs`.

use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, SystemClock};
use crate::config::{
    parse_retry_schedule, parse_webhook_lease, Settings, DEFAULT_LISTEN, DEFAULT_RETRY_SCHEDULE,
};
use crate::domain::presentation::{parse_wallet_scheme, DEFAULT_WALLET_SCHEME};
use crate::startup::Database;
use crate::store::{self, DatabaseUrl};

use super::headings::{CONSOLE, DATABASE, NETWORK, OBSERVABILITY, WALLETS, WEBHOOKS};
use super::serve_start::{dc_api_summary, load_signer, load_zk, reload_on_hangup, stop_on_signal};
use super::signing_args::SigningArgs;
use super::trust_args::TrustArgs;
use std::path::PathBuf;

pub use crate::telemetry::LogFormat;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address of the HTTP server.
    #[arg(long, env = "AGEGATE_LISTEN", default_value = DEFAULT_LISTEN, value_name = "ADDR", help_heading = NETWORK)]
    listen: String,

    /// Base of the gateway URLs handed out in invites [default: http:// + the listen address].
    #[arg(long, env = "AGEGATE_PUBLIC_URL", value_name = "URL", help_heading = NETWORK)]
    public_url: Option<String>,

    /// Bearer token of the verification provider; unset, the verifier API answers 401.
    #[arg(
        long,
        env = "AGEGATE_VERIFIER_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true,
        help_heading = NETWORK
    )]
    verifier_token: Option<String>,

    /// Connections to the database, at most (PostgreSQL).
    #[arg(
        long,
        env = "AGEGATE_DATABASE_POOL_SIZE",
        default_value_t = store::DbOptions::default().pool_size,
        value_name = "N",
        value_parser = parse_pool_size,
        help_heading = DATABASE
    )]
    database_pool_size: usize,

    /// A database statement running longer is cancelled and its request answers 503
    /// (PostgreSQL); e.g. 5s, 500ms; 0 for none.
    #[arg(
        long,
        env = "AGEGATE_DATABASE_STATEMENT_TIMEOUT",
        default_value = "5s",
        value_name = "DURATION",
        value_parser = parse_statement_timeout,
        help_heading = DATABASE
    )]
    database_statement_timeout: Duration,

    /// Allow webhook targets on loopback or private networks (development and tests only).
    /// The environment variable takes 1/0, true/false, yes/no or on/off.
    #[arg(
        long,
        env = "AGEGATE_ALLOW_PRIVATE_WEBHOOKS",
        value_parser = clap::builder::BoolishValueParser::new(),
        help_heading = WEBHOOKS
    )]
    allow_private_webhooks: bool,

    /// Delays between webhook delivery attempts, after the first, immediate one.
    #[arg(
        long,
        env = "AGEGATE_WEBHOOK_RETRY_SCHEDULE",
        default_value = DEFAULT_RETRY_SCHEDULE,
        value_name = "LIST",
        value_parser = parse_retry_schedule,
        help_heading = WEBHOOKS
    )]
    webhook_retry_schedule: RetrySchedule,

    /// How long a server's claim on a webhook event lasts; if the server dies mid-send,
    /// another takes the event over after this (at least 11s).
    #[arg(
        long,
        env = "AGEGATE_WEBHOOK_LEASE",
        default_value = "60s",
        value_name = "DURATION",
        value_parser = parse_webhook_lease,
        hide_short_help = true,
        help_heading = WEBHOOKS
    )]
    webhook_lease: Duration,

    /// At most N authenticated requests per second per site on /v1/website/... (bursts up
    /// to N), counted by this process; beyond it, 429 with Retry-After. 0 is no limit.
    #[arg(
        long,
        env = "AGEGATE_RATE_LIMIT",
        default_value_t = 0,
        value_name = "N",
        help_heading = NETWORK
    )]
    rate_limit: u32,

    /// The trust anchors of each credential kind (SIGHUP reloads them).
    #[command(flatten)]
    trust: TrustArgs,

    /// How often the signed lists (--eu-av-trusted-list, --eudi-pid-lote, --mdl-lote,
    /// --mdl-vical) are fetched again, at most: sooner when a list's NextUpdate comes first;
    /// SIGHUP also fetches them (e.g. 1h, 30m).
    #[arg(
        long,
        env = "AGEGATE_TRUST_REFRESH",
        default_value = crate::trust::refresh::DEFAULT_REFRESH,
        value_name = "DURATION",
        value_parser = parse_trust_refresh,
        help_heading = WALLETS
    )]
    trust_refresh: Duration,

    /// URI scheme of the same-device link that opens the wallet.
    #[arg(
        long,
        env = "AGEGATE_EU_AV_WALLET_SCHEME",
        default_value = DEFAULT_WALLET_SCHEME,
        value_name = "SCHEME",
        value_parser = parse_wallet_scheme,
        help_heading = WALLETS
    )]
    eu_av_wallet_scheme: String,

    /// The signing identity of wallet requests, `--verifier-info` and the wallet links.
    #[command(flatten)]
    signing: SigningArgs,

    /// Directory of Longfellow circuit files (versions 6 and 7, recognised by their SHA-256):
    /// with it, wallets may answer with a zero-knowledge proof of age
    /// (docs/zk.md#zero-knowledge-proofs). Unknown files are ignored.
    #[arg(long, env = "AGEGATE_ZK_CIRCUITS", value_name = "DIR", help_heading = WALLETS)]
    zk_circuits: Option<PathBuf>,

    /// What is done with a credential's status list (docs/credential-status.md): `check`
    /// refuses revoked and suspended credentials and accepts as `unknown` one whose list
    /// cannot be had; `require` refuses that too (and zero-knowledge proofs, whose status
    /// is hidden); `off` fetches nothing.
    #[arg(
        long,
        env = "AGEGATE_CREDENTIAL_STATUS",
        value_name = "MODE",
        value_enum,
        default_value_t = crate::domain::StatusMode::Check,
        help_heading = WALLETS
    )]
    credential_status: crate::domain::StatusMode,

    /// Proof checks that run at once [default: the number of cores]; as many more wait,
    /// and beyond that a proof is answered 503 with Retry-After.
    #[arg(
        long,
        env = "AGEGATE_ZK_WORKERS",
        value_name = "N",
        value_parser = parse_workers,
        help_heading = WALLETS
    )]
    zk_workers: Option<usize>,

    /// Invites verified or expired longer ago than this are erased with their events, at
    /// start and hourly (e.g. 90d, 36h; 0 keeps every invite).
    #[arg(
        long,
        env = "AGEGATE_RETENTION",
        default_value = crate::retention::DEFAULT_RETENTION,
        value_name = "DURATION",
        value_parser = crate::retention::Retention::parse,
        help_heading = DATABASE
    )]
    retention: crate::retention::Retention,

    /// Serve the operator console at /admin/ on this address only (e.g. 127.0.0.1:9091);
    /// bind it to loopback or a private network (docs/console.md).
    #[arg(long, env = "AGEGATE_ADMIN_LISTEN", value_name = "ADDR", help_heading = CONSOLE)]
    admin_listen: Option<String>,

    /// Serve Prometheus metrics at GET /metrics on this address only (e.g. 127.0.0.1:9090).
    #[arg(long, env = "AGEGATE_METRICS_LISTEN", value_name = "ADDR", help_heading = OBSERVABILITY)]
    metrics_listen: Option<String>,

    /// Log lines as text (key=value) or as one JSON object per line.
    #[arg(long, env = "AGEGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, help_heading = OBSERVABILITY)]
    pub log_format: LogFormat,
}

type RetrySchedule = Vec<Duration>;

fn parse_pool_size(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{s}' is not a whole number of connections, 1 or more"
        )),
    }
}

fn parse_workers(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a whole number of workers, 1 or more")),
    }
}

fn parse_trust_refresh(s: &str) -> Result<Duration, String> {
    let every = humantime::parse_duration(s).map_err(|e| format!("'{s}': {e}"))?;
    if every < Duration::from_secs(1) {
        return Err(format!("'{s}' is shorter than a second"));
    }
    Ok(every)
}

fn parse_statement_timeout(s: &str) -> Result<Duration, String> {
    let timeout = humantime::parse_duration(s).map_err(|e| format!("'{s}': {e}"))?;
    // PostgreSQL keeps it in milliseconds as a 32-bit integer.
    if timeout.as_millis() > i32::MAX as u128 {
        return Err(format!("'{s}' is longer than PostgreSQL allows (24 days)"));
    }
    Ok(timeout)
}

pub async fn run(args: Args, database_url: &DatabaseUrl) -> anyhow::Result<()> {
    let db_options = store::DbOptions {
        pool_size: args.database_pool_size,
        statement_timeout: args.database_statement_timeout,
    };
    let database = Database::open(database_url, &db_options)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open database {database_url}: {e}"))?;
    // Lists that cannot be had or do not verify are logged and left out (or taken from
    // the database); unreadable files stop the start.
    let (trust, list_outcomes) = database
        .load_trust(args.trust.files(), SystemClock.now())
        .await
        .map_err(anyhow::Error::msg)?;
    let loaded = trust.current();
    let kinds_log = loaded.kinds_summary();
    let wallet_on = !loaded.anchors.on().is_empty();
    let (dc_api_signer, signer_warning) = load_signer(&args.signing)?;
    let dc_api_log = dc_api_summary(wallet_on, dc_api_signer.as_ref());
    let (zk, zk_log) = load_zk(args.zk_circuits.as_deref(), args.zk_workers)?;
    let settings = Settings {
        trust: trust.clone(),
        trust_refresh: args.trust_refresh,
        wallet_scheme: args.eu_av_wallet_scheme.clone(),
        signed_wallet_scheme: args.signing.signed_wallet_scheme().to_owned(),
        wallet_links: args.signing.wallet_links(dc_api_signer.is_some()),
        dc_api_signer,
        webhook_lease: args.webhook_lease,
        webhook_timeout: crate::config::webhook_timeout(),
        retention: args.retention,
        rate_limit: args.rate_limit,
        metrics_listen: args.metrics_listen.clone(),
        admin_listen: args.admin_listen.clone(),
        public_url: args.public_url,
        verifier_token: args.verifier_token.filter(|t| !t.is_empty()),
        allow_private_webhooks: args.allow_private_webhooks,
        webhook_retry_schedule: args.webhook_retry_schedule,
        zk,
        credential_status: args.credential_status,
        ..Settings::new(args.listen)
    };
    let app = database.build(settings, Arc::new(SystemClock)).await?;
    let shutdown = CancellationToken::new();
    tokio::spawn(stop_on_signal(shutdown.clone())?);
    tokio::spawn(reload_on_hangup(trust)?);
    tracing::info!(
        "agegate listening on http://{} (public URL {}), database {}",
        app.local_addr(),
        app.public_url(),
        database_url
    );
    if args.retention == crate::retention::Retention::KEEP_ALL {
        tracing::info!("retention: {}", args.retention);
    } else {
        tracing::info!(
            "retention: {}; invites verified or expired longer ago are erased at start and hourly",
            args.retention
        );
    }
    match app.admin_addr() {
        Some(addr) => tracing::info!("operator console on http://{addr}/admin/"),
        None => tracing::info!("operator console: off (no --admin-listen)"),
    }
    for line in kinds_log {
        tracing::info!("{line}");
    }
    list_outcomes
        .iter()
        .for_each(crate::trust::refresh::Outcome::log);
    if wallet_on {
        tracing::info!("wallet link scheme {}://", args.eu_av_wallet_scheme);
    }
    tracing::info!("{dc_api_log}");
    if let Some(warning) = signer_warning {
        tracing::warn!("{warning}");
    }
    for line in zk_log {
        tracing::info!("{line}");
    }
    tracing::info!("credential status: {}", args.credential_status);
    app.run_until_stopped(shutdown).await?;
    tracing::info!("agegate stopped");
    Ok(())
}
