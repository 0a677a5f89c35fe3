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

/// The new secret; shown only here.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rotated {
    pub webhook_secret: String,
}

/// Makes a new signing secret current for `site` (the old one signs alongside for 24
/// hours); `None` when there is no such site.
pub async fn rotate_secret(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    site: SiteId,
) -> anyhow::Result<Option<Rotated>> {
    let secret = WebhookSecret::generate();
    let rotated = Rotated {
        webhook_secret: secret.expose().to_owned(),
    };
    let found = store
        .rotate_webhook_secret(site, secret, clock.now())
        .await?;
    Ok(found.then_some(rotated))
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let Some(rotated) = rotate_secret(store.as_ref(), &SystemClock, args.site_id).await? else {
        anyhow::bail!("no site with id {}", args.site_id);
    };
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!("New webhook secret for site {}:", args.site_id);
        println!("  webhookSecret: {}", rotated.webhook_secret);
        println!("For 24 hours deliveries are signed with both the new and the old secret.");
    }
    Ok(())
}
