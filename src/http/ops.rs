//! Routes for operators and tooling: health and the API description.

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::error::{ApiError, ErrorBody};
use super::AppState;

#[derive(Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok` when the answer is 200.
    pub status: &'static str,
}

/// Health check
///
/// 200 while the server accepts requests and its database accepts a write.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses(
        (status = 200, description = "Serving", body = Health),
        (status = 503, description = "The database does not answer or refuses writes", body = ErrorBody),
    )
)]
pub async fn healthz(State(state): State<AppState>) -> Result<Json<Health>, ApiError> {
    state.reads.ping().await.map_err(ApiError::Unavailable)?;
    Ok(Json(Health { status: "ok" }))
}

/// OpenAPI document
///
/// This document: every public route, its schemas and the error catalogue.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    tag = "operations",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json"))
)]
pub async fn openapi(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        state.openapi_json.clone(),
    )
        .into_response()
}
