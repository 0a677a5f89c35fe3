//! The overview: invites per day for the last 30 days (and the verified ones by
//! credential status), and the webhook backlog.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::chart::{self, DayCounts};
use super::session::{NoticeQuery, Operator};
use super::{page, ConsoleError, ConsoleState, Layout};
use crate::store::console::day_of;

/// Days the chart shows, today included.
pub const DAYS: i64 = 30;

#[derive(Template)]
#[template(path = "console/overview.html")]
struct OverviewPage {
    layout: Layout,
    chart: String,
    /// Verified invites by credential status.
    status_chart: String,
    /// Newest first, for the tables.
    days: Vec<DayCounts>,
    methods: Vec<&'static str>,
    statuses: [&'static str; chart::STATUS_COLUMNS],
    created: u64,
    verified: u64,
    expired: u64,
    backlog: u64,
    sites: usize,
}

pub async fn show(
    State(state): State<ConsoleState>,
    operator: Operator,
    Query(query): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    let today = day_of(state.clock.now());
    let range = today - DAYS + 1..today + 1;
    let overview = state.services.overview();
    let tallies = overview.tallies(range.clone()).await?;
    let days = chart::days(&tallies, range);
    let backlog = overview.webhook_backlog().await?;
    let sites = overview.site_count().await?;
    let html = OverviewPage {
        layout: operator.layout(query.notice.as_deref()),
        chart: chart::svg(&days),
        status_chart: chart::status_svg(&days),
        created: days.iter().map(|d| d.created).sum(),
        verified: days.iter().map(DayCounts::verified_total).sum(),
        expired: days.iter().map(|d| d.expired).sum(),
        days: days.into_iter().rev().collect(),
        methods: chart::methods().iter().map(|m| m.as_str()).collect(),
        statuses: chart::status_names(),
        backlog,
        sites,
    }
    .render();
    Ok(page(StatusCode::OK, html))
}
