use super::view::{print_site, SiteView};
use crate::app::Services;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON array instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let sites = services.sites().list().await?;
    let sites: Vec<SiteView> = sites.into_iter().map(Into::into).collect();
    if args.json {
        return super::print_json(&sites);
    }
    if sites.is_empty() {
        println!("No sites yet; create one with `agegate site create --name NAME`.");
    }
    for site in &sites {
        print_site(site);
    }
    Ok(())
}
