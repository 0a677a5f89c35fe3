use crate::app::Services;
use crate::domain::SiteId;

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

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    if !args.yes {
        anyhow::bail!(
            "not deleting site {}: this erases it with all its credentials, invites and events; add --yes to do so",
            args.site_id
        );
    }
    let invites = services.sites().delete(args.site_id).await?;
    println!(
        "Deleted site {} with its credentials, webhook secrets and {invites} invite(s).",
        args.site_id
    );
    Ok(())
}
