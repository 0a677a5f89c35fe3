use serde::Serialize;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::domain::{SiteId, WebhookSecret};
use crate::store::AdminStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rotated {
    webhook_secret: String,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let secret = WebhookSecret::generate();
    let rotated = Rotated {
        webhook_secret: secret.expose().to_owned(),
    };
    if !store
        .rotate_webhook_secret(args.site_id, secret, SystemClock.now())
        .await?
    {
        anyhow::bail!("no site with id {}", args.site_id);
    }
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!("New webhook secret for site {}:", args.site_id);
        println!("  webhookSecret: {}", rotated.webhook_secret);
        println!("For 24 hours deliveries are signed with both the new and the old secret.");
    }
    Ok(())
}
