//! Finding and withdrawing a site's invites (docs/api.md#finding-invites-list, docs/api.md#cancelling-and-erasing-an-invite): list, cancel and erase. Same
//! credentials and ownership rules as reading one invite: another site's invite is 404.

use axum::extract::{FromRequestParts, RawQuery, State};
use axum::http::{request::Parts, StatusCode};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::auth::SiteAuth;
use super::body::ApiPath;
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::invites::InviteStatusRecord;
use super::AppState;
use crate::app::invites::Cancelled;
use crate::domain::listing::ListQueryError;
use crate::domain::{InviteId, ListQuery, Status};
use crate::store::InviteRecord;

/// The list's query parameters, as documented; the handler parses them into a
/// [`ListQuery`] with [`ListQuery::parse`].
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ListParams {
    /// Only invites with this status now (a pending invite past `expires` is `expired`).
    status: Option<Status>,
    /// Only invites created with exactly this customId.
    #[param(rename = "customId", max_length = 128)]
    custom_id: Option<String>,
    /// Invites per page.
    #[param(minimum = 1, maximum = 500, default = 50)]
    limit: Option<u16>,
    /// `nextCursor` of the previous page (opaque: 32 base64url characters, a position
    /// in the list); absent for the first page.
    // Its exact syntax is added with the identifiers' (`openapi_common`).
    cursor: Option<String>,
}

/// A list request's query, parsed; any bad parameter is 400.
pub struct ListRequest(pub ListQuery);

impl<S: Send + Sync> FromRequestParts<S> for ListRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let RawQuery(query) = RawQuery::from_request_parts(parts, state)
            .await
            .map_err(|_| ErrorCode::InvalidPath)?;
        let parsed = ListQuery::parse(query.as_deref().unwrap_or("")).map_err(|e| match e {
            ListQueryError::Status => ErrorCode::InvalidStatusFilter,
            ListQueryError::CustomIdTooLong => ErrorCode::CustomIdTooLong,
            ListQueryError::Limit => ErrorCode::InvalidLimit,
            ListQueryError::Cursor => ErrorCode::InvalidCursor,
            ListQueryError::Repeated => ErrorCode::RepeatedParameter,
        })?;
        Ok(Self(parsed))
    }
}

/// One invite in a list.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteListItem {
    /// Unique identifier of the invite.
    pub invite_id: String,
    /// URL of the verification gateway for this invite.
    pub url: String,
    pub status: Status,
    /// The identifier the client supplied at creation; null when none was.
    #[schema(required = true)]
    pub custom_id: Option<String>,
    /// Unix timestamp in seconds of the creation.
    #[schema(format = Int64)]
    pub created: i64,
    /// Unix timestamp in seconds: 24 hours after creation.
    #[schema(format = Int64)]
    pub expires: i64,
}

/// A page of invites, newest first.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteList {
    pub data: Vec<InviteListItem>,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(required = true)]
    pub next_cursor: Option<String>,
}

impl InviteListItem {
    fn of(record: InviteRecord, state: &AppState, now: i64) -> Self {
        Self {
            url: state.gateway_url(&record.id),
            status: record.status_at(now),
            invite_id: record.id.to_string(),
            custom_id: record.custom_id,
            created: record.created_at,
            expires: record.expires_at,
        }
    }
}

/// List invites
///
/// The site's invites, newest first (by creation time, then inviteId), a page at a time.
/// `status` is decided now, as reading an invite decides it; `status` and `customId`
/// filter exactly. Follow `nextCursor` until it is null: every invite is listed exactly
/// once, however many are created meanwhile.
#[utoipa::path(
    get,
    path = "/v1/website/{siteId}/invite",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ListParams,
    ),
    responses(
        (status = 200, description = "A page of invites", body = InviteList),
        (status = 400, description = "siteId is not a UUID, or a bad query parameter", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn list_invites(
    State(state): State<AppState>,
    auth: SiteAuth,
    ListRequest(query): ListRequest,
) -> Result<Json<InviteList>, ApiError> {
    let now = state.clock.now();
    let page = state
        .services
        .invites()
        .list(auth.site_id, &query, now)
        .await?;
    Ok(Json(InviteList {
        data: page
            .invites
            .into_iter()
            .map(|r| InviteListItem::of(r, &state, now))
            .collect(),
        next_cursor: page.next.map(|c| c.encode()),
    }))
}

/// The invite a path names; one that cannot exist is not found.
fn invite_id(path: ApiPath<(String, String)>) -> Result<InviteId, ApiError> {
    let ApiPath((_, invite_id)) = path;
    InviteId::parse(&invite_id).ok_or_else(|| ErrorCode::InviteNotFound.into())
}

/// Cancel invite
///
/// A pending invite becomes `expired` at once (its `expires` is unchanged) and the site's
/// webhook receives `invite.expired`; an expired one stays as it is. A verified invite
/// cannot be cancelled.
#[utoipa::path(
    post,
    path = "/v1/website/{siteId}/invite/{inviteId}/cancel",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ("inviteId" = String, Path, description = "Identifier of the invite"),
    ),
    responses(
        (status = 200, description = "The invite's status record, now expired", body = InviteStatusRecord),
        (status = 400, description = "siteId is not a UUID", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 404, description = "No such invite for this site", body = ErrorBody),
        (status = 409, description = "The invite is verified", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn cancel_invite(
    State(state): State<AppState>,
    auth: SiteAuth,
    path: ApiPath<(String, String)>,
) -> Result<Json<InviteStatusRecord>, ApiError> {
    let id = invite_id(path)?;
    let cancelled = state.services.invites().cancel(auth.site_id, &id).await?;
    let record = match cancelled {
        Cancelled::Now(record) => {
            tracing::info!(invite_id = %record.id, "invite cancelled");
            record
        }
        Cancelled::AlreadyExpired(record) => record,
    };
    Ok(Json(InviteStatusRecord::of(record, &state)))
}

/// Erase invite
///
/// Erases the invite and everything stored about it: its webhook events (delivered or
/// not) and their delivery log, its presentation requests and its Idempotency-Key.
/// Afterwards the invite is 404 here and on its gateway page, and no further webhook is
/// sent for it.
#[utoipa::path(
    delete,
    path = "/v1/website/{siteId}/invite/{inviteId}",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ("inviteId" = String, Path, description = "Identifier of the invite"),
    ),
    responses(
        (status = 204, description = "Erased"),
        (status = 400, description = "siteId is not a UUID", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 404, description = "No such invite for this site", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn erase_invite(
    State(state): State<AppState>,
    auth: SiteAuth,
    path: ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let id = invite_id(path)?;
    state.services.invites().erase(auth.site_id, &id).await?;
    tracing::info!(invite_id = %id, "invite erased");
    Ok(StatusCode::NO_CONTENT)
}
