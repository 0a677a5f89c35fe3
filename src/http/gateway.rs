//! The gateway page each invite's `url` points at: HTML for the person being verified.
//! Pages come from compiled, auto-escaping templates and carry strict security headers;
//! errors here are HTML pages too, never the API's JSON.

use askama::Template;
use axum::extract::rejection::{FormRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Form;
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::openid4vp::{offer, WalletOffer};
use super::AppState;
use crate::clock::rfc3339;
use crate::domain::{InviteId, Status, VerifyMethod};
use crate::store::{GatewayInvite, VerifyOutcome};

pub const CSS: &str = include_str!("../../templates/gateway/style.css");
const CSRF_COOKIE: &str = "agegate_csrf";

/// The pages' Content-Security-Policy: nothing but our inline stylesheet, never framed,
/// forms only to us (and to `form_target`, where the form's answer leads).
pub fn content_security_policy(form_target: Option<&str>) -> String {
    policy_for_style(CSS, form_target)
}

/// [`content_security_policy`] for pages whose one stylesheet is `css` (the console's).
pub fn policy_for_style(css: &str, form_target: Option<&str>) -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(css.as_bytes()));
    let extra = form_target
        .and_then(|t| url::Url::parse(t).ok())
        .map(|u| format!(" {}", u.origin().ascii_serialization()))
        .unwrap_or_default();
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src 'self'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'self'{extra}"
    )
}

#[derive(Template)]
#[template(path = "gateway/pending.html")]
struct PendingPage<'a> {
    css: &'static str,
    site_name: &'a str,
    invite_id: &'a str,
    expires_iso: String,
    expires_human: String,
    sandbox_csrf: Option<String>,
    /// The EU AV app's link and QR code, when the method is on.
    wallet: Option<WalletOffer>,
    min_age: u8,
    refresh_secs: u32,
}

/// How often a pending page reloads itself (interface §7: at least every 5 seconds), so
/// a presentation made on another device moves the visitor on without JavaScript.
pub const REFRESH_SECS: u32 = 5;

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
        &content_security_policy(None),
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
    match state.store.gateway_invite(&id).await {
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
                &content_security_policy(None),
                VerifiedPage {
                    css: CSS,
                    site_name: &gateway.site_name,
                }
                .render(),
            ),
        },
        Status::Expired => page(
            StatusCode::GONE,
            &content_security_policy(None),
            ExpiredPage {
                css: CSS,
                site_name: &gateway.site_name,
            }
            .render(),
        ),
        Status::Pending => pending(&state, &gateway, &headers).await,
    }
}

async fn pending(state: &AppState, gateway: &GatewayInvite, headers: &HeaderMap) -> Response {
    let invite = &gateway.invite;
    let wallet = match &state.eu_av {
        Some(eu_av) => match offer(state, eu_av, gateway).await {
            Ok(offer) => Some(offer),
            Err(e) => return failure(e),
        },
        None => None,
    };
    // Keep the visitor's token across the page's reloads, so a press of the button
    // just as the page reloads still matches the cookie.
    let csrf = gateway.sandbox.then(|| {
        cookie(headers, CSRF_COOKIE)
            .filter(|t| {
                t.len() == 32
                    && t.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
            .map(str::to_owned)
            .unwrap_or_else(|| crate::domain::random_token(24))
    });
    // The approve form's answer ends on the site's redirect URL; allow that navigation.
    let csp = content_security_policy(gateway.redirect_url.as_deref());
    let html = PendingPage {
        css: CSS,
        site_name: &gateway.site_name,
        invite_id: invite.id.as_str(),
        expires_iso: rfc3339(invite.expires_at),
        expires_human: rfc3339(invite.expires_at)
            .replace('T', " ")
            .replace('Z', " UTC"),
        sandbox_csrf: csrf.clone(),
        wallet,
        min_age: gateway.min_age.get(),
        refresh_secs: REFRESH_SECS,
    }
    .render();
    let mut response = page(StatusCode::OK, &csp, html);
    if let Some(token) = csrf {
        let secure = if state.public_url.starts_with("https://") {
            "; Secure"
        } else {
            ""
        };
        let cookie = format!(
            "{CSRF_COOKIE}={token}; Path=/; Max-Age=3600; HttpOnly; SameSite=Strict{secure}"
        );
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
    }
    response
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
        .store
        .verify_invite(&id, VerifyMethod::Sandbox, state.clock.now())
        .await
    {
        Ok(VerifyOutcome::Verified(_)) => {
            state.metrics.verified(VerifyMethod::Sandbox);
            tracing::info!(invite_id = %id, "invite verified from the sandbox page");
            state.deliveries.notify_one();
            see_other(&state.gateway_url(&id))
        }
        Ok(VerifyOutcome::AlreadyVerified(_) | VerifyOutcome::Expired) => {
            see_other(&state.gateway_url(&id))
        }
        Ok(VerifyOutcome::NotFound) => not_found(),
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
}
