//! Sites: the list with the form that creates one, a site's settings and credentials,
//! and the actions on them. Each action is the application layer's (`app::sites`,
//! `app::keys`), which the command line calls too, so the two keep one set of rules.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use super::session::{Action, NoFields, NoticeQuery, Operator};
use super::{page, see_other, when, ConsoleError, ConsoleState, Layout};
use crate::app::keys::Revoked;
use crate::app::sites::SiteSettings;
use crate::domain::{Accept, MinAge, SiteId, SiteName, SiteUrl, WebhookFormat, ZkPolicy};
use crate::store::{CredentialInfo, SiteRecord, SiteUpdate};

#[derive(Template)]
#[template(path = "console/sites.html")]
struct SitesPage<'a> {
    layout: Layout,
    csrf: &'a str,
    sites: Vec<SiteRecord>,
    error: Option<String>,
    form: NewSiteForm,
}

impl SitesPage<'_> {
    /// The kinds a site may list, from the kinds table.
    fn kind_names(&self) -> String {
        crate::domain::KindSet::all().names().join(", ")
    }
}

#[derive(Template)]
#[template(path = "console/site.html")]
struct SitePage<'a> {
    layout: Layout,
    csrf: &'a str,
    site: SiteRecord,
}

/// Secrets shown once, right after the action that made them.
#[derive(Template)]
#[template(path = "console/shown_once.html")]
struct ShownOnce<'a> {
    layout: Layout,
    title: &'a str,
    site_id: String,
    /// (label, value, element id)
    facts: Vec<(&'static str, String, &'static str)>,
    secrets: Vec<(&'static str, String, &'static str)>,
}

impl SiteRecord {
    pub fn created_text(&self) -> String {
        when(self.created_at)
    }

    /// The accepted kinds as `site show` prints them.
    pub fn accept_text(&self) -> String {
        match self.accept {
            Accept::All => format!("all ({})", self.accept.kinds().names().join(", ")),
            Accept::Only(kinds) => kinds.names().join(", "),
        }
    }

    pub fn active_keys(&self) -> usize {
        self.credentials
            .iter()
            .filter(|c| c.revoked_at.is_none())
            .count()
    }
}

impl CredentialInfo {
    pub fn created_text(&self) -> String {
        when(self.created_at)
    }

    pub fn revoked_text(&self) -> String {
        self.revoked_at.map(when).unwrap_or_default()
    }
}

#[derive(Deserialize, Default)]
pub struct NewSiteForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    redirect_url: String,
    #[serde(default)]
    webhook_url: String,
    sandbox: Option<String>,
    #[serde(default)]
    min_age: String,
    #[serde(default)]
    webhook_format: String,
    #[serde(default)]
    accept: String,
    #[serde(default)]
    zk: String,
}

impl NewSiteForm {
    /// The settings the form asks for, by the command line's parsers.
    fn settings(&self) -> Result<SiteSettings, String> {
        let url = |s: &str| -> Result<Option<SiteUrl>, String> {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else {
                SiteUrl::parse(s).map(Some).map_err(|e| e.to_string())
            }
        };
        let min_age = match self.min_age.trim() {
            "" => MinAge::DEFAULT,
            n => MinAge::parse(n).map_err(|e| e.to_string())?,
        };
        let webhook_format = match self.webhook_format.trim() {
            "" => WebhookFormat::Standard,
            f => WebhookFormat::parse(f).map_err(|e| e.to_string())?,
        };
        let accept = match self.accept.trim() {
            "" => Accept::All,
            list => Accept::parse(list).map_err(|e| e.to_string())?,
        };
        let zk = match self.zk.trim() {
            "" => ZkPolicy::default(),
            p => ZkPolicy::parse(p).map_err(|e| e.to_string())?,
        };
        Ok(SiteSettings {
            accept,
            zk,
            name: SiteName::parse(&self.name).map_err(|e| e.to_string())?,
            redirect_url: url(&self.redirect_url)?,
            webhook_url: url(&self.webhook_url)?,
            sandbox: self.sandbox.is_some(),
            min_age,
            webhook_format,
        })
    }
}

pub async fn list(
    State(state): State<ConsoleState>,
    operator: Operator,
    Query(query): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    let sites = state.services.sites().list().await?;
    let html = SitesPage {
        layout: operator.layout(query.notice.as_deref()),
        csrf: operator.csrf(),
        sites,
        error: None,
        form: NewSiteForm::default(),
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

pub async fn create(
    State(state): State<ConsoleState>,
    Action { operator, form }: Action<NewSiteForm>,
) -> Result<Response, ConsoleError> {
    let settings = match form.settings() {
        Ok(settings) => settings,
        Err(why) => {
            let sites = state.services.sites().list().await?;
            let html = SitesPage {
                layout: operator.layout(None),
                csrf: operator.csrf(),
                sites,
                error: Some(why),
                form,
            }
            .render();
            return Ok(page(StatusCode::BAD_REQUEST, html));
        }
    };
    let name = settings.name.as_str().to_owned();
    let created = state.services.sites().create(settings).await?;
    tracing::info!(site_id = %created.site_id, user = %operator.username, "site created in the console");
    let html = ShownOnce {
        layout: operator.layout(None),
        title: &format!("Site \"{name}\" created"),
        site_id: created.site_id.clone(),
        facts: vec![
            ("siteId", created.site_id, "new-site-id"),
            ("username", created.username, "new-username"),
        ],
        secrets: vec![
            ("password", created.password, "new-password"),
            (
                "webhookSecret",
                created.webhook_secret,
                "new-webhook-secret",
            ),
        ],
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

/// The site a path names; one that cannot exist is not found.
pub fn site_id(raw: &str) -> Result<SiteId, ConsoleError> {
    SiteId::parse(raw).map_err(|_| ConsoleError::NotFound("There is no such site."))
}

pub async fn load_site(state: &ConsoleState, id: SiteId) -> Result<SiteRecord, ConsoleError> {
    Ok(state.services.sites().get(id).await?)
}

pub async fn show(
    State(state): State<ConsoleState>,
    operator: Operator,
    Path(site): Path<String>,
    Query(query): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let html = SitePage {
        layout: operator.layout(query.notice.as_deref()),
        csrf: operator.csrf(),
        site,
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

pub async fn issue_key(
    State(state): State<ConsoleState>,
    Path(site): Path<String>,
    Action { operator, .. }: Action<NoFields>,
) -> Result<Response, ConsoleError> {
    let id = site_id(&site)?;
    let key = state.services.sites().issue_key(id).await?;
    tracing::info!(site_id = %id, username = %key.username, user = %operator.username, "key issued in the console");
    let html = ShownOnce {
        layout: operator.layout(None),
        title: "New key",
        site_id: id.to_string(),
        facts: vec![("username", key.username, "new-username")],
        secrets: vec![("password", key.password, "new-password")],
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

/// The site page's zero-knowledge policy form.
#[derive(Deserialize)]
pub struct ZkForm {
    zk: String,
}

/// Changes the site's zero-knowledge policy (docs/zk.md#zero-knowledge-proofs), as
/// `site update --zk` does.
pub async fn set_zk(
    State(state): State<ConsoleState>,
    Path(site): Path<String>,
    Action { operator, form }: Action<ZkForm>,
) -> Result<Response, ConsoleError> {
    let id = site_id(&site)?;
    let zk =
        ZkPolicy::parse(form.zk.trim()).map_err(|e| ConsoleError::BadRequest(e.to_string()))?;
    let update = SiteUpdate {
        zk: Some(zk),
        ..Default::default()
    };
    state.services.sites().update(id, update).await?;
    tracing::info!(site_id = %id, zk = %zk, user = %operator.username, "zero-knowledge policy changed in the console");
    Ok(see_other(&format!("/admin/sites/{id}?notice=zk-changed")))
}

#[derive(Deserialize)]
pub struct Confirmed {
    confirm: Option<String>,
}

impl Confirmed {
    /// Irreversible actions need the form's box ticked (the browser asks for it first).
    pub fn check(&self) -> Result<(), ConsoleError> {
        match self.confirm.as_deref() {
            Some("yes") => Ok(()),
            _ => Err(ConsoleError::BadRequest(
                "Tick the box to confirm; nothing was changed.".into(),
            )),
        }
    }
}

pub async fn revoke_key(
    State(state): State<ConsoleState>,
    Path((site, username)): Path<(String, String)>,
    Action { operator, form }: Action<Confirmed>,
) -> Result<Response, ConsoleError> {
    let id = site_id(&site)?;
    form.check()?;
    let notice = match state.services.sites().revoke_key(id, &username).await? {
        Revoked::Now => "key-revoked",
        Revoked::Already => "key-already-revoked",
    };
    tracing::info!(site_id = %id, username = %username, user = %operator.username, "key revoked in the console");
    Ok(see_other(&format!("/admin/sites/{id}?notice={notice}")))
}

pub async fn rotate_secret(
    State(state): State<ConsoleState>,
    Path(site): Path<String>,
    Action { operator, form }: Action<Confirmed>,
) -> Result<Response, ConsoleError> {
    let id = site_id(&site)?;
    form.check()?;
    let rotated = state.services.sites().rotate_webhook_secret(id).await?;
    tracing::info!(site_id = %id, user = %operator.username, "webhook secret rotated in the console");
    let html = ShownOnce {
        layout: operator.layout(None),
        title: "New webhook secret",
        site_id: id.to_string(),
        facts: vec![(
            "note",
            "For 24 hours deliveries carry signatures by both the new and the old secret.".into(),
            "rotation-note",
        )],
        secrets: vec![(
            "webhookSecret",
            rotated.webhook_secret,
            "new-webhook-secret",
        )],
    }
    .render();
    Ok(page(StatusCode::OK, html))
}
