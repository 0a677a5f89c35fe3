//! How sites look in the commands' JSON and text output. Never a password or secret.

use serde::Serialize;

use crate::clock::rfc3339;
use crate::store::SiteRecord;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteView {
    site_id: String,
    name: String,
    redirect_url: Option<String>,
    webhook_url: Option<String>,
    sandbox: bool,
    min_age: u8,
    webhook_format: &'static str,
    /// The accepted kinds, `all` written out as every kind's name.
    accept: Vec<&'static str>,
    /// The zero-knowledge policy: off, prefer or require.
    zk: &'static str,
    created_at: String,
    credentials: Vec<CredentialView>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialView {
    username: String,
    created_at: String,
    revoked_at: Option<String>,
}

impl From<SiteRecord> for SiteView {
    fn from(s: SiteRecord) -> Self {
        Self {
            site_id: s.id.to_string(),
            name: s.name,
            redirect_url: s.redirect_url,
            webhook_url: s.webhook_url,
            sandbox: s.sandbox,
            min_age: s.min_age.get(),
            webhook_format: s.webhook_format.as_str(),
            accept: s.accept.kinds().names(),
            zk: s.zk.as_str(),
            created_at: rfc3339(s.created_at),
            credentials: s
                .credentials
                .into_iter()
                .map(|c| CredentialView {
                    username: c.username,
                    created_at: rfc3339(c.created_at),
                    revoked_at: c.revoked_at.map(rfc3339),
                })
                .collect(),
        }
    }
}

/// A site for a person to read.
pub fn print_site(site: &SiteView) {
    println!("{}  {}", site.site_id, site.name);
    println!(
        "  sandbox:      {}",
        if site.sandbox { "yes" } else { "no" }
    );
    println!(
        "  redirect URL: {}",
        site.redirect_url.as_deref().unwrap_or("-")
    );
    println!(
        "  webhook URL:  {}",
        site.webhook_url.as_deref().unwrap_or("-")
    );
    println!("  minimum age:  {}", site.min_age);
    println!("  webhooks:     {}", site.webhook_format);
    println!("  accepts:      {}", site.accept.join(", "));
    println!("  ZK proofs:    {}", site.zk);
    println!("  created:      {}", site.created_at);
    println!("  credentials:");
    for c in &site.credentials {
        match &c.revoked_at {
            Some(at) => println!(
                "    {}  created {}  revoked {}",
                c.username, c.created_at, at
            ),
            None => println!("    {}  created {}  active", c.username, c.created_at),
        }
    }
}
