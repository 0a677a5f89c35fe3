//! `agegate trust show [--json]`: every trust anchor `serve` would load with the same
//! flags and environment, by kind — subject, notAfter, SHA-256 fingerprint, where it came
//! from — with the ones expiring within 30 days flagged (docs/trust.md#trust-show-reloading-and-expiry).

use serde::Serialize;

use super::trust_args::TrustArgs;
use crate::clock::{rfc3339, Clock, SystemClock};
use crate::domain::Kind;
use crate::trust::{self, AnchorListing};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    trust: TrustArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown {
    /// The kinds that have at least one anchor, in the table's order.
    kinds_on: Vec<&'static str>,
    anchors: Vec<AnchorListing>,
    /// The signed lists the anchors came from, if any.
    sources: Vec<SourceShown>,
    /// The credential status lists in hand: the copies kept in the database
    /// (docs/credential-status.md), which every node shares.
    status_lists: Vec<StatusListShown>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusListShown {
    /// `status_list` or `identifier_list`.
    form: String,
    uri: String,
    iat: String,
    exp: Option<String>,
    /// The token's size, bytes.
    size: usize,
    last_fetch: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SourceShown {
    /// Which list (`eu-av-trusted-list`, `eudi-pid-lote`, `mdl-lote`, `mdl-vical`).
    list: &'static str,
    kind: &'static str,
    location: String,
    sequence: u64,
    issued: String,
    /// Absent for a VICAL without one.
    next_update: Option<String>,
    last_success: String,
    anchors: usize,
}

/// Reads the anchors as a starting server does: with a list from a URL, the database's
/// copy stands in when the URL cannot be had (and a newer list fetched is kept there).
pub async fn run(args: Args, database_url: &crate::store::DatabaseUrl) -> anyhow::Result<()> {
    let now = SystemClock.now();
    let files = args.trust.files();
    let fetcher = trust::Fetcher::default();
    let started = if files.lists.iter().any(|l| l.source.is_url()) {
        let services = super::open(database_url).await?;
        services.overview().trust(files, &fetcher, now).await
    } else {
        trust::TrustHandle::start(files, &trust::refresh::NoDatabase, &fetcher, now).await
    };
    let (handle, outcomes) = started.map_err(anyhow::Error::msg)?;
    let status_lists = status_lists(database_url).await;
    outcomes.iter().for_each(trust::refresh::Outcome::log);
    let loaded = handle.current();
    let shown = Shown {
        kinds_on: loaded.anchors.on().names(),
        anchors: trust::list(&loaded.sources, now),
        sources: loaded
            .lists
            .iter()
            .map(|l| SourceShown {
                list: l.list.name,
                kind: l.kind().name(),
                location: l.location.clone(),
                sequence: l.sequence,
                issued: rfc3339(l.issued),
                next_update: l.next_update.map(rfc3339),
                last_success: rfc3339(l.last_success),
                anchors: l.anchors(),
            })
            .collect(),
        status_lists,
    };
    if args.json {
        return super::print_json(&shown);
    }
    for kind in Kind::all() {
        let of_kind: Vec<&AnchorListing> =
            shown.anchors.iter().filter(|a| a.kind == kind).collect();
        if of_kind.is_empty() {
            println!("{kind}: off (no anchors)");
            continue;
        }
        println!(
            "{kind}: on, {} anchor(s) ({})",
            of_kind.len(),
            kind.info().title
        );
        for a in of_kind {
            let flag = if a.expired {
                "  EXPIRED"
            } else if a.expires_soon {
                "  EXPIRES WITHIN 30 DAYS"
            } else {
                ""
            };
            println!("  {}{flag}", a.subject);
            println!("    not after: {}", a.not_after_text());
            println!("    sha-256:   {}", a.fingerprint_colons());
            println!("    source:    {}", a.source);
        }
    }
    for s in &shown.sources {
        println!(
            "list {} {} ({}): sequence {}",
            s.list, s.location, s.kind, s.sequence
        );
        println!("  issued:       {}", s.issued);
        let next = s.next_update.as_deref().unwrap_or("none");
        println!("  next update:  {next}");
        println!("  last success: {}", s.last_success);
        println!("  anchors:      {}", s.anchors);
    }
    for s in &shown.status_lists {
        println!("{} {}: {} bytes", s.form, s.uri, s.size);
        println!("  issued:       {}", s.iat);
        println!("  expires:      {}", s.exp.as_deref().unwrap_or("none"));
        println!("  last fetch:   {}", s.last_fetch);
    }
    Ok(())
}

/// The status lists kept in the database, when there is one: a SQLite file that does
/// not exist is not created by a look at the configuration.
async fn status_lists(database_url: &crate::store::DatabaseUrl) -> Vec<StatusListShown> {
    let url = database_url.expose();
    if crate::store::sqlite::path_of(url).is_some_and(|p| !std::path::Path::new(p).exists()) {
        return Vec::new();
    }
    let copies = match super::open(database_url).await {
        Ok(services) => services
            .overview()
            .status_lists()
            .await
            .map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    match copies {
        Ok(copies) => copies
            .into_iter()
            .map(|c| StatusListShown {
                size: c.body.len(),
                form: c.form,
                uri: c.uri,
                iat: rfc3339(c.iat),
                exp: c.exp.map(rfc3339),
                last_fetch: rfc3339(c.fetched_at),
            })
            .collect(),
        Err(e) => {
            tracing::warn!("status lists not read from the database: {e}");
            Vec::new()
        }
    }
}
