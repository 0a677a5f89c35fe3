//! Per-request metrics: a middleware that counts every answer by method, route template
//! and status, times it, and counts database faults and created invites. Handlers stay
//! free of bookkeeping.

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

use super::AppState;
use crate::metrics::{RequestLabels, RouteLabels};

/// Set on a response whose error came from the database, for `database_errors`.
#[derive(Clone, Copy, Debug)]
pub struct DatabaseFault;

/// The route that creates invites, whose 200s (but not idempotent replays) count.
const CREATE_ROUTE: &str = "/v1/website/{siteId}/invite";

pub async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    // The template, not the path: no ids in labels, and a bounded label set.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let response = next.run(request).await;
    let metrics = &state.metrics;
    let status = response.status().as_u16();
    metrics
        .request_seconds
        .get_or_create(&RouteLabels {
            method: method.to_string(),
            route: route.clone(),
        })
        .observe(started.elapsed().as_secs_f64());
    if response.extensions().get::<DatabaseFault>().is_some() {
        metrics.database_errors.inc();
    }
    if method == Method::POST
        && route == CREATE_ROUTE
        && status == 200
        && !response.headers().contains_key("idempotent-replayed")
    {
        metrics.invites_created.inc();
    }
    metrics
        .requests
        .get_or_create(&RequestLabels {
            method: method.to_string(),
            route,
            status,
        })
        .inc();
    response
}
