use std::sync::Arc;

use crate::app::keys::rotate_webhook_secret;
use crate::clock::SystemClock;
use crate::domain::SiteId;
use crate::store::AdminStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let rotated = rotate_webhook_secret(store.as_ref(), &SystemClock, args.site_id).await?;
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!("New webhook secret for site {}:", args.site_id);
        println!("  webhookSecret: {}", rotated.webhook_secret);
        println!("For 24 hours deliveries are signed with both the new and the old secret.");
    }
    Ok(())
}
