//! Signing in and out, and who is asking, at the console's edge: the session cookie
//! carries a session id of [`crate::app::sessions`] (which signs in, throttles and reads
//! sessions afresh on every request); the CSRF token of a session is derived from its id
//! ([`SessionId::csrf_token`]); the forms and their answers are here.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::net::SocketAddr;

use super::{notice_text, page, see_other, ConsoleError, ConsoleState, Layout, SignedIn, CSS};
use crate::app::sessions::{SignInError, Started};
use crate::domain::console::{ConsoleUsername, CsrfToken, SessionId, SESSION_LIFETIME_SECS};
use crate::http::gateway::cookie;

pub const SESSION_COOKIE: &str = "agegate_console";
pub const SIGN_IN_PATH: &str = "/admin/sign-in";

/// A request of a signed-in operator; without a live session the request is answered
/// with a 303 to the sign-in page.
pub struct Operator {
    pub username: ConsoleUsername,
    csrf: CsrfToken,
}

impl Operator {
    /// The page frame for this operator, with the notice named in the URL (if any).
    pub fn layout(&self, notice: Option<&str>) -> Layout {
        Layout {
            css: CSS,
            user: Some(SignedIn {
                name: self.username.to_string(),
                csrf: self.csrf.as_str().to_owned(),
            }),
            notice: notice_text(notice),
        }
    }

    /// The token the page's forms carry.
    pub fn csrf(&self) -> &str {
        self.csrf.as_str()
    }
}

/// The session id the request's cookie carries, if it can be one.
fn session_id(headers: &HeaderMap) -> Option<SessionId> {
    cookie(headers, SESSION_COOKIE).and_then(SessionId::parse)
}

impl FromRequestParts<ConsoleState> for Operator {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ConsoleState,
    ) -> Result<Self, ConsoleError> {
        let id = session_id(&parts.headers).ok_or(ConsoleError::SignIn)?;
        match state.services.sessions().operator(&id).await? {
            Some(username) => Ok(Operator {
                username,
                csrf: id.csrf_token(),
            }),
            None => Err(ConsoleError::SignIn),
        }
    }
}

/// A state-changing form of a signed-in operator: from our own pages (by the browser's
/// Fetch Metadata or Origin), carrying this session's CSRF token; `T` is the rest of the
/// form. Missing or foreign token → 403 and the handler never runs.
pub struct Action<T> {
    pub operator: Operator,
    pub form: T,
}

impl<T: DeserializeOwned> FromRequest<ConsoleState> for Action<T> {
    type Rejection = ConsoleError;

    async fn from_request(req: Request, state: &ConsoleState) -> Result<Self, ConsoleError> {
        let (mut parts, body) = req.into_parts();
        if !same_origin(&parts.headers) {
            return Err(ConsoleError::Forbidden);
        }
        let operator = Operator::from_request_parts(&mut parts, state).await?;
        let bytes = Bytes::from_request(Request::from_parts(parts, body), state)
            .await
            .map_err(|e| ConsoleError::BadRequest(format!("The form could not be read: {e}")))?;
        let presented = url::form_urlencoded::parse(&bytes)
            .find(|(name, _)| name == "csrf")
            .map(|(_, value)| value);
        if !presented.is_some_and(|token| operator.csrf.matches(&token)) {
            return Err(ConsoleError::Forbidden);
        }
        let form = serde_urlencoded::from_bytes(&bytes)
            .map_err(|e| ConsoleError::BadRequest(format!("The form is incomplete: {e}")))?;
        Ok(Action { operator, form })
    }
}

/// A form with nothing but its token.
#[derive(Deserialize)]
pub struct NoFields {}

/// Whether a POST came from a page of this origin. Browsers say so in `Sec-Fetch-Site`;
/// older ones in `Origin` (compared with `Host`). Neither header: not a browser, so not
/// a forgery (the CSRF token still has to match).
fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return site == "same-origin";
    }
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    match origin {
        None | Some("null") => true,
        Some(origin) => {
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            url::Url::parse(origin).ok().is_some_and(|o| {
                let authority = match (o.host_str(), o.port()) {
                    (Some(h), Some(p)) => format!("{h}:{p}"),
                    (Some(h), None) => h.to_owned(),
                    _ => return false,
                };
                host == Some(authority.as_str())
            })
        }
    }
}

#[derive(Template)]
#[template(path = "console/sign_in.html")]
struct SignInPage<'a> {
    layout: Layout,
    error: Option<String>,
    username: &'a str,
}

#[derive(Deserialize)]
pub struct NoticeQuery {
    pub notice: Option<String>,
}

fn sign_in_form(
    status: StatusCode,
    notice: Option<&str>,
    error: Option<String>,
    username: &str,
) -> Response {
    let layout = Layout {
        notice: notice_text(notice),
        ..Layout::anonymous()
    };
    page(
        status,
        SignInPage {
            layout,
            error,
            username,
        }
        .render(),
    )
}

pub async fn sign_in_page(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(query): Query<NoticeQuery>,
) -> Result<Response, ConsoleError> {
    if let Some(id) = session_id(&headers) {
        if state.services.sessions().operator(&id).await?.is_some() {
            return Ok(see_other("/admin/"));
        }
    }
    Ok(sign_in_form(
        StatusCode::OK,
        query.notice.as_deref(),
        None,
        "",
    ))
}

#[derive(Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
}

/// Signs in: from the sixth attempt after five failures in a row for one name and
/// address, 429 with `Retry-After` and nothing checked; a wrong name or password is 401
/// (an unknown name takes as long as a known one); success starts a session (303 to the
/// overview) and ends the streak.
pub async fn sign_in(
    State(state): State<ConsoleState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ConsoleError> {
    if !same_origin(&headers) {
        return Err(ConsoleError::Forbidden);
    }
    let form: SignInForm = serde_urlencoded::from_bytes(&body)
        .map_err(|e| ConsoleError::BadRequest(format!("The form could not be read: {e}")))?;
    let address = client.ip().to_string();
    let typed = form.username.trim();
    let signed_in = state
        .services
        .sessions()
        .sign_in(typed, form.password, &address)
        .await;
    let Started { id, .. } = match signed_in {
        Ok(started) => started,
        Err(SignInError::Throttled { wait }) => return Ok(throttled(wait, typed)),
        Err(SignInError::Refused) => return Ok(refused(typed)),
        Err(SignInError::Internal(e)) => return Err(ConsoleError::Internal(e)),
        Err(SignInError::Store(e)) => return Err(e.into()),
    };
    let mut response = see_other("/admin/");
    set_cookie(
        &mut response,
        &session_cookie(id.expose(), SESSION_LIFETIME_SECS, state.secure_cookies),
    );
    Ok(response)
}

fn refused(typed: &str) -> Response {
    let mut response = sign_in_form(
        StatusCode::UNAUTHORIZED,
        None,
        Some("That name and password do not match an account.".into()),
        typed,
    );
    // A 401 names its scheme: this one is the form on this page.
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Form realm=\"agegate console\""),
    );
    response
}

fn throttled(wait: u64, typed: &str) -> Response {
    let minutes = wait.div_ceil(60);
    let mut response = sign_in_form(
        StatusCode::TOO_MANY_REQUESTS,
        None,
        Some(format!(
            "Too many failed sign-ins for this name from your address. Try again in {minutes} minute(s)."
        )),
        typed,
    );
    if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// Ends the session here and in the database, then back to the sign-in page.
pub async fn sign_out(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    action: Action<NoFields>,
) -> Result<Response, ConsoleError> {
    if let Some(id) = session_id(&headers) {
        state.services.sessions().sign_out(&id).await?;
    }
    tracing::info!(user = %action.operator.username, "console sign-out");
    let mut response = see_other(&format!("{SIGN_IN_PATH}?notice=signed-out"));
    set_cookie(&mut response, &session_cookie("", 0, state.secure_cookies));
    Ok(response)
}

/// The session cookie: only for the console's paths, never to script, never sent along
/// from another site; `Secure` when the public URL is https.
fn session_cookie(value: &str, max_age: i64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={value}; Path=/admin; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

fn set_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_from_other_sites_are_told_apart() {
        let mut h = HeaderMap::new();
        assert!(same_origin(&h));
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:9091"));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:9091"),
        );
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(!same_origin(&h));
        h.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(same_origin(&h), "fetch metadata decides where sent");
        h.insert("sec-fetch-site", HeaderValue::from_static("same-site"));
        assert!(!same_origin(&h));
    }

    #[test]
    fn the_session_cookie_is_scoped_and_hidden_from_script() {
        assert_eq!(
            session_cookie("abc", 43200, true),
            "agegate_console=abc; Path=/admin; Max-Age=43200; HttpOnly; SameSite=Strict; Secure"
        );
        assert!(!session_cookie("abc", 1, false).contains("Secure"));
    }
}
