//! The verification provider's report: the only way an invite becomes verified
//! (besides a sandbox site's test control).

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::auth::VerifierAuth;
use super::body::{ApiPath, JsonBody, RequestBody};
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::invites::InviteStatusRecord;
use super::AppState;
use crate::app::invites::Marked;
use crate::domain::{InviteId, VerifyMethod};

/// The provider's verdict. Only `verified` exists.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
pub struct VerifierReport {
    /// Must be `"verified"`.
    // Read leniently, so a missing or mistyped outcome is 40008, not a JSON error;
    // documented as what is accepted.
    #[schema(value_type = Outcome, required = true)]
    #[serde(default)]
    pub outcome: Option<String>,
}

/// The only outcome a provider reports.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Verified,
}

impl RequestBody for VerifierReport {
    const TYPE_ERROR: ErrorCode = ErrorCode::InvalidOutcome;
}

/// Report a verification
///
/// Moves a pending invite to `verified`. Reporting an already verified invite again is
/// a success; an expired invite cannot be verified.
#[utoipa::path(
    post,
    path = "/v1/verifier/invite/{inviteId}",
    tag = "verifier",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    request_body(content = VerifierReport, description = "Required: an empty body or `{}` is 400", content_type = "application/json"),
    responses(
        (status = 200, description = "The invite's status record", body = InviteStatusRecord),
        (status = 400, description = "outcome is missing or not `verified`", body = ErrorBody),
        (status = 401, description = "Missing or wrong bearer token, or no token configured", body = ErrorBody),
        (status = 404, description = "No such invite", body = ErrorBody),
        (status = 409, description = "The invite has expired", body = ErrorBody),
    ),
    security(("verifierToken" = []))
)]
pub async fn report_verification(
    State(state): State<AppState>,
    _: VerifierAuth,
    ApiPath(invite_id): ApiPath<String>,
    JsonBody(report): JsonBody<VerifierReport>,
) -> Result<Json<InviteStatusRecord>, ApiError> {
    if report.outcome.as_deref() != Some("verified") {
        return Err(ErrorCode::InvalidOutcome.into());
    }
    let id = InviteId::parse(&invite_id).ok_or(ErrorCode::InviteNotFound)?;
    let (Marked::Now(record) | Marked::Already(record)) = state
        .marking()
        .mark_verified(&id, VerifyMethod::Verifier)
        .await?;
    Ok(Json(InviteStatusRecord::of(record, &state)))
}
