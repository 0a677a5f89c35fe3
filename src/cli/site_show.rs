use super::view::{print_site, SiteView};
use crate::app::Services;
use crate::domain::SiteId;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let site: SiteView = services.sites().get(args.site_id).await?.into();
    if args.json {
        super::print_json(&site)
    } else {
        print_site(&site);
        Ok(())
    }
}
