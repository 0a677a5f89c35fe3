use crate::app::sites::SiteSettings;
use crate::app::Services;
use crate::domain::{Accept, MinAge, SiteName, SiteUrl, WebhookFormat, ZkPolicy};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A name for people to recognise the site by.
    #[arg(long, value_parser = |s: &str| SiteName::parse(s))]
    name: SiteName,
    /// Where the gateway sends a verified visitor back to (vs= and cid= are added).
    #[arg(long, value_name = "URL", value_parser = |s: &str| SiteUrl::parse(s))]
    redirect_url: Option<SiteUrl>,
    /// Where signed webhook events are POSTed.
    #[arg(long, value_name = "URL", value_parser = |s: &str| SiteUrl::parse(s))]
    webhook_url: Option<SiteUrl>,
    /// A test site: its gateway page offers a control that marks an invite verified.
    #[arg(long)]
    sandbox: bool,
    /// The age a visitor must prove (1-99); the gateway asks for the claim age_over_NN.
    #[arg(long, value_name = "N", default_value = "18", value_parser = |s: &str| MinAge::parse(s))]
    min_age: MinAge,
    /// How webhooks are written: standard (Standard Webhooks, every event) or everprotec
    /// (verifications only, for receivers of the hosted service this API comes from).
    #[arg(long, value_name = "FORMAT", default_value = "standard", value_parser = |s: &str| WebhookFormat::parse(s))]
    webhook_format: WebhookFormat,
    /// The kinds of credential the site accepts: all, or a comma-separated list of
    /// eu-av, eudi-pid, mdl, google-id, photo-id. The gateway asks for those the server also has on.
    #[arg(long, value_name = "LIST", default_value = "all", value_parser = |s: &str| Accept::parse(s))]
    accept: Accept,
    /// Whether the gateway asks for a zero-knowledge proof of age, on a server with
    /// --zk-circuits: off, prefer (a proof or a plain presentation) or require (a proof only).
    #[arg(long, value_name = "POLICY", default_value = "prefer", value_parser = |s: &str| ZkPolicy::parse(s))]
    zk: ZkPolicy,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let name = args.name.as_str().to_owned();
    let created = services
        .sites()
        .create(SiteSettings {
            name: args.name,
            redirect_url: args.redirect_url,
            webhook_url: args.webhook_url,
            sandbox: args.sandbox,
            min_age: args.min_age,
            webhook_format: args.webhook_format,
            accept: args.accept,
            zk: args.zk,
        })
        .await?;
    if args.json {
        println!("{}", serde_json::to_string(&created)?);
    } else {
        println!(
            "Created site \"{name}\"{}.",
            if args.sandbox { " (sandbox)" } else { "" }
        );
        println!("  siteId:        {}", created.site_id);
        println!("  username:      {}", created.username);
        println!("  password:      {}", created.password);
        println!("  webhookSecret: {}", created.webhook_secret);
        println!("The password and webhook secret are shown only now; store them safely.");
    }
    Ok(())
}
