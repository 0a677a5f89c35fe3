//! Request-body and path extractors whose every rejection is an [`ApiError`], so the
//! framework's own failures (bad JSON, wrong content type, too large) answer with the
//! JSON error body like everything else.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, HeaderMap};
use serde::de::DeserializeOwned;

use super::error::{ApiError, ErrorCode};

/// Largest accepted request body.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Time a client has to send a request's body once it has sent the headers.
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a failure to read the body means for the client.
fn body_error(rejection: &axum::extract::rejection::BytesRejection, other: ErrorCode) -> ErrorCode {
    if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        return ErrorCode::BodyTooLarge;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(rejection);
    while let Some(e) = cause {
        if e.is::<tower_http::timeout::TimeoutError>() {
            return ErrorCode::BodyTimeout;
        }
        cause = e.source();
    }
    other
}

/// A JSON request body whose fields are all optional, so an empty body means `{}`.
pub trait RequestBody: DeserializeOwned {
    /// The error for a well-formed object with a field of the wrong type.
    const TYPE_ERROR: ErrorCode;
}

pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: RequestBody> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let body = RawJsonBody::<T>::from_request(req, state).await?;
        Ok(JsonBody(body.value))
    }
}

/// A [`JsonBody`] with the bytes it was read from, exactly as received.
pub struct RawJsonBody<T> {
    pub value: T,
    pub raw: Bytes,
}

impl<S: Send + Sync, T: RequestBody> FromRequest<S> for RawJsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let is_json = is_json(req.headers());
        let raw = Bytes::from_request(req, state)
            .await
            .map_err(|rejection| body_error(&rejection, ErrorCode::MalformedJson))?;
        let text = raw.trim_ascii();
        let value = if text.is_empty() {
            parse::<T>(b"{}")?
        } else if !is_json {
            return Err(ErrorCode::UnsupportedContentType.into());
        } else {
            parse::<T>(text)?
        };
        Ok(Self { value, raw })
    }
}

fn parse<T: RequestBody>(text: &[u8]) -> Result<T, ApiError> {
    if text.first() != Some(&b'{') {
        // serde would happily read a struct from an array; the API takes objects only.
        let valid = serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok();
        let code = if valid {
            ErrorCode::BodyNotObject
        } else {
            ErrorCode::MalformedJson
        };
        return Err(code.into());
    }
    serde_json::from_slice::<T>(text).map_err(|e| {
        let code = if e.is_data() {
            T::TYPE_ERROR
        } else {
            ErrorCode::MalformedJson
        };
        code.into()
    })
}

/// `application/json`, with or without parameters, or any `application/*+json`.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(essence) = essence(headers) else {
        return false;
    };
    essence.eq_ignore_ascii_case("application/json")
        || (essence.len() > 17
            && essence[..12].eq_ignore_ascii_case("application/")
            && essence[essence.len() - 5..].eq_ignore_ascii_case("+json"))
}

/// An `application/x-www-form-urlencoded` body as its decoded fields, in order. Any
/// bytes decode (invalid UTF-8 is replaced), so only the size and type can be refused.
pub struct FormBody(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequest<S> for FormBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let is_form = essence(req.headers())
            .is_some_and(|e| e.eq_ignore_ascii_case("application/x-www-form-urlencoded"));
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|rejection| body_error(&rejection, ErrorCode::PresentationFormInvalid))?;
        if !is_form {
            return Err(ErrorCode::PresentationFormInvalid.into());
        }
        Ok(FormBody(
            url::form_urlencoded::parse(&bytes).into_owned().collect(),
        ))
    }
}

/// The media type of the body, without parameters.
fn essence(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim())
}

/// `axum::extract::Path` with its rejection mapped to the API's error body.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(ct: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        h
    }

    #[test]
    fn json_content_types_are_recognised() {
        assert!(is_json(&headers("application/json")));
        assert!(is_json(&headers("Application/JSON; charset=utf-8")));
        assert!(is_json(&headers("application/merge-patch+json")));
        assert!(!is_json(&headers("text/plain")));
        assert!(!is_json(&headers("application/x-www-form-urlencoded")));
        assert!(!is_json(&HeaderMap::new()));
    }
}
