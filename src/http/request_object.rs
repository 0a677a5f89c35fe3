//! The request object of a signed request by reference
//! (docs/wallets.md#signed-requests-by-reference): `GET` or `POST` on the `request_uri`
//! of the pending page's by-reference link. Opening and signing it is the application
//! layer's ([`crate::app::wallet_requests`]); this module takes it off HTTP.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::app::wallet_requests::FetchError;
use crate::dcapi::by_reference::{MetadataError, Negotiated};
use crate::domain::InviteId;

/// Request object (GET)
///
/// The signed request object (a JWS, `application/oauth-authz-req+jwt`) of the invite's
/// live request named `requestId`, offering what every wallet may answer.
#[utoipa::path(
    get,
    path = "/gateway/{inviteId}/request/{requestId}",
    tag = "gateway",
    params(
        ("inviteId" = String, Path, description = "Identifier of the invite"),
        ("requestId" = String, Path, description = "Identifier of the request, from the by-reference link"),
    ),
    responses(
        (status = 200, description = "The signed request object", content_type = "application/oauth-authz-req+jwt", body = String),
        (status = 404, description = "No such invite or request, or the request is no longer live", body = ErrorBody),
        (status = 409, description = "The invite has expired", body = ErrorBody),
    )
)]
pub async fn fetch(
    State(state): State<AppState>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    answer(&state, path, Ok(Negotiated::unknown_wallet())).await
}

/// Request object (POST, `request_uri_method=post`)
///
/// As the GET, shaped to the wallet's posted metadata: form fields `wallet_metadata`
/// (a JSON object, or its members as separate fields) and `wallet_nonce`, echoed in the
/// request object. Zero-knowledge proofs are offered only to a wallet whose
/// `vp_formats_supported` names `mso_mdoc_zk`; only the encryption methods in common.
#[utoipa::path(
    post,
    path = "/gateway/{inviteId}/request/{requestId}",
    tag = "gateway",
    params(
        ("inviteId" = String, Path, description = "Identifier of the invite"),
        ("requestId" = String, Path, description = "Identifier of the request, from the by-reference link"),
    ),
    request_body(content = String, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "The signed request object", content_type = "application/oauth-authz-req+jwt", body = String),
        (status = 400, description = "`{\"error\": \"invalid_request\", \"error_description\"}`: wallet_metadata is not a JSON object, or no encryption method is in common"),
        (status = 404, description = "No such invite or request, or the request is no longer live", body = ErrorBody),
        (status = 409, description = "The invite has expired", body = ErrorBody),
        (status = 413, description = "Body larger than 65536 bytes", body = ErrorBody),
    )
)]
pub async fn fetch_posted(
    State(state): State<AppState>,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return ApiError::from(ErrorCode::BodyTooLarge).into_response()
        }
        Err(_) => return ApiError::from(ErrorCode::BodyTimeout).into_response(),
    };
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    answer(&state, path, Negotiated::from_form(&fields)).await
}

async fn answer(
    state: &AppState,
    path: Result<Path<(String, String)>, PathRejection>,
    negotiated: Result<Negotiated, MetadataError>,
) -> Response {
    let Some((id, request_id)) = path
        .ok()
        .and_then(|Path((id, request_id))| Some((InviteId::parse(&id)?, request_id)))
    else {
        return ApiError::from(ErrorCode::InviteNotFound).into_response();
    };
    match state
        .wallet_requests()
        .request_object(&id, &request_id, negotiated)
        .await
    {
        Ok(jws) => (
            [
                (header::CONTENT_TYPE, "application/oauth-authz-req+jwt"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            jws,
        )
            .into_response(),
        Err(FetchError::NoSuchInvite) => ApiError::from(ErrorCode::InviteNotFound).into_response(),
        Err(FetchError::NoSuchRequest) => {
            ApiError::from(ErrorCode::RequestNotFound).into_response()
        }
        Err(FetchError::Expired) => ApiError::from(ErrorCode::InviteExpired).into_response(),
        Err(FetchError::Metadata(why)) => (
            StatusCode::BAD_REQUEST,
            [(header::CACHE_CONTROL, "no-store")],
            Json(serde_json::json!({
                "error": "invalid_request",
                "error_description": why.to_string(),
            })),
        )
            .into_response(),
        Err(FetchError::Store(e)) => ApiError::from(e).into_response(),
    }
}
