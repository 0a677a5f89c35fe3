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
/// Largest body of the two wallet answer routes (the link's `direct_post` and the DC
/// API's): a zero-knowledge proof of age is 320 KB to about 1 MB
/// (docs/zk.md#zero-knowledge-proofs).
pub const WALLET_BODY_LIMIT: usize = 2 * 1024 * 1024;
/// Time a client has to send a request's body once it has sent the headers.
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A wallet answer route's body ([`WALLET_BODY_LIMIT`]): too large is larger than that.
pub fn wallet_body<T>(body: Result<T, ApiError>) -> Result<T, ApiError> {
    body.map_err(|e| match e.code() {
        ErrorCode::BodyTooLarge => ErrorCode::WalletBodyTooLarge.into(),
        _ => e,
    })
}

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

/// An `application/x-www-form-urlencoded` body, read; [`FormBody::fields`] decodes it.
/// Any bytes decode (invalid UTF-8 is replaced), so only the size and type can be refused.
pub struct FormBody(pub Bytes);

impl FormBody {
    /// The decoded fields, in order (decoded apart from the reading, so that a proof's
    /// 320 KB and more can be decoded on the proof lane).
    pub fn fields(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(&self.0).into_owned().collect()
    }
}

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
        Ok(FormBody(bytes))
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
    fn the_accept_loop_drains_no_more_than_a_route_reads() {
        assert_eq!(crate::server::DRAIN_LIMIT, BODY_LIMIT as u64);
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

    mod properties {
        use super::super::*;
        use crate::http::invites::CreateInviteRequest;
        use crate::http::verifier::VerifierReport;
        use axum::body::Body;
        use axum::http::HeaderValue;
        use proptest::prelude::*;
        use serde_json::{json, Value};

        /// Reads `body` as a request's with `content_type`, as a handler would.
        fn read<T: RequestBody>(content_type: Option<&str>, body: Vec<u8>) -> Result<T, ErrorCode> {
            let mut request = axum::http::Request::builder().method("POST").uri("/");
            if let Some(ct) = content_type {
                request = request.header(header::CONTENT_TYPE, ct);
            }
            let request = request.body(Body::from(body)).unwrap();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime
                .block_on(RawJsonBody::<T>::from_request(request, &()))
                .map(|body| body.value)
                .map_err(|e| e.code())
        }

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                ".{0,20}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                    proptest::collection::btree_map("[a-zA-Z]{0,10}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            /// Any bytes under any content type: a value or one of the body's errors,
            /// never a panic.
            #[test]
            fn arbitrary_bodies_give_a_typed_answer(
                body in proptest::collection::vec(any::<u8>(), 0..200),
                content_type in proptest::option::of(prop_oneof![
                    Just("application/json".to_owned()),
                    Just("application/problem+json; charset=utf-8".to_owned()),
                    "[ -~]{0,30}",
                ]),
            ) {
                let json = content_type
                    .as_deref()
                    .is_some_and(|ct| HeaderValue::from_str(ct).is_ok_and(|v| {
                        let mut h = HeaderMap::new();
                        h.insert(header::CONTENT_TYPE, v);
                        is_json(&h)
                    }));
                let blank = body.trim_ascii().is_empty();
                let allowed = [
                    ErrorCode::MalformedJson,
                    ErrorCode::BodyNotObject,
                    ErrorCode::CustomIdNotString,
                    ErrorCode::UnsupportedContentType,
                ];
                match read::<CreateInviteRequest>(content_type.as_deref(), body) {
                    Ok(_) => prop_assert!(blank || json),
                    Err(code) => {
                        prop_assert!(allowed.contains(&code), "{code:?}");
                        prop_assert!(!blank);
                        prop_assert_eq!(code == ErrorCode::UnsupportedContentType, !json);
                    }
                }
            }

            /// Any JSON value: an object is read (its customId decides), anything else is
            /// "not an object".
            #[test]
            fn json_values_are_objects_or_refused(value in json_value()) {
                let bytes = serde_json::to_vec(&value).unwrap();
                let answer = read::<CreateInviteRequest>(Some("application/json"), bytes);
                match (&value, answer) {
                    (Value::Object(fields), Ok(body)) => {
                        let id = fields.get("customId").cloned().unwrap_or(Value::Null);
                        prop_assert_eq!(Value::from(body.custom_id), id);
                    }
                    (Value::Object(fields), Err(code)) => {
                        prop_assert_eq!(code, ErrorCode::CustomIdNotString);
                        prop_assert!(!fields["customId"].is_string() && !fields["customId"].is_null());
                    }
                    (_, answer) => prop_assert_eq!(answer.err(), Some(ErrorCode::BodyNotObject)),
                }
            }

            /// A valid create body comes back as sent, whatever else the object holds.
            #[test]
            fn create_bodies_round_trip(
                custom_id in proptest::option::of(".{0,200}"),
                extra in proptest::collection::btree_map("[a-z]{1,8}", json_value(), 0..3),
            ) {
                let mut body: serde_json::Map<String, Value> = extra.into_iter().collect();
                body.insert("customId".into(), json!(custom_id));
                let bytes = serde_json::to_vec(&body).unwrap();
                let answer = read::<CreateInviteRequest>(Some("application/json"), bytes);
                prop_assert_eq!(answer.map(|b| b.custom_id), Ok(custom_id));
            }

            /// A verifier report's outcome comes back as sent; a non-string one is 40008.
            #[test]
            fn verifier_reports_round_trip(outcome in ".{0,20}", other in json_value()) {
                let bytes = serde_json::to_vec(&json!({"outcome": outcome})).unwrap();
                let answer = read::<VerifierReport>(Some("application/json"), bytes);
                prop_assert_eq!(answer.map(|r| r.outcome), Ok(Some(outcome)));
                let bytes = serde_json::to_vec(&json!({"outcome": other})).unwrap();
                match read::<VerifierReport>(Some("application/json"), bytes) {
                    Ok(report) => prop_assert_eq!(Value::from(report.outcome), other),
                    Err(code) => prop_assert_eq!(code, ErrorCode::InvalidOutcome),
                }
            }
        }
    }
}
