//! The seed specification's two endpoints.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::auth::SiteAuth;
use super::body::{ApiPath, JsonBody, RequestBody};
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::domain::invite::{self, CustomIdError};
use crate::domain::{CustomId, InviteId, Status};
use crate::store::{InviteRecord, NewInvite};

/// Create request body.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateInviteRequest {
    /// The client's identifier for the user or verification session; at most 128
    /// characters (Unicode scalar values).
    #[schema(max_length = 128)]
    #[serde(default)]
    pub custom_id: Option<String>,
}

impl RequestBody for CreateInviteRequest {
    const TYPE_ERROR: ErrorCode = ErrorCode::CustomIdNotString;
}

/// The invite returned by create.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invite {
    /// Unique identifier of the invite.
    pub invite_id: String,
    /// URL of the verification gateway for this invite.
    pub url: String,
    /// Unix timestamp in seconds: 24 hours after creation.
    #[schema(format = Int32)]
    pub expires: i64,
}

/// An invite status record.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteStatusRecord {
    /// Unique identifier of the invite.
    pub invite_id: String,
    /// URL of the verification gateway for this invite.
    pub url: String,
    pub status: Status,
    /// The identifier the client supplied at creation; null when none was.
    pub custom_id: Option<String>,
}

impl InviteStatusRecord {
    pub fn of(record: InviteRecord, state: &AppState) -> Self {
        let now = state.clock.now();
        Self {
            url: state.gateway_url(&record.id),
            status: record.status_at(now),
            invite_id: record.id.to_string(),
            custom_id: record.custom_id,
        }
    }
}

/// Create invite
///
/// Creates a verification invite for the site. A 200 means the invite is durably stored.
#[utoipa::path(
    post,
    path = "/v1/website/{siteId}/invite",
    tag = "invites",
    params(("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration")),
    request_body(content = CreateInviteRequest, description = "May be empty or `{}`", content_type = "application/json"),
    responses(
        (status = 200, description = "The invite", body = Invite),
        (status = 400, description = "Malformed or invalid request", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 413, description = "Body larger than 64 KiB", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn create_invite(
    State(state): State<AppState>,
    auth: SiteAuth,
    JsonBody(body): JsonBody<CreateInviteRequest>,
) -> Result<Json<Invite>, ApiError> {
    let custom_id = body
        .custom_id
        .map(CustomId::parse)
        .transpose()
        .map_err(|CustomIdError::TooLong| ErrorCode::CustomIdTooLong)?;
    let now = state.clock.now();
    let new = NewInvite {
        id: InviteId::generate(),
        site_id: auth.site_id,
        custom_id,
        created_at: now,
        expires_at: invite::expires_at(now),
    };
    let invite = Invite {
        url: state.gateway_url(&new.id),
        invite_id: new.id.to_string(),
        expires: new.expires_at,
    };
    state.store.insert_invite(new).await?;
    Ok(Json(invite))
}

/// Get invite status
///
/// Reads one invite of the site. The body is an array holding one status record.
#[utoipa::path(
    get,
    path = "/v1/website/{siteId}/invite/{inviteId}",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ("inviteId" = String, Path, description = "Identifier of the invite"),
    ),
    responses(
        (status = 200, description = "The invite's status record, in an array", body = [InviteStatusRecord]),
        (status = 400, description = "siteId is not a UUID", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 404, description = "No such invite for this site", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn get_invite(
    State(state): State<AppState>,
    auth: SiteAuth,
    path: ApiPath<(String, String)>,
) -> Result<Json<[InviteStatusRecord; 1]>, ApiError> {
    let ApiPath((_, invite_id)) = path;
    let id = InviteId::parse(&invite_id).ok_or(ErrorCode::InviteNotFound)?;
    let record = state
        .store
        .invite(auth.site_id, &id)
        .await?
        .ok_or(ErrorCode::InviteNotFound)?;
    Ok(Json([InviteStatusRecord::of(record, &state)]))
}
