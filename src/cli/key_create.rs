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
    let key = services.sites().issue_key(args.site_id).await?;
    if args.json {
        println!("{}", serde_json::to_string(&key)?);
    } else {
        println!("New credential for site {}:", args.site_id);
        println!("  username: {}", key.username);
        println!("  password: {}", key.password);
        println!("The password is shown only now; store it safely.");
    }
    Ok(())
}
