use crate::app::Services;
use crate::domain::SiteId;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let rotated = services.sites().rotate_webhook_secret(args.site_id).await?;
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!("New webhook secret for site {}:", args.site_id);
        println!("  webhookSecret: {}", rotated.webhook_secret);
        println!("For 24 hours deliveries are signed with both the new and the old secret.");
    }
    Ok(())
}
