//! A site's invites: the list (the API's own listing: the same query parser, the same
//! store call, the same cursor), one invite with its changes, webhook events and
//! attempts, and the actions on it: cancel and erase (the API's operations in
//! `app::invites`), and redelivering one of its events (the CLI's).

use askama::Template;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::session::{Action, NoFields, NoticeQuery, Operator};
use super::sites::{load_site, site_id, Confirmed};
use super::{page, see_other, when, ConsoleError, ConsoleState, Layout};
use crate::app::invites::{Cancelled, Detail};
use crate::clock::UnixMillis;
use crate::domain::invite::gateway_url;
use crate::domain::webhook::EventId;
use crate::domain::{InviteId, ListQuery, Status};
use crate::store::{EventRecord, InviteRecord, SiteRecord};

#[derive(Template)]
#[template(path = "console/invites.html")]
struct InvitesPage {
    layout: Layout,
    site: SiteRecord,
    rows: Vec<InviteRow>,
    status: String,
    custom_id: String,
    /// The query of the next page, when there is one.
    next: Option<String>,
    paged: bool,
}

struct InviteRow {
    id: String,
    status: &'static str,
    custom_id: Option<String>,
    created: String,
    expires: String,
}

#[derive(Template)]
#[template(path = "console/invite.html")]
struct InvitePage<'a> {
    layout: Layout,
    csrf: &'a str,
    site: SiteRecord,
    id: String,
    url: String,
    status: &'static str,
    pending: bool,
    custom_id: Option<String>,
    /// (what, when)
    changes: Vec<(String, String)>,
    events: Vec<EventView>,
    /// The receipt (docs/evidence.md#receipts), for a verified invite that has one.
    receipt: Option<ReceiptView>,
}

/// What the invite page shows of a verification receipt (docs/evidence.md#receipts).
pub struct ReceiptView {
    pub jws: String,
}

struct EventView {
    id: String,
    kind: &'static str,
    occurred: String,
    state: &'static str,
    next: Option<String>,
    attempts: Vec<AttemptView>,
}

struct AttemptView {
    n: usize,
    started: String,
    duration_ms: i64,
    status: String,
    error: String,
}

fn millis(t: UnixMillis) -> String {
    when(t.seconds())
}

impl EventView {
    fn of(e: EventRecord) -> Self {
        Self {
            id: e.event_id.as_str().to_owned(),
            kind: e.event_type.as_str(),
            occurred: when(e.occurred_at),
            state: e.state.as_str(),
            next: e.next_attempt.map(millis),
            attempts: e
                .attempts
                .into_iter()
                .map(|a| AttemptView {
                    n: a.attempt,
                    started: millis(a.started),
                    duration_ms: a.duration_ms,
                    status: a.http_status.map_or_else(|| "—".into(), |s| s.to_string()),
                    error: a.error.unwrap_or_else(|| "—".into()),
                })
                .collect(),
        }
    }
}

/// The list's query as the API reads it; the filter form's empty fields mean "any".
fn list_query(raw: Option<&str>) -> Result<(ListQuery, String), ConsoleError> {
    let kept: Vec<(String, String)> = url::form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .filter(|(name, value)| name != "notice" && !value.is_empty())
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&kept)
        .finish();
    let parsed = ListQuery::parse(&query).map_err(|e| ConsoleError::BadRequest(e.to_string()))?;
    Ok((parsed, query))
}

pub async fn list(
    State(state): State<ConsoleState>,
    operator: Operator,
    Path(site): Path<String>,
    RawQuery(raw): RawQuery,
    Query(notice): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let (query, _) = list_query(raw.as_deref())?;
    let now = state.clock.now();
    let found = state.services.invites().list(site.id, &query, now).await?;
    let status = query.status.map(Status::as_str).unwrap_or("").to_owned();
    let custom_id = query
        .custom_id
        .as_ref()
        .map(|c| c.as_str().to_owned())
        .unwrap_or_default();
    let next = found.next.map(|cursor| {
        let mut next = url::form_urlencoded::Serializer::new(String::new());
        if !status.is_empty() {
            next.append_pair("status", &status);
        }
        if query.custom_id.is_some() {
            next.append_pair("customId", &custom_id);
        }
        if query.limit != crate::domain::PageSize::DEFAULT {
            next.append_pair("limit", &query.limit.get().to_string());
        }
        next.append_pair("cursor", &cursor.encode());
        next.finish()
    });
    let rows = found
        .invites
        .into_iter()
        .map(|r: InviteRecord| InviteRow {
            id: r.id.to_string(),
            status: r.status_at(now).as_str(),
            custom_id: r.custom_id.clone(),
            created: when(r.created_at),
            expires: when(r.expires_at),
        })
        .collect();
    let html = InvitesPage {
        layout: operator.layout(notice.notice.as_deref()),
        site,
        rows,
        status,
        custom_id,
        next,
        paged: query.after.is_some(),
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

fn invite_id(raw: &str) -> Result<InviteId, ConsoleError> {
    InviteId::parse(raw).ok_or(ConsoleError::NotFound("This site has no such invite."))
}

pub async fn show(
    State(state): State<ConsoleState>,
    operator: Operator,
    Path((site, invite)): Path<(String, String)>,
    Query(notice): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let id = invite_id(&invite)?;
    let Detail {
        detail,
        events,
        receipt,
    } = state
        .services
        .invites()
        .detail(site.id, &id)
        .await?
        .ok_or(ConsoleError::NotFound("This site has no such invite."))?;
    let receipt = receipt.map(|jws| ReceiptView { jws });
    let now = state.clock.now();
    let invite = &detail.invite;
    let status = invite.status_at(now);
    let mut changes = vec![("Created".to_owned(), when(invite.created_at))];
    if let (Some(at), Some(method)) = (detail.verified_at, invite.method) {
        changes.push((format!("Verified ({})", method.as_str()), when(at)));
    }
    match (status, detail.settled_at) {
        (Status::Expired, Some(at)) if at < invite.expires_at => {
            changes.push(("Cancelled (expired)".into(), when(at)))
        }
        (Status::Expired, _) => changes.push(("Expired".into(), when(invite.expires_at))),
        (Status::Pending, _) => changes.push(("Expires".into(), when(invite.expires_at))),
        (Status::Verified, _) => {}
    }
    let html = InvitePage {
        layout: operator.layout(notice.notice.as_deref()),
        csrf: operator.csrf(),
        url: gateway_url(&state.public_url, &id),
        id: id.to_string(),
        status: status.as_str(),
        pending: status == Status::Pending,
        custom_id: invite.custom_id.clone(),
        changes,
        events: events.into_iter().map(EventView::of).collect(),
        receipt,
        site,
    }
    .render();
    Ok(page(StatusCode::OK, html))
}

fn invite_path(site: &SiteRecord, id: &InviteId) -> String {
    format!("/admin/sites/{}/invites/{id}", site.id)
}

/// The API's cancel: a pending invite expires now (its site is told); an expired one
/// stays; a verified one is refused with the API's words.
pub async fn cancel(
    State(state): State<ConsoleState>,
    Path((site, invite)): Path<(String, String)>,
    Action { operator, .. }: Action<NoFields>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let id = invite_id(&invite)?;
    let cancelled = state.services.invites().cancel(site.id, &id).await?;
    let notice = match cancelled {
        Cancelled::Now(_) => {
            tracing::info!(invite_id = %id, user = %operator.username, "invite cancelled in the console");
            "cancelled"
        }
        Cancelled::AlreadyExpired(_) => "already-expired",
    };
    Ok(see_other(&format!(
        "{}?notice={notice}",
        invite_path(&site, &id)
    )))
}

/// The API's erase: the invite and everything stored about it.
pub async fn erase(
    State(state): State<ConsoleState>,
    Path((site, invite)): Path<(String, String)>,
    Action { operator, form }: Action<Confirmed>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let id = invite_id(&invite)?;
    form.check()?;
    state.services.invites().erase(site.id, &id).await?;
    tracing::info!(invite_id = %id, user = %operator.username, "invite erased in the console");
    Ok(see_other(&format!(
        "/admin/sites/{}/invites?notice=erased",
        site.id
    )))
}

/// The CLI's `webhook redeliver`, for an event of this invite only.
pub async fn redeliver(
    State(state): State<ConsoleState>,
    Path((site, invite, event)): Path<(String, String, String)>,
    Action { operator, .. }: Action<NoFields>,
) -> Result<Response, ConsoleError> {
    let site = load_site(&state, site_id(&site)?).await?;
    let id = invite_id(&invite)?;
    let event = EventId::parse(&event).ok_or(ConsoleError::NotFound(
        "This invite has no such webhook event.",
    ))?;
    state
        .services
        .invites()
        .redeliver_event(site.id, &id, &event)
        .await?;
    tracing::info!(event_id = %event, user = %operator.username, "webhook event redelivered from the console");
    Ok(see_other(&format!(
        "{}?notice=redelivered",
        invite_path(&site, &id)
    )))
}
