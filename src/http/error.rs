//! Every error the HTTP API can answer, in one place: its status, its stable numeric
//! code and its message. Handlers return `Result<_, ApiError>`; internal causes are
//! logged here and never shown to the client.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::app::invites::InviteError;
use crate::app::verification::{AnswerError, DcApiRefusal};
use crate::dcapi::response::ResponseError;
use crate::store::StoreError;

/// The error body of the seed specification.
#[derive(Debug, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// A stable code from the error catalogue.
    #[schema(format = Int32)]
    pub error: u32,
    /// What went wrong, for a person.
    pub message: String,
}

macro_rules! catalogue {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $status:ident, $message:literal; )*) => {
        /// The error catalogue. Codes are stable: a code is never reused for another meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode { $( $(#[$doc])* $variant, )* }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            pub fn code(self) -> u32 {
                match self { $( ErrorCode::$variant => $code, )* }
            }

            pub fn status(self) -> StatusCode {
                match self { $( ErrorCode::$variant => StatusCode::$status, )* }
            }

            pub fn message(self) -> &'static str {
                match self { $( ErrorCode::$variant => $message, )* }
            }
        }
    };
}

catalogue! {
    MalformedJson = 40001, BAD_REQUEST, "request body is not valid JSON";
    BodyNotObject = 40002, BAD_REQUEST, "request body must be a JSON object";
    CustomIdNotString = 40003, BAD_REQUEST, "customId must be a string";
    CustomIdTooLong = 40004, BAD_REQUEST, "customId must be at most 128 characters";
    UnsupportedContentType = 40005, BAD_REQUEST, "request body must be sent with Content-Type: application/json";
    InvalidSiteId = 40006, BAD_REQUEST, "siteId must be a UUID";
    InvalidPath = 40007, BAD_REQUEST, "the request path is not valid";
    InvalidOutcome = 40008, BAD_REQUEST, "outcome must be \"verified\"";
    /// The message names the reason, e.g. "presentation refused: device signature does not match this request".
    PresentationRefused = 40010, BAD_REQUEST, "presentation refused";
    PresentationStateNotLive = 40011, BAD_REQUEST, "presentation refused: state does not name a live presentation request of this invite";
    PresentationFormInvalid = 40012, BAD_REQUEST, "the body must be application/x-www-form-urlencoded with state and vp_token";
    InvalidIdempotencyKey = 40013, BAD_REQUEST, "Idempotency-Key must be 1 to 255 printable ASCII characters";
    InvalidStatusFilter = 40014, BAD_REQUEST, "status must be pending, verified or expired";
    InvalidLimit = 40015, BAD_REQUEST, "limit must be a whole number from 1 to 500";
    InvalidCursor = 40016, BAD_REQUEST, "cursor is not one this server gave out";
    RepeatedParameter = 40017, BAD_REQUEST, "a query parameter appears more than once";
    /// Digital Credentials API answers (docs/dc-api.md#the-answers); 40010 and 40011 apply to them too.
    DcApiBodyInvalid = 40020, BAD_REQUEST, "the body must be a JSON object with the strings state and protocol, and data";
    /// The message names the protocol.
    DcApiUnknownProtocol = 40021, BAD_REQUEST, "presentation refused: unknown protocol";
    /// The message names the reason, e.g. "presentation refused: the response is not encrypted (dc_api.jwt requires a JWE)".
    DcApiResponseUnreadable = 40022, BAD_REQUEST, "presentation refused: the wallet's response cannot be opened";
    /// The message carries the wallet's error code.
    DcApiWalletError = 40023, BAD_REQUEST, "presentation refused: the wallet answered with an error";
    /// The message names the credential.
    DcApiUnrequestedCredential = 40024, BAD_REQUEST, "presentation refused: the response presents a credential that was not requested";
    MissingCredentials = 40101, UNAUTHORIZED, "credentials are required (HTTP Basic)";
    InvalidCredentials = 40102, UNAUTHORIZED, "the credentials are not valid";
    VerifierUnauthorized = 40103, UNAUTHORIZED, "a valid verifier bearer token is required";
    WrongSite = 40301, FORBIDDEN, "these credentials belong to another site";
    InviteNotFound = 40401, NOT_FOUND, "no such invite";
    RouteNotFound = 40402, NOT_FOUND, "no such route";
    WalletOff = 40403, NOT_FOUND, "no wallet credential this site accepts is enabled on this server";
    /// A request object's URI (docs/wallets.md#signed-requests-by-reference) naming no live request.
    RequestNotFound = 40404, NOT_FOUND, "no such wallet request, or it is no longer live";
    MethodNotAllowed = 40501, METHOD_NOT_ALLOWED, "method not allowed on this route";
    InviteExpired = 40901, CONFLICT, "the invite has expired";
    InviteVerified = 40902, CONFLICT, "the invite is verified and cannot be cancelled";
    InviteNotVerified = 40903, CONFLICT, "the invite is not verified, so it has no receipt";
    ReceiptMissing = 40904, CONFLICT, "the invite was verified before this server kept receipts, so it has none";
    BodyTimeout = 40801, REQUEST_TIMEOUT, "the request body did not arrive in time";
    BodyTooLarge = 41301, PAYLOAD_TOO_LARGE, "request body is larger than 65536 bytes";
    /// On the two wallet answer routes, which take zero-knowledge proofs.
    WalletBodyTooLarge = 41302, PAYLOAD_TOO_LARGE, "request body is larger than 2097152 bytes";
    IdempotencyKeyReused = 42201, UNPROCESSABLE_ENTITY, "this Idempotency-Key was used with a different request body";
    RateLimited = 42901, TOO_MANY_REQUESTS, "too many requests for this site; retry after the time in Retry-After";
    Internal = 50001, INTERNAL_SERVER_ERROR, "internal server error";
    Unavailable = 50301, SERVICE_UNAVAILABLE, "the service is temporarily unavailable";
    /// A zero-knowledge answer (docs/zk.md#zero-knowledge-proofs) while every proof checker and its queue are busy; the invite and its request are unchanged.
    ZkBusy = 50302, SERVICE_UNAVAILABLE, "every zero-knowledge proof check is busy; send the answer again after the time in Retry-After";
}

#[derive(Debug)]
pub enum ApiError {
    /// A client-facing error with nothing more to say than its catalogue entry.
    Client(ErrorCode),
    /// A fault on our side; the cause is logged, the client sees only [`ErrorCode::Internal`].
    Internal(Box<dyn std::error::Error + Send + Sync>),
    /// A dependency (the database) does not answer.
    Unavailable(StoreError),
    /// A wallet's presentation failed a rule of docs/presentations.md#what-is-checked; the message names which.
    Refused(crate::mdoc::PresentationError),
    /// A Digital Credentials API answer could not be taken apart (docs/dc-api.md#the-answers); the
    /// message names why.
    DcApi(DcApiRefusal),
    /// The site's requests exceed `--rate-limit`; a token is back after this long.
    RateLimited { retry_after_secs: u64 },
}

impl ApiError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Client(code) => *code,
            ApiError::Internal(_) => ErrorCode::Internal,
            ApiError::Unavailable(_) => ErrorCode::Unavailable,
            ApiError::Refused(_) => ErrorCode::PresentationRefused,
            ApiError::DcApi(refusal) => dc_api_code(refusal),
            ApiError::RateLimited { .. } => ErrorCode::RateLimited,
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::Refused(reason) => format!("presentation refused: {reason}"),
            ApiError::DcApi(refusal) => format!("presentation refused: {refusal}"),
            other => other.code().message().to_owned(),
        }
    }
}

impl From<DcApiRefusal> for ApiError {
    fn from(refusal: DcApiRefusal) -> Self {
        ApiError::DcApi(refusal)
    }
}

impl From<ErrorCode> for ApiError {
    fn from(code: ErrorCode) -> Self {
        ApiError::Client(code)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Closed | StoreError::Unavailable(_) => ApiError::Unavailable(e),
            // Its credential went with it; the request is answered as without one.
            StoreError::SiteGone => ApiError::Client(ErrorCode::InvalidCredentials),
            other => ApiError::Internal(Box::new(other)),
        }
    }
}

impl From<InviteError> for ApiError {
    fn from(e: InviteError) -> Self {
        match e {
            InviteError::NoSuchInvite => ApiError::Client(ErrorCode::InviteNotFound),
            InviteError::Verified => ApiError::Client(ErrorCode::InviteVerified),
            InviteError::Expired => ApiError::Client(ErrorCode::InviteExpired),
            InviteError::KeyReused => ApiError::Client(ErrorCode::IdempotencyKeyReused),
            InviteError::Store(e) => e.into(),
            // The API names no webhook event.
            e @ InviteError::NoSuchEvent(_) => ApiError::Internal(Box::new(e)),
        }
    }
}

impl From<AnswerError> for ApiError {
    fn from(e: AnswerError) -> Self {
        match e {
            AnswerError::NoSuchInvite => ApiError::Client(ErrorCode::InviteNotFound),
            AnswerError::WalletOff => ApiError::Client(ErrorCode::WalletOff),
            AnswerError::Expired => ApiError::Client(ErrorCode::InviteExpired),
            AnswerError::Malformed => ApiError::Client(ErrorCode::PresentationFormInvalid),
            AnswerError::NotLive => ApiError::Client(ErrorCode::PresentationStateNotLive),
            AnswerError::Refused(reason) => ApiError::Refused(reason),
            AnswerError::DcApi(refusal) => ApiError::DcApi(refusal),
            AnswerError::Busy => ApiError::Client(ErrorCode::ZkBusy),
            e @ AnswerError::CheckPanicked => ApiError::Internal(Box::new(e)),
            AnswerError::Store(e) => e.into(),
        }
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(_: axum::extract::rejection::PathRejection) -> Self {
        ApiError::Client(ErrorCode::InvalidPath)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Client(_)
            | ApiError::Refused(_)
            | ApiError::DcApi(_)
            | ApiError::RateLimited { .. } => {}
            ApiError::Internal(cause) => tracing::error!(error = %cause, "request failed"),
            ApiError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "dependency unavailable")
            }
        }
        let from_database = match &self {
            ApiError::Unavailable(_) => true,
            ApiError::Internal(cause) => cause.is::<StoreError>(),
            _ => false,
        };
        let code = self.code();
        let retry_after = match self {
            ApiError::RateLimited { retry_after_secs } => retry_after_secs,
            _ => 1,
        };
        let mut response = (
            code.status(),
            Json(ErrorBody {
                error: code.code(),
                message: self.message(),
            }),
        )
            .into_response();
        let headers = response.headers_mut();
        match code {
            ErrorCode::MissingCredentials | ErrorCode::InvalidCredentials => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"agegate\""),
                );
            }
            ErrorCode::VerifierUnauthorized => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"agegate-verifier\""),
                );
            }
            ErrorCode::Unavailable | ErrorCode::RateLimited | ErrorCode::ZkBusy => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            }
            _ => {}
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if from_database {
            response
                .extensions_mut()
                .insert(super::observe::DatabaseFault);
        }
        response
    }
}

/// The catalogue as a Markdown table, for the OpenAPI document.
pub fn catalogue_markdown() -> String {
    let mut out = String::from("| error | HTTP status | message |\n|---|---|---|\n");
    for code in ErrorCode::ALL {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            code.code(),
            code.status().as_u16(),
            code.message()
        ));
    }
    out
}

/// The error code of a DC API refusal; shown as "presentation refused: {message}".
fn dc_api_code(refusal: &DcApiRefusal) -> ErrorCode {
    match refusal {
        DcApiRefusal::UnknownProtocol(_) => ErrorCode::DcApiUnknownProtocol,
        DcApiRefusal::Response(ResponseError::WalletError(_)) => ErrorCode::DcApiWalletError,
        DcApiRefusal::Response(_) => ErrorCode::DcApiResponseUnreadable,
        DcApiRefusal::UnrequestedCredential(_) => ErrorCode::DcApiUnrequestedCredential,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_start_with_their_status() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.code()), "duplicate {}", code.code());
            assert_eq!(code.code() / 100, code.status().as_u16() as u32);
        }
    }

    #[test]
    fn an_unavailable_database_is_503_with_the_error_body() {
        let e = ApiError::from(StoreError::Unavailable("connection refused".into()));
        assert_eq!(e.code(), ErrorCode::Unavailable);
        let r = e.into_response();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        let e = ApiError::from(StoreError::Corrupt("status".into()));
        assert_eq!(e.code(), ErrorCode::Internal);
    }

    #[test]
    fn unauthorized_answers_carry_the_basic_challenge() {
        let r = ApiError::from(ErrorCode::InvalidCredentials).into_response();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.headers()[header::WWW_AUTHENTICATE],
            "Basic realm=\"agegate\""
        );
    }
}
