use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::domain::SiteId;
use crate::store::{AdminStore, RevokeOutcome};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// The credential's username.
    username: String,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    if store.site(args.site_id).await?.is_none() {
        anyhow::bail!("no site with id {}", args.site_id);
    }
    match store
        .revoke_credential(args.site_id, &args.username, SystemClock.now())
        .await?
    {
        RevokeOutcome::Revoked => {
            println!(
                "Revoked {}; running servers refuse it within 5 seconds.",
                args.username
            );
            Ok(())
        }
        RevokeOutcome::AlreadyRevoked => {
            println!("{} was already revoked.", args.username);
            Ok(())
        }
        RevokeOutcome::NotFound => anyhow::bail!(
            "site {} has no credential named '{}'",
            args.site_id,
            args.username
        ),
    }
}
