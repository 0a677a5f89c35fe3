use crate::app::keys::Revoked;
use crate::app::Services;
use crate::domain::SiteId;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// The credential's username.
    username: String,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    match services
        .sites()
        .revoke_key(args.site_id, &args.username)
        .await?
    {
        Revoked::Now => println!(
            "Revoked {}; running servers refuse it within 5 seconds.",
            args.username
        ),
        Revoked::Already => println!("{} was already revoked.", args.username),
    }
    Ok(())
}
