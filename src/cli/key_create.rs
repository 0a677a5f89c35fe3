use std::sync::Arc;

use crate::app::keys::issue_key;
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
    let key = issue_key(store.as_ref(), &SystemClock, args.site_id).await?;
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
