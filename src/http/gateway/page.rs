//! The pending page: what is happening, the wallet offers (the link and QR code, docs/wallets.md#the-wallet-link; the
//! Digital Credentials API request, for the page's own script), the sandbox control.

use askama::Template;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::dc_api::{self, PageOffer};
use super::{content_security_policy, failure, page, sandbox, CSS, SCRIPT};
use crate::clock::rfc3339;
use crate::http::openid4vp::{offer, WalletOffer};
use crate::http::AppState;
use crate::store::GatewayInvite;

/// How often a pending page reloads itself without JavaScript (docs/wallets.md#the-wallet-link: at least
/// every 5 seconds), so a presentation made on another device moves the visitor on.
pub const REFRESH_SECS: u32 = 5;

#[derive(Template)]
#[template(path = "gateway/pending.html")]
struct PendingPage<'a> {
    css: &'static str,
    script: &'static str,
    site_name: &'a str,
    invite_id: &'a str,
    expires_iso: String,
    expires_human: String,
    sandbox_csrf: Option<String>,
    /// The wallet link and QR code, when the site accepts a kind the server has on.
    wallet: Option<WalletOffer>,
    /// The Digital Credentials API's request and the page's script, with the wallet.
    dc_api: Option<PageOffer>,
    min_age: u8,
    refresh_secs: u32,
}

pub(super) async fn pending(
    state: &AppState,
    gateway: &GatewayInvite,
    headers: &HeaderMap,
) -> Response {
    let invite = &gateway.invite;
    let now = state.clock.now();
    let wallet = match offer(state, gateway).await {
        Ok(offer) => offer,
        Err(e) => return failure(e),
    };
    let dc_api = wallet.as_ref().and_then(|w| {
        dc_api::page_offer(state, &invite.id, &w.request, w.kinds, gateway.min_age, now)
    });
    let csrf = gateway.sandbox.then(|| sandbox::csrf_token(headers));
    // The approve form's answer ends on the site's redirect URL; allow that navigation.
    let csp = content_security_policy(gateway.redirect_url.as_deref(), dc_api.is_some());
    let html = PendingPage {
        css: CSS,
        script: SCRIPT,
        site_name: &gateway.site_name,
        invite_id: invite.id.as_str(),
        expires_iso: rfc3339(invite.expires_at),
        expires_human: rfc3339(invite.expires_at)
            .replace('T', " ")
            .replace('Z', " UTC"),
        sandbox_csrf: csrf.clone(),
        wallet,
        dc_api,
        min_age: gateway.min_age.get(),
        refresh_secs: REFRESH_SECS,
    }
    .render();
    let mut response = page(StatusCode::OK, &csp, html);
    if let Some(token) = csrf {
        sandbox::set_csrf_cookie(&mut response, &token, &state.public_url);
    }
    response
}
