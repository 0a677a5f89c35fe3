use serde::Serialize;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::domain::{Password, SiteId, Username};
use crate::store::{AdminStore, NewCredential};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A new credential; the password is shown only here.
#[derive(Serialize)]
pub struct CreatedKey {
    pub username: String,
    pub password: String,
}

/// Issues one more credential for `site`; `None` when there is no such site.
pub async fn create_key(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    site: SiteId,
) -> anyhow::Result<Option<CreatedKey>> {
    let username = Username::generate();
    let password = Password::generate();
    let key = CreatedKey {
        username: username.as_str().to_owned(),
        password: password.expose().to_owned(),
    };
    let added = store
        .add_credential(
            site,
            NewCredential {
                username,
                digest: password.digest(),
                created_at: clock.now(),
            },
        )
        .await?;
    Ok(added.then_some(key))
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let Some(key) = create_key(store.as_ref(), &SystemClock, args.site_id).await? else {
        anyhow::bail!("no site with id {}", args.site_id);
    };
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
