use std::sync::Arc;

use crate::app::keys::{revoke_key, Revoked};
use crate::clock::SystemClock;
use crate::domain::SiteId;
use crate::store::AdminStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// The credential's username.
    username: String,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    match revoke_key(store.as_ref(), &SystemClock, args.site_id, &args.username).await? {
        Revoked::Now => println!(
            "Revoked {}; running servers refuse it within 5 seconds.",
            args.username
        ),
        Revoked::Already => println!("{} was already revoked.", args.username),
    }
    Ok(())
}
