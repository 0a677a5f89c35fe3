//! Verification receipts over HTTP (docs/evidence.md#receipts, docs/evidence.md#receipt-keys): a site reads the receipt of its
//! verified invite; anyone reads the public keys that check receipts.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Instant;

use super::auth::SiteAuth;
use super::body::ApiPath;
use super::error::{ApiError, ErrorBody, ErrorCode};
use super::AppState;
use crate::domain::InviteId;
use crate::receipt::{VerifyingKeys, KEY_SET_FRESH_FOR};
use crate::store::ReceiptLookup;

/// A verified invite's receipt.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReceiptBody {
    /// Compact JWS (ES256, `typ` `agegate-receipt+jwt`); check it against
    /// `/.well-known/jwks.json`.
    pub receipt: String,
}

/// Get receipt
///
/// The signed receipt of a verified invite: what was proven, how, and under which trust
/// anchor, with no personal data. Pending and expired invites have none (409).
#[utoipa::path(
    get,
    path = "/v1/website/{siteId}/invite/{inviteId}/receipt",
    tag = "invites",
    params(
        ("siteId" = String, Path, format = Uuid, description = "Identifier of the site configuration"),
        ("inviteId" = String, Path, description = "Identifier of the invite"),
    ),
    responses(
        (status = 200, description = "The invite's receipt", body = ReceiptBody),
        (status = 400, description = "siteId is not a UUID", body = ErrorBody),
        (status = 401, description = "Missing or wrong credentials", body = ErrorBody),
        (status = 403, description = "Credentials of another site", body = ErrorBody),
        (status = 404, description = "No such invite for this site", body = ErrorBody),
        (status = 409, description = "The invite is not verified, or was verified before receipts were kept", body = ErrorBody),
    ),
    security(("basicAuth" = []))
)]
pub async fn get_receipt(
    State(state): State<AppState>,
    auth: SiteAuth,
    path: ApiPath<(String, String)>,
) -> Result<Json<ReceiptBody>, ApiError> {
    let ApiPath((_, invite_id)) = path;
    let id = InviteId::parse(&invite_id).ok_or(ErrorCode::InviteNotFound)?;
    match state.services.receipts().receipt(auth.site_id, &id).await? {
        ReceiptLookup::Found(receipt) => Ok(Json(ReceiptBody { receipt })),
        ReceiptLookup::NotFound => Err(ErrorCode::InviteNotFound.into()),
        ReceiptLookup::NotVerified => Err(ErrorCode::InviteNotVerified.into()),
        ReceiptLookup::Missing => Err(ErrorCode::ReceiptMissing.into()),
    }
}

/// The last key set served, so the public, unauthenticated route costs no query per hit,
/// stamped with when its query started: a key published after that start is served
/// within [`KEY_SET_FRESH_FOR`], before anyone signs with it ([`crate::receipt::SIGNS_AFTER`]).
#[derive(Default)]
pub struct JwksCache(Mutex<Option<(Instant, Bytes)>>);

/// Receipt keys
///
/// The JWK Set of every receipt key, current and earlier, so receipts handed out long
/// ago stay verifiable.
#[utoipa::path(
    get,
    path = "/.well-known/jwks.json",
    tag = "operations",
    responses(
        (status = 200, description = "`{\"keys\": [...]}`: EC P-256 keys with kid, use sig, alg ES256", content_type = "application/json"),
        (status = 503, description = "The database cannot be reached", body = ErrorBody),
    )
)]
pub async fn jwks(State(state): State<AppState>) -> Result<Response, ApiError> {
    let cached = {
        let cache = state.jwks.0.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .as_ref()
            .filter(|(at, _)| at.elapsed() < KEY_SET_FRESH_FOR)
            .map(|(_, body)| body.clone())
    };
    let body = match cached {
        Some(body) => body,
        None => {
            let asked = Instant::now();
            let keys = state.services.receipts().keys().await?;
            let body = Bytes::from(VerifyingKeys::of(&keys).to_jwks().to_string());
            // No key yet: the first verification makes one and signs with it at once
            // (`store::transitions::receipt_key`), so an empty set is never reused.
            if !keys.is_empty() {
                *state.jwks.0.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((asked, body.clone()));
            }
            body
        }
    };
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}
