//! The operator console (docs/console.md): server-rendered pages under `/admin/`, served
//! on `--admin-listen` only. Pages come from compiled, auto-escaping templates with the
//! gateway's strict headers (a CSP that allows nothing but the inline stylesheet, by
//! hash: no script at all), sign-in makes a server-side session, and every
//! state-changing form carries the session's CSRF token. Actions go through the same
//! application services and rules as the API and the command line.

mod anchors;
pub mod chart;
mod invites;
mod overview;
mod plot;
mod session;
mod sites;

use askama::Template;
use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;

use super::gateway::{policy_for_style, security_headers};
use crate::app::invites::InviteError;
use crate::app::SiteError;
use crate::clock::{rfc3339, Clock, UnixTime};
use crate::store::StoreError;

pub use session::{SESSION_COOKIE, SIGN_IN_PATH};

pub const CSS: &str = include_str!("../../../templates/console/style.css");

/// Everything a console handler may use.
pub struct Console {
    /// The application's services: the console reaches the store only through them.
    pub services: crate::app::Services,
    pub clock: Arc<dyn Clock>,
    /// Base of gateway URLs, without a trailing slash.
    pub public_url: String,
    pub trust: Arc<crate::trust::TrustHandle>,
    /// The session cookie is `Secure` when the public URL is https.
    secure_cookies: bool,
}

pub type ConsoleState = Arc<Console>;

pub struct ConsoleParts {
    pub services: crate::app::Services,
    pub clock: Arc<dyn Clock>,
    pub public_url: String,
    pub trust: Arc<crate::trust::TrustHandle>,
}

/// The console, ready to serve on its own listener.
pub fn router(parts: ConsoleParts) -> Router {
    let public_url = parts.public_url.trim_end_matches('/').to_owned();
    let state = Arc::new(Console {
        secure_cookies: public_url.starts_with("https://"),
        services: parts.services,
        clock: parts.clock,
        public_url,
        trust: parts.trust,
    });
    Router::new()
        .route("/admin", get(|| async { see_other("/admin/") }))
        .route("/admin/", get(overview::show))
        .route(
            SIGN_IN_PATH,
            get(session::sign_in_page).post(session::sign_in),
        )
        .route("/admin/sign-out", post(session::sign_out))
        .route("/admin/sites", get(sites::list).post(sites::create))
        .route("/admin/sites/{site}", get(sites::show))
        .route("/admin/sites/{site}/keys", post(sites::issue_key))
        .route(
            "/admin/sites/{site}/keys/{username}/revoke",
            post(sites::revoke_key),
        )
        .route(
            "/admin/sites/{site}/webhook-secret",
            post(sites::rotate_secret),
        )
        .route("/admin/sites/{site}/zk", post(sites::set_zk))
        .route("/admin/sites/{site}/invites", get(invites::list))
        .route("/admin/sites/{site}/invites/{invite}", get(invites::show))
        .route(
            "/admin/sites/{site}/invites/{invite}/cancel",
            post(invites::cancel),
        )
        .route(
            "/admin/sites/{site}/invites/{invite}/erase",
            post(invites::erase),
        )
        .route(
            "/admin/sites/{site}/invites/{invite}/events/{event}/redeliver",
            post(invites::redeliver),
        )
        .route("/admin/trust", get(anchors::show))
        .fallback(|| async { ConsoleError::NotFound("There is no such page.") })
        .method_not_allowed_fallback(|| async {
            ConsoleError::status(StatusCode::METHOD_NOT_ALLOWED, "Not allowed", "")
        })
        .layer(DefaultBodyLimit::max(super::body::BODY_LIMIT))
        .layer(RequestBodyTimeoutLayer::new(super::body::BODY_READ_TIMEOUT))
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &axum::extract::Request| {
                // The path only: forms carry passwords, and queries customIds.
                tracing::info_span!("console", method = %req.method(), path = %req.uri().path())
            }),
        )
        .layer(CatchPanicLayer::custom(|_| {
            ConsoleError::Internal("handler panicked".into()).into_response()
        }))
        .with_state(state)
}

/// What every page's frame shows: who is signed in (with the sign-out form's token) and
/// a notice about the last action.
pub struct Layout {
    pub css: &'static str,
    pub user: Option<SignedIn>,
    pub notice: Option<&'static str>,
}

pub struct SignedIn {
    pub name: String,
    pub csrf: String,
}

impl Layout {
    pub fn anonymous() -> Self {
        Self {
            css: CSS,
            user: None,
            notice: None,
        }
    }
}

/// A rendered page with the console's headers.
pub fn page(status: StatusCode, html: Result<String, askama::Error>) -> Response {
    let (status, body) = match html {
        Ok(body) => (status, body),
        Err(e) => {
            tracing::error!(error = %e, "console template failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal error".to_owned(),
            )
        }
    };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    security_headers(headers, &console_csp());
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// The console's Content-Security-Policy (the gateway's, for the console's stylesheet).
fn console_csp() -> String {
    static CSP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CSP.get_or_init(|| policy_for_style(CSS, None)).clone()
}

/// A 303 to a console path, never cached.
pub fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A time as people read it: `2027-01-15 08:00:00 UTC`.
pub fn when(t: UnixTime) -> String {
    rfc3339(t).replace('T', " ").replace('Z', " UTC")
}

#[derive(Template)]
#[template(path = "console/message.html")]
struct MessagePage<'a> {
    layout: Layout,
    title: &'a str,
    message: &'a str,
    back: Option<&'a str>,
}

/// Why a console request was not carried out, mapped to its page here.
#[derive(Debug)]
pub enum ConsoleError {
    /// No live session: on to the sign-in page.
    SignIn,
    /// A state-changing request without its session's CSRF token, or from another site.
    Forbidden,
    NotFound(&'static str),
    /// The rules refuse the action (cancelling a verified invite).
    Conflict(String),
    BadRequest(String),
    Store(StoreError),
    Internal(String),
    /// Any other status with a title and message.
    Other(StatusCode, &'static str, String),
}

impl ConsoleError {
    pub fn status(status: StatusCode, title: &'static str, message: &str) -> Self {
        ConsoleError::Other(status, title, message.to_owned())
    }
}

impl From<StoreError> for ConsoleError {
    fn from(e: StoreError) -> Self {
        ConsoleError::Store(e)
    }
}

impl From<SiteError> for ConsoleError {
    fn from(e: SiteError) -> Self {
        match e {
            SiteError::NoSuchSite(_) => ConsoleError::NotFound("There is no such site."),
            SiteError::NoSuchKey { .. } => ConsoleError::NotFound("This site has no such key."),
            SiteError::NothingToUpdate => ConsoleError::BadRequest("Nothing to change.".into()),
            SiteError::Store(e) => ConsoleError::Store(e),
        }
    }
}

impl From<InviteError> for ConsoleError {
    fn from(e: InviteError) -> Self {
        match e {
            InviteError::NoSuchInvite => ConsoleError::NotFound("This site has no such invite."),
            InviteError::Verified => ConsoleError::Conflict(format!(
                "Not cancelled: {}.",
                super::error::ErrorCode::InviteVerified.message()
            )),
            InviteError::NoSuchEvent(_) => {
                ConsoleError::NotFound("This invite has no such webhook event.")
            }
            // The console neither creates nor verifies invites.
            e @ (InviteError::Expired | InviteError::KeyReused) => {
                ConsoleError::Conflict(format!("{e}."))
            }
            InviteError::Store(e) => ConsoleError::Store(e),
        }
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        let (status, title, message) = match self {
            ConsoleError::SignIn => return see_other(SIGN_IN_PATH),
            ConsoleError::Forbidden => (
                StatusCode::FORBIDDEN,
                "Not carried out",
                "This form did not come from your current console session, so nothing was \
                 changed. Go back, reload the page and try again."
                    .to_owned(),
            ),
            ConsoleError::NotFound(what) => (StatusCode::NOT_FOUND, "Not found", what.to_owned()),
            ConsoleError::Conflict(why) => (StatusCode::CONFLICT, "Not possible", why),
            ConsoleError::BadRequest(why) => (StatusCode::BAD_REQUEST, "Please check", why),
            ConsoleError::Store(e @ (StoreError::Closed | StoreError::Unavailable(_))) => {
                tracing::warn!(error = %e, "console: database unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Database unavailable",
                    "The database does not answer right now; nothing was changed. Try again \
                     in a moment."
                        .to_owned(),
                )
            }
            ConsoleError::Store(e) => return internal(&e.to_string()),
            ConsoleError::Internal(e) => return internal(&e),
            ConsoleError::Other(status, title, message) => (status, title, message),
        };
        page(
            status,
            MessagePage {
                layout: Layout::anonymous(),
                title,
                message: &message,
                back: Some("/admin/"),
            }
            .render(),
        )
    }
}

fn internal(cause: &str) -> Response {
    tracing::error!(error = %cause, "console request failed");
    page(
        StatusCode::INTERNAL_SERVER_ERROR,
        MessagePage {
            layout: Layout::anonymous(),
            title: "Something went wrong",
            message: "The request failed on the server's side; the log says why.",
            back: Some("/admin/"),
        }
        .render(),
    )
}

/// What the last action did, named in the URL it redirected to (`?notice=`): a fixed
/// text per name, so nothing from the URL is shown.
pub fn notice_text(name: Option<&str>) -> Option<&'static str> {
    Some(match name? {
        "signed-out" => "You have signed out.",
        "key-revoked" => "The key is revoked; running servers refuse it within 5 seconds.",
        "key-already-revoked" => "That key was revoked already.",
        "cancelled" => "The invite is cancelled: it is expired now, and its site is told.",
        "already-expired" => "The invite had expired already; nothing changed.",
        "erased" => "The invite is erased with everything stored about it.",
        "redelivered" => "The event is queued again with a fresh retry schedule.",
        "zk-changed" => "The zero-knowledge policy is changed; the next request a gateway page makes follows it.",
        _ => return None,
    })
}
