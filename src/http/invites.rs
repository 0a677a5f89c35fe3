//! The seed specification's two endpoints, create (idempotent with a key, interface §8)
//! and get.

use axum::extract::{FromRequestParts, State};
use axum::http::{request::Parts, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::auth::SiteAuth;
use super::body::{ApiPath, RawJsonBody, RequestBody};
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::domain::invite::{self, CustomIdError};
use crate::domain::{BodyDigest, CustomId, IdempotencyKey, IdempotentRequest, InviteId, Status};
use crate::store::{CreateOutcome, InviteRecord, NewInvite};

/// The request header that makes a create idempotent.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// The response header that marks a replayed create.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The request's `Idempotency-Key`, if it has one; a malformed or repeated one is 400.
pub struct IdempotencyHeader(pub Option<IdempotencyKey>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyHeader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let mut values = parts.headers.get_all(&IDEMPOTENCY_KEY).iter();
        let Some(value) = values.next() else {
            return Ok(Self(None));
        };
        if values.next().is_some() {
            return Err(ErrorCode::InvalidIdempotencyKey.into());
        }
        IdempotencyKey::parse(value.as_bytes())
            .map(|key| Self(Some(key)))
            .map_err(|_| ErrorCode::InvalidIdempotencyKey.into())
    }
}

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
    #[schema(required = true)]
    pub custom_id: Option<String>,
}

impl Invite {
    fn of(record: &InviteRecord, state: &AppState) -> Self {
        Self {
            url: state.gateway_url(&record.id),
            invite_id: record.id.to_string(),
            expires: record.expires_at,
        }
    }
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
///
/// With an `Idempotency-Key`, a repeat within 24 hours with the same key and the same body
/// (byte for byte) answers the first 200 again, marked `Idempotent-Replayed: true`, and
/// creates nothing; the same key with another body is 422. Repeats sent at once wait for
/// the first and replay it. Only successful creates are remembered, and erasing the invite
/// forgets its key.
#[utoipa::path(
    post,
    path = "/v1/website/{siteId}/invite",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, min_length = 1, max_length = 255,
            pattern = "^[!-~]([ -~]*[!-~])?$",
            description = "Makes the create safe to retry: 1 to 255 printable ASCII characters (spaces only inside), unique per intended invite"),
    ),
    request_body(content = CreateInviteRequest, description = "Optional: may be absent, empty or `{}`", content_type = "application/json"),
    responses(
        (status = 200, description = "The invite (or, for a repeated Idempotency-Key, the invite the first request made)", body = Invite,
            headers(("Idempotent-Replayed" = String, description = "`true` when this answer repeats an earlier create with the same Idempotency-Key; absent otherwise"))),
        (status = 400, description = "Malformed or invalid request or Idempotency-Key", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 413, description = "Body larger than 64 KiB", body = ErrorBody),
        (status = 422, description = "The Idempotency-Key was used in the last 24 hours with another body", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn create_invite(
    State(state): State<AppState>,
    auth: SiteAuth,
    IdempotencyHeader(key): IdempotencyHeader,
    body: RawJsonBody<CreateInviteRequest>,
) -> Result<Response, ApiError> {
    let key = key.map(|key| IdempotentRequest {
        key,
        body: BodyDigest::of(&body.raw),
    });
    let custom_id = body
        .value
        .custom_id
        .map(CustomId::parse)
        .transpose()
        .map_err(|CustomIdError::TooLong| ErrorCode::CustomIdTooLong)?;
    // One reading of the clock for both, so the id's order and `created` agree.
    let now_millis = state.clock.now_millis();
    let now = now_millis.seconds();
    let new = NewInvite {
        id: InviteId::generate(now_millis.get()),
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
    match state.store.create_invite(new, key).await? {
        CreateOutcome::Created => Ok(Json(invite).into_response()),
        CreateOutcome::Replayed(first) => Ok((
            [(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"))],
            Json(Invite::of(&first, &state)),
        )
            .into_response()),
        CreateOutcome::KeyConflict => Err(ErrorCode::IdempotencyKeyReused.into()),
    }
}

/// utoipa marks every body it documents as required, but create's is optional (absent,
/// empty or an object); says so in `api`.
pub fn document_optional_create_body(api: &mut utoipa::openapi::OpenApi) {
    let create = api
        .paths
        .paths
        .get_mut("/v1/website/{siteId}/invite")
        .and_then(|item| item.post.as_mut())
        .and_then(|op| op.request_body.as_mut());
    if let Some(body) = create {
        body.required = Some(utoipa::openapi::Required::False);
    }
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
