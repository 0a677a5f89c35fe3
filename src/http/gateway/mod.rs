//! The gateway page each invite's `url` points at: HTML for the person being verified.
//! Pages come from compiled, auto-escaping templates and carry strict security headers;
//! errors here are HTML pages too, never the API's JSON.
//!
//! [`page`] renders the pending page (with the wallet offers: docs/wallets.md#the-wallet-link, docs/dc-api.md), [`sandbox`]
//! is the sandbox site's approval, [`dc_api`] the Digital Credentials API's endpoint and
//! the status the page's script polls.

pub mod dc_api;
pub mod page;
pub mod sandbox;

pub(crate) use sandbox::cookie;

use askama::Template;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

use super::AppState;
use crate::domain::{InviteId, Status};
use crate::store::GatewayInvite;

pub const CSS: &str = include_str!("../../../templates/gateway/style.css");
/// The pending page's script (the Digital Credentials API button and the status poll),
/// inlined verbatim so the CSP can allow exactly it by its hash.
pub const SCRIPT: &str = include_str!("../../../templates/gateway/dc_api.js");

/// `'sha256-…'` CSP sources of the inline stylesheet and script.
static CSS_HASH: LazyLock<String> = LazyLock::new(|| csp_hash(CSS));
static SCRIPT_HASH: LazyLock<String> = LazyLock::new(|| csp_hash(SCRIPT));

fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The pages' Content-Security-Policy: nothing but our inline stylesheet (and, on a
/// page with `script`, our inline script, which may fetch from us only), never framed,
/// forms only to us (and to `form_target`, where the form's answer leads).
pub fn content_security_policy(form_target: Option<&str>, script: bool) -> String {
    policy(&CSS_HASH, form_target, script)
}

/// [`content_security_policy`] for pages whose one stylesheet is `css` and that carry no
/// script (the operator console's).
pub fn policy_for_style(css: &str, form_target: Option<&str>) -> String {
    policy(&csp_hash(css), form_target, false)
}

fn policy(style_hash: &str, form_target: Option<&str>, script: bool) -> String {
    let extra = form_target
        .and_then(|t| url::Url::parse(t).ok())
        .map(|u| format!(" {}", u.origin().ascii_serialization()))
        .unwrap_or_default();
    let script = if script {
        format!("script-src {}; connect-src 'self'; ", *SCRIPT_HASH)
    } else {
        String::new()
    };
    format!(
        "default-src 'none'; style-src {}; {script}img-src 'self'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'self'{extra}",
        style_hash
    )
}

#[derive(Template)]
#[template(path = "gateway/verified.html")]
struct VerifiedPage<'a> {
    css: &'static str,
    site_name: &'a str,
}

#[derive(Template)]
#[template(path = "gateway/expired.html")]
struct ExpiredPage<'a> {
    css: &'static str,
    site_name: &'a str,
}

#[derive(Template)]
#[template(path = "gateway/message.html")]
struct MessagePage<'a> {
    css: &'static str,
    title: &'a str,
    message: &'a str,
}

/// A page with the headers every gateway answer carries.
fn page(status: StatusCode, csp: &str, html: Result<String, askama::Error>) -> Response {
    let (status, body) = match html {
        Ok(body) => (status, body),
        Err(e) => {
            tracing::error!(error = %e, "gateway template failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal error".to_owned(),
            )
        }
    };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    security_headers(headers, csp);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

pub fn security_headers(headers: &mut HeaderMap, csp: &str) {
    if let Ok(csp) = HeaderValue::from_str(csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

fn message(status: StatusCode, title: &str, text: &str) -> Response {
    page(
        status,
        &content_security_policy(None, false),
        MessagePage {
            css: CSS,
            title,
            message: text,
        }
        .render(),
    )
}

fn not_found() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "Link not found",
        "We could not find this verification link. Check that you opened the whole link, \
         or return to the site that sent you and start again.",
    )
}

fn failure(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "gateway request failed");
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "We could not load this page. Please try again in a moment.",
    )
}

/// The invite a gateway URL names, or the page to answer instead.
async fn load(
    state: &AppState,
    path: Result<Path<String>, PathRejection>,
) -> Result<(InviteId, GatewayInvite), Response> {
    let id = path
        .ok()
        .and_then(|Path(id)| InviteId::parse(&id))
        .ok_or_else(not_found)?;
    match state.reads.gateway_invite(&id).await {
        Ok(Some(gateway)) => Ok((id, gateway)),
        Ok(None) => Err(not_found()),
        Err(e) => Err(failure(e)),
    }
}

/// A 303 to `location`, leaking nothing through the Referer header.
fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The site's redirect URL with `vs` (and `cid`) added to its query string.
pub fn redirect_target(
    redirect_url: &str,
    invite_id: &str,
    custom_id: Option<&str>,
) -> Option<String> {
    let mut url = url::Url::parse(redirect_url).ok()?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("vs", invite_id);
        if let Some(cid) = custom_id {
            query.append_pair("cid", cid);
        }
    }
    Some(url.into())
}

/// Gateway page
///
/// The page for the person being verified: pending (next steps; for a sandbox site a
/// control that marks the invite verified), expired, or, once verified, a 303 back to
/// the site's redirect URL with `vs={inviteId}` and `cid={customId}` added.
#[utoipa::path(
    get,
    path = "/gateway/{inviteId}",
    tag = "gateway",
    params(("inviteId" = String, Path, description = "Identifier of the invite")),
    responses(
        (status = 200, description = "Pending (or verified, for a site without a redirect URL)", content_type = "text/html", body = String),
        (status = 303, description = "Verified: back to the site's redirect URL"),
        (status = 404, description = "No such invite", content_type = "text/html", body = String),
        (status = 410, description = "The invite has expired", content_type = "text/html", body = String),
    )
)]
pub async fn show(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let (_, gateway) = match load(&state, path).await {
        Ok(found) => found,
        Err(page) => return page,
    };
    let now = state.clock.now();
    let invite = &gateway.invite;
    match invite.status_at(now) {
        Status::Verified => match gateway
            .redirect_url
            .as_deref()
            .and_then(|r| redirect_target(r, invite.id.as_str(), invite.custom_id.as_deref()))
        {
            Some(target) => see_other(&target),
            None => page(
                StatusCode::OK,
                &content_security_policy(None, false),
                VerifiedPage {
                    css: CSS,
                    site_name: &gateway.site_name,
                }
                .render(),
            ),
        },
        Status::Expired => page(
            StatusCode::GONE,
            &content_security_policy(None, false),
            ExpiredPage {
                css: CSS,
                site_name: &gateway.site_name,
            }
            .render(),
        ),
        Status::Pending => page::pending(&state, &gateway, &headers).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_keeps_the_existing_query_and_encodes_values() {
        assert_eq!(
            redirect_target("https://shop.example/back?x=1", "abc", Some("a&b=c é")).unwrap(),
            "https://shop.example/back?x=1&vs=abc&cid=a%26b%3Dc+%C3%A9"
        );
        assert_eq!(
            redirect_target("https://shop.example/back", "abc", None).unwrap(),
            "https://shop.example/back?vs=abc"
        );
    }

    #[test]
    fn only_pages_with_the_script_allow_it_and_only_by_its_hash() {
        let without = content_security_policy(None, false);
        assert!(!without.contains("script-src"), "{without}");
        let with = content_security_policy(Some("https://shop.example/back?x"), true);
        assert!(
            with.contains(&format!("script-src {}; connect-src 'self';", *SCRIPT_HASH)),
            "{with}"
        );
        assert!(with.starts_with("default-src 'none';"));
        assert!(with.ends_with("form-action 'self' https://shop.example"));
        assert!(!with.contains("unsafe"));
    }
}
