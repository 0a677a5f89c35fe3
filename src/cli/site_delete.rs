use std::sync::Arc;

use crate::domain::SiteId;
use crate::store::AdminStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Really delete: the site, its credentials and webhook secrets, every invite with its
    /// webhook events, delivery log, presentation requests and idempotency keys. Cannot
    /// be undone.
    #[arg(long)]
    yes: bool,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    if !args.yes {
        anyhow::bail!(
            "not deleting site {}: this erases it with all its credentials, invites and events; add --yes to do so",
            args.site_id
        );
    }
    let Some(invites) = store.delete_site(args.site_id).await? else {
        anyhow::bail!("no site with id {}", args.site_id);
    };
    println!(
        "Deleted site {} with its credentials, webhook secrets and {invites} invite(s).",
        args.site_id
    );
    Ok(())
}
