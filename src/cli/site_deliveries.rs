use serde::Serialize;

use crate::app::Services;
use crate::clock::{rfc3339, UnixMillis};
use crate::domain::webhook::DeliveryState;
use crate::domain::SiteId;
use crate::store::EventRecord;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// How many of the most recent events to show.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print a JSON array instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventView {
    event_id: String,
    #[serde(rename = "type")]
    event_type: &'static str,
    invite_id: String,
    occurred_at: String,
    state: &'static str,
    last_status: Option<u16>,
    last_error: Option<String>,
    next_attempt_at: Option<String>,
    attempts: Vec<AttemptView>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AttemptView {
    attempt: usize,
    at: String,
    duration_ms: i64,
    http_status: Option<u16>,
    error: Option<String>,
}

fn millis_rfc3339(at: UnixMillis) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(at.get().max(0) as u64);
    humantime::format_rfc3339_millis(t).to_string()
}

impl From<EventRecord> for EventView {
    fn from(e: EventRecord) -> Self {
        Self {
            event_type: e.event_type.as_str(),
            occurred_at: rfc3339(e.occurred_at),
            state: e.state.as_str(),
            next_attempt_at: (e.state == DeliveryState::Pending)
                .then_some(e.next_attempt)
                .flatten()
                .map(millis_rfc3339),
            attempts: e
                .attempts
                .into_iter()
                .map(|a| AttemptView {
                    attempt: a.attempt,
                    at: millis_rfc3339(a.started),
                    duration_ms: a.duration_ms,
                    http_status: a.http_status,
                    error: a.error,
                })
                .collect(),
            event_id: e.event_id.to_string(),
            invite_id: e.invite_id,
            last_status: e.last_status,
            last_error: e.last_error,
        }
    }
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let events: Vec<EventView> = services
        .sites()
        .deliveries(args.site_id, args.limit)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    if args.json {
        return super::print_json(&events);
    }
    if events.is_empty() {
        println!("No webhook events for site {} yet.", args.site_id);
    }
    for e in &events {
        println!(
            "{}  {}  invite {}  {}  {}",
            e.event_id, e.event_type, e.invite_id, e.occurred_at, e.state
        );
        for a in &e.attempts {
            let outcome = match (&a.http_status, &a.error) {
                (Some(status), _) => format!("HTTP {status}"),
                (None, Some(error)) => error.clone(),
                (None, None) => "-".into(),
            };
            println!(
                "    attempt {}  {}  {} ms  {}",
                a.attempt, a.at, a.duration_ms, outcome
            );
        }
        if let Some(next) = &e.next_attempt_at {
            println!("    next attempt {next}");
        }
    }
    Ok(())
}
