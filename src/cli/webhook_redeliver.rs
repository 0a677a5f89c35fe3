use crate::app::Services;
use crate::domain::webhook::EventId;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The event's id (the `webhook-id` header; see `agegate site deliveries`).
    #[arg(value_parser = parse_event_id)]
    event_id: EventId,
}

fn parse_event_id(s: &str) -> Result<EventId, String> {
    EventId::parse(s).ok_or_else(|| format!("'{s}' is not a webhook event id (evt_...)"))
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    services.invites().redeliver(&args.event_id).await?;
    println!(
        "Queued {} again; a running server sends it within a few seconds, with a fresh retry schedule.",
        args.event_id
    );
    Ok(())
}
