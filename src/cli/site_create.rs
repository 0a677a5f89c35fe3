use serde::Serialize;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::domain::{
    Accept, MinAge, Password, SiteId, SiteName, SiteUrl, Username, WebhookFormat, WebhookSecret,
};
use crate::store::{AdminStore, NewCredential, NewSite};

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
    /// eu-av, eudi-pid, mdl. The gateway asks for those the server also has on.
    #[arg(long, value_name = "LIST", default_value = "all", value_parser = |s: &str| Accept::parse(s))]
    accept: Accept,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// What a new site's owner needs; the password and secret are shown only here.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedSite {
    pub site_id: String,
    pub username: String,
    pub password: String,
    pub webhook_secret: String,
}

/// What a new site is configured with.
#[derive(Debug, Clone)]
pub struct SiteSettings {
    pub name: SiteName,
    pub redirect_url: Option<SiteUrl>,
    pub webhook_url: Option<SiteUrl>,
    pub sandbox: bool,
    pub min_age: MinAge,
    pub webhook_format: WebhookFormat,
    pub accept: Accept,
}

impl SiteSettings {
    /// A site with nothing but a name, and the defaults.
    pub fn named(name: SiteName) -> Self {
        Self {
            name,
            redirect_url: None,
            webhook_url: None,
            sandbox: false,
            min_age: MinAge::DEFAULT,
            webhook_format: WebhookFormat::Standard,
            accept: Accept::All,
        }
    }
}

/// Creates a site with its first credential and webhook secret.
pub async fn create_site(
    store: &dyn AdminStore,
    clock: &dyn Clock,
    settings: SiteSettings,
) -> anyhow::Result<CreatedSite> {
    let SiteSettings {
        name,
        redirect_url,
        webhook_url,
        sandbox,
        min_age,
        webhook_format,
        accept,
    } = settings;
    let now = clock.now();
    let id = SiteId::generate();
    let username = Username::generate();
    let password = Password::generate();
    let secret = WebhookSecret::generate();
    let created = CreatedSite {
        site_id: id.to_string(),
        username: username.as_str().to_owned(),
        password: password.expose().to_owned(),
        webhook_secret: secret.expose().to_owned(),
    };
    store
        .create_site(NewSite {
            id,
            name,
            redirect_url,
            webhook_url,
            sandbox,
            min_age,
            webhook_format,
            accept,
            created_at: now,
            credential: NewCredential {
                username,
                digest: password.digest(),
                created_at: now,
            },
            webhook_secret: secret,
        })
        .await?;
    Ok(created)
}

pub async fn run(args: Args, store: Arc<dyn AdminStore>) -> anyhow::Result<()> {
    let name = args.name.as_str().to_owned();
    let created = create_site(
        store.as_ref(),
        &SystemClock,
        SiteSettings {
            name: args.name,
            redirect_url: args.redirect_url,
            webhook_url: args.webhook_url,
            sandbox: args.sandbox,
            min_age: args.min_age,
            webhook_format: args.webhook_format,
            accept: args.accept,
        },
    )
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
