use std::sync::Arc;

use super::view::{print_site, SiteView};
use crate::app::sites::site;
use crate::domain::SiteId;
use crate::store::AdminStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let site: SiteView = site(store.as_ref(), args.site_id).await?.into();
    if args.json {
        super::print_json(&site)
    } else {
        print_site(&site);
        Ok(())
    }
}
