use crate::app::sites::SiteError;
use crate::app::Services;
use crate::domain::{Accept, MinAge, SiteId, SiteUrl, WebhookFormat, ZkPolicy};
use crate::store::SiteUpdate;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The site's id.
    site_id: SiteId,
    /// New redirect URL; an empty string removes it.
    #[arg(long, value_name = "URL", value_parser = optional_url)]
    redirect_url: Option<OptionalUrl>,
    /// New webhook URL; an empty string removes it.
    #[arg(long, value_name = "URL", value_parser = optional_url)]
    webhook_url: Option<OptionalUrl>,
    /// New minimum age (1-99); a live presentation request must then satisfy the higher.
    #[arg(long, value_name = "N", value_parser = |s: &str| MinAge::parse(s))]
    min_age: Option<MinAge>,
    /// New webhook format: standard or everprotec; applies to deliveries from now on.
    #[arg(long, value_name = "FORMAT", value_parser = |s: &str| WebhookFormat::parse(s))]
    webhook_format: Option<WebhookFormat>,
    /// New list of accepted credential kinds: all, or a comma-separated list of eu-av,
    /// eudi-pid, mdl, google-id, photo-id; the next request a gateway page makes asks for them.
    #[arg(long, value_name = "LIST", value_parser = |s: &str| Accept::parse(s))]
    accept: Option<Accept>,
    /// New zero-knowledge policy: off, prefer or require; the next request a gateway page
    /// makes follows it.
    #[arg(long, value_name = "POLICY", value_parser = |s: &str| ZkPolicy::parse(s))]
    zk: Option<ZkPolicy>,
}

/// A URL, or nothing (from an empty argument).
#[derive(Debug, Clone)]
struct OptionalUrl(Option<SiteUrl>);

fn optional_url(s: &str) -> Result<OptionalUrl, crate::domain::site::SiteUrlError> {
    if s.is_empty() {
        Ok(OptionalUrl(None))
    } else {
        SiteUrl::parse(s).map(|u| OptionalUrl(Some(u)))
    }
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let update = SiteUpdate {
        redirect_url: args.redirect_url.map(|u| u.0),
        webhook_url: args.webhook_url.map(|u| u.0),
        min_age: args.min_age,
        webhook_format: args.webhook_format,
        accept: args.accept,
        zk: args.zk,
    };
    match services.sites().update(args.site_id, update).await {
        Err(SiteError::NothingToUpdate) => anyhow::bail!(
            "nothing to update: give --redirect-url, --webhook-url, --min-age, --webhook-format, --accept or --zk"
        ),
        other => other?,
    }
    println!("Updated site {}.", args.site_id);
    Ok(())
}
