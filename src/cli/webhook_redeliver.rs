use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The event's id (the `webhook-id` header; see `agegate site deliveries`).
    event_id: String,
}

pub async fn run(args: Args, store: Arc<dyn Store>) -> anyhow::Result<()> {
    if !store
        .redeliver(&args.event_id, SystemClock.now_millis())
        .await?
    {
        anyhow::bail!("no webhook event with id '{}'", args.event_id);
    }
    println!(
        "Queued {} again; a running server sends it within a few seconds, with a fresh retry schedule.",
        args.event_id
    );
    Ok(())
}
