//! The sandbox site's control on the pending page: marks the invite verified, as the
//! verification provider would, so integrators can walk the whole flow.

use axum::extract::rejection::{FormRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Form;
use serde::Deserialize;
use subtle::ConstantTimeEq;

use super::{failure, load, message, not_found, see_other};
use crate::app::invites::InviteError;
use crate::domain::VerifyMethod;
use crate::http::AppState;

const CSRF_COOKIE: &str = "agegate_csrf";

/// The visitor's CSRF token: kept across the page's reloads, so a press of the button
/// just as the page reloads still matches the cookie; a fresh one otherwise.
pub(super) fn csrf_token(headers: &HeaderMap) -> String {
    cookie(headers, CSRF_COOKIE)
        .filter(|t| {
            t.len() == 32
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_owned)
        .unwrap_or_else(|| crate::domain::random_token(24))
}

/// Sets the token's cookie on `response` (`Secure` when the public URL is https).
pub(super) fn set_csrf_cookie(response: &mut Response, token: &str, public_url: &str) {
    let secure = if public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let cookie =
        format!("{CSRF_COOKIE}={token}; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict{secure}");
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
}

/// The sandbox page's form.
#[derive(Deserialize, utoipa::ToSchema)]
pub struct ApproveForm {
    /// The token from the page (it must match the page's cookie).
    csrf: String,
}

/// Sandbox approval
///
/// For a sandbox site only: marks a pending invite verified, as the verification
/// provider would, then sends the visitor on as the gateway page does. Protected against
/// cross-site request forgery (a per-visit token in a SameSite cookie and the form, and
/// the Origin header).
#[utoipa::path(
    post,
    path = "/gateway/{inviteId}/approve",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    request_body(content = ApproveForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Verified; on to the gateway page"),
        (status = 403, description = "Not a sandbox site, or the request did not come from the page", content_type = "text/html", body = String),
        (status = 404, description = "No such invite", content_type = "text/html", body = String),
    )
)]
pub async fn approve(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    form: Result<Form<ApproveForm>, FormRejection>,
) -> Response {
    let (id, gateway) = match load(&state, path).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    if !gateway.sandbox {
        return message(
            StatusCode::FORBIDDEN,
            "Not available",
            "Only sandbox sites can be verified from this page.",
        );
    }
    let token_ok = match (&form, cookie(&headers, CSRF_COOKIE)) {
        (Ok(Form(form)), Some(cookie)) => {
            !cookie.is_empty() && bool::from(cookie.as_bytes().ct_eq(form.csrf.as_bytes()))
        }
        _ => false,
    };
    if !token_ok || !from_our_page(&headers, &state.public_url) {
        return message(
            StatusCode::FORBIDDEN,
            "Please try again",
            "This request did not come from the verification page. Go back, reload the page and press the button again.",
        );
    }
    match state
        .marking()
        .mark_verified(&id, VerifyMethod::Sandbox)
        .await
    {
        Ok(_) | Err(InviteError::Expired) => see_other(&state.gateway_url(&id)),
        Err(InviteError::NoSuchInvite) => not_found(),
        Err(e) => failure(e),
    }
}

/// A cookie's value from the request's Cookie headers.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(k, v)| (k == name).then_some(v))
}

/// Whether the request came from one of our own pages, by the headers browsers set:
/// `Sec-Fetch-Site` where sent, else `Origin`. Our pages' `Referrer-Policy: no-referrer`
/// makes browsers send `Origin: null` on the form's POST, which proves nothing either
/// way; the token in the SameSite=Strict cookie and the form remains the main check.
fn from_our_page(headers: &HeaderMap, public_url: &str) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return site == "same-origin";
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None | Some("null") => true,
        Some(origin) => url::Url::parse(public_url)
            .is_ok_and(|public| public.origin().ascii_serialization() == origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; agegate_csrf=tok; b=2"),
        );
        assert_eq!(cookie(&h, "agegate_csrf"), Some("tok"));
        assert_eq!(cookie(&h, "c"), None);
    }

    #[test]
    fn origin_must_match_the_public_url() {
        let public = "https://v.example/age";
        let mut h = HeaderMap::new();
        assert!(from_our_page(&h, public));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://v.example"),
        );
        assert!(from_our_page(&h, public));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(!from_our_page(&h, public));
        h.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(from_our_page(&h, public));
    }

    #[test]
    fn fetch_metadata_decides_when_present() {
        let public = "https://v.example";
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, HeaderValue::from_static("null"));
        h.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(from_our_page(&h, public));
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(!from_our_page(&h, public));
        h.insert("sec-fetch-site", HeaderValue::from_static("same-site"));
        assert!(!from_our_page(&h, public));
    }

    #[test]
    fn a_well_formed_token_is_kept_and_anything_else_replaced() {
        let mut h = HeaderMap::new();
        let kept = "abcdefghijklmnopqrstuvwxyz012345";
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("agegate_csrf={kept}")).unwrap(),
        );
        assert_eq!(csrf_token(&h), kept);
        h.insert(header::COOKIE, HeaderValue::from_static("agegate_csrf=<x>"));
        let fresh = csrf_token(&h);
        assert_eq!(fresh.len(), 32);
        assert_ne!(fresh, "<x>");
    }
}
