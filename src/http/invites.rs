//! The seed specification's two endpoints, create (idempotent with a key, docs/api.md#retrying-a-create-safely-idempotency-key)
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
use crate::app::invites::Created;
use crate::domain::invite::{self, CustomIdError};
use crate::domain::{BodyDigest, CustomId, IdempotencyKey, IdempotentRequest, InviteId, Status};
use crate::store::InviteRecord;

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

/// A status record written straight from the stored record, with no owned copies of its
/// strings: the status read is the API's hottest path. Serializes as
/// [`InviteStatusRecord`] does, field for field.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusRecordView<'a> {
    invite_id: &'a str,
    url: invite::GatewayUrl<'a>,
    status: Status,
    custom_id: Option<&'a str>,
}

impl<'a> StatusRecordView<'a> {
    fn of(record: &'a InviteRecord, public_url: &'a str, now: crate::clock::UnixTime) -> Self {
        Self {
            invite_id: record.id.as_str(),
            url: invite::GatewayUrl {
                public_url,
                id: &record.id,
            },
            status: record.status_at(now),
            custom_id: record.custom_id.as_deref(),
        }
    }
}

/// `value` as a JSON answer, as axum's `Json` makes it, but into a buffer sized for a
/// status record in one allocation.
fn json_answer(value: &impl Serialize) -> Response {
    let mut buf = Vec::with_capacity(256);
    match serde_json::to_writer(&mut buf, value) {
        Ok(()) => (
            [(
                axum::http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            buf,
        )
            .into_response(),
        Err(e) => ApiError::Internal(Box::new(e)).into_response(),
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
    let created = state
        .services
        .invites()
        .create(auth.site_id, custom_id, key)
        .await?;
    match created {
        Created::New { id, expires_at } => Ok(Json(Invite {
            url: state.gateway_url(&id),
            invite_id: id.into_string(),
            expires: expires_at,
        })
        .into_response()),
        Created::Replayed(first) => Ok((
            [(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"))],
            Json(Invite::of(&first, &state)),
        )
            .into_response()),
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
) -> Result<Response, ApiError> {
    let ApiPath((_, invite_id)) = path;
    let id = InviteId::parse(&invite_id).ok_or(ErrorCode::InviteNotFound)?;
    let record = state
        .reads
        .invite(auth.site_id, &id)
        .await?
        .ok_or(ErrorCode::InviteNotFound)?;
    let now = state.clock.now();
    Ok(json_answer(&[StatusRecordView::of(
        &record,
        &state.public_url,
        now,
    )]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::SiteId;

    fn record(custom_id: Option<&str>, expires_at: i64) -> InviteRecord {
        InviteRecord {
            id: InviteId::parse("AAAAAAAAAAAAAAAAAAAAAA").expect("a valid id"),
            site_id: SiteId::parse("6f1c2b9e-0d4a-4c5e-9b7a-3e2f1d0c9b8a").expect("a valid site"),
            custom_id: custom_id.map(str::to_owned),
            stored_status: Status::Pending,
            created_at: 0,
            expires_at,
            method: None,
        }
    }

    #[test]
    fn the_status_view_serializes_as_the_status_record() {
        let public_url = "https://age.example/base";
        for (custom_id, expires_at) in [
            (None, 100),
            (Some("user-1"), 100),
            (Some("a \"quoted\" \\ id\n\t\u{1} 😀 </script>"), 100),
            (Some("expired"), 10),
        ] {
            let record = record(custom_id, expires_at);
            let view = serde_json::to_string(&[StatusRecordView::of(&record, public_url, 50)]);
            let owned = serde_json::to_string(&[InviteStatusRecord {
                invite_id: record.id.to_string(),
                url: invite::gateway_url(public_url, &record.id),
                status: record.status_at(50),
                custom_id: record.custom_id.clone(),
            }]);
            assert_eq!(view.expect("serializes"), owned.expect("serializes"));
        }
    }
}
