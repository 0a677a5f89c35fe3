//! The HTTP edge: routes, extractors, handlers and the mapping of errors to responses.

pub mod admission;
pub mod auth;
pub mod body;
pub mod console;
pub mod edge;
pub mod error;
pub mod gateway;
pub mod invites;
pub mod manage;
pub mod observe;
pub mod openapi_common;
pub mod openid4vp;
pub mod ops;
pub mod receipts;
pub mod request_object;
pub mod verifier;

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::sync::Arc;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::clock::Clock;
use crate::domain::{InviteId, PasswordDigest};
use error::{ApiError, ErrorCode};

/// Everything a request handler may use.
pub struct App {
    /// The application's services: every store call but the hot reads goes through them.
    pub services: crate::app::Services,
    /// The measured hot reads the API makes itself, and nothing else of the store.
    pub reads: crate::app::HotReads,
    pub clock: Arc<dyn Clock>,
    /// Base of gateway URLs, without a trailing slash.
    pub public_url: String,
    /// Digest of the verification provider's bearer token; `None` refuses the verifier API.
    pub verifier_token: Option<PasswordDigest>,
    pub credentials: auth::CredentialCache,
    /// The trust anchors per kind: a kind with anchors is on (docs/kinds.md#credential-kinds).
    pub trust: Arc<crate::trust::TrustHandle>,
    /// The scheme of the same-device link (`--eu-av-wallet-scheme`).
    pub wallet_scheme: String,
    /// The scheme of the signed by-reference link (`--signed-wallet-scheme`).
    pub signed_wallet_scheme: String,
    /// Which wallet links the pending page shows (`--wallet-links`).
    pub wallet_links: crate::domain::presentation::WalletLinks,
    /// The Digital Credentials API channel, on whenever a wallet method is.
    pub dc_api: gateway::dc_api::DcApi,
    /// The loaded ZK circuits and their pool (docs/zk.md#zero-knowledge-proofs);
    /// `None` without `--zk-circuits`.
    pub zk: Option<Arc<crate::zk::Zk>>,
    /// `--credential-status` (docs/credential-status.md).
    pub status_mode: crate::domain::StatusMode,
    /// The credential status lists in hand.
    pub status_lists: Arc<crate::trust::status_lists::StatusLists>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// `--rate-limit`: authenticated requests per second per site; `None` is no limit.
    pub rate_limiter: Option<crate::ratelimit::RateLimiter<crate::domain::SiteId>>,
    openapi_json: Bytes,
    /// The receipt keys' JWK Set as last served.
    pub jwks: receipts::JwksCache,
}

pub type AppState = Arc<App>;

impl App {
    /// The gateway page of an invite.
    pub fn gateway_url(&self, id: &InviteId) -> String {
        crate::domain::invite::gateway_url(&self.public_url, id)
    }

    /// The wallet answer service over this server's services, trust and metrics.
    pub fn verification(&self) -> crate::app::verification::Verification<'_> {
        crate::app::verification::Verification {
            services: &self.services,
            trust: &self.trust,
            metrics: &self.metrics,
            public_url: &self.public_url,
            dc_api_origin: &self.dc_api.origin,
            zk: self.zk.as_deref(),
            signer: self.dc_api.signer.as_ref(),
            status_mode: self.status_mode,
            status_lists: &self.status_lists,
            lane: None,
        }
    }

    /// Opening wallet requests and handing out request objects, over this server's
    /// services, trust, circuits and signing identity.
    pub fn wallet_requests(&self) -> crate::app::wallet_requests::WalletRequests<'_> {
        crate::app::wallet_requests::WalletRequests {
            services: &self.services,
            trust: &self.trust,
            zk: self.zk.as_deref(),
            public_url: &self.public_url,
            signer: self.dc_api.signer.as_ref(),
        }
    }

    /// Marking invites verified without a wallet (the provider's report, the sandbox
    /// control), over this server's services (store, clock, webhook worker) and metrics.
    pub fn marking(&self) -> crate::app::invites::Marking<'_> {
        crate::app::invites::Marking {
            services: &self.services,
            metrics: &self.metrics,
            public_url: &self.public_url,
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "agegate",
        version = "1.0.0",
        description = "Age-verification invites: create an invite for a site, send the visitor to its gateway URL, read its status."
    ),
    tags(
        (name = "invites", description = "The client API (HTTP Basic credentials of a site)"),
        (name = "verifier", description = "The verification provider's API (bearer token)"),
        (name = "gateway", description = "HTML pages for the person being verified"),
        (name = "operations", description = "Health and this document"),
    ),
    modifiers(&Catalogue)
)]
struct ApiDoc;

/// Adds the security schemes and the error catalogue to the document.
struct Catalogue;

impl utoipa::Modify for Catalogue {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "basicAuth",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Basic).build()),
        );
        components.add_security_scheme(
            "verifierToken",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        let description = api.info.description.get_or_insert_with(String::new);
        description.push_str(
            "\n\nEvery error is `{\"error\": <int>, \"message\": <text>}`. The error catalogue:\n\n",
        );
        description.push_str(&error::catalogue_markdown());
    }
}

/// The routes and the OpenAPI document, built from the same declarations so they
/// cannot drift apart.
pub fn routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut api) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(invites::create_invite, manage::list_invites))
        .routes(routes!(invites::get_invite, manage::erase_invite))
        .routes(routes!(manage::cancel_invite))
        .routes(routes!(receipts::get_receipt))
        .routes(routes!(receipts::jwks))
        .routes(routes!(verifier::report_verification))
        .routes(routes!(gateway::show))
        .routes(routes!(gateway::sandbox::approve))
        .merge(wallet_answer_routes())
        .routes(routes!(request_object::fetch, request_object::fetch_posted))
        .routes(routes!(gateway::dc_api::progress))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::openapi))
        .split_for_parts();
    invites::document_optional_create_body(&mut api);
    openapi_common::add_common_responses(&mut api);
    openapi_common::add_challenges(&mut api);
    openapi_common::add_identifier_syntax(&mut api);
    (router, api)
}

/// The two routes wallets answer on, which take bodies up to
/// [`body::WALLET_BODY_LIMIT`] (every other route keeps the edge's [`body::BODY_LIMIT`]):
/// the innermost limit is the one a body is read under.
fn wallet_answer_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(openid4vp::answer))
        .routes(routes!(gateway::dc_api::answer))
        .layer(axum::extract::DefaultBodyLimit::max(
            body::WALLET_BODY_LIMIT,
        ))
}

pub struct AppParts {
    pub services: crate::app::Services,
    pub clock: Arc<dyn Clock>,
    pub public_url: String,
    pub verifier_token: Option<String>,
    pub trust: Arc<crate::trust::TrustHandle>,
    pub wallet_scheme: String,
    pub signed_wallet_scheme: String,
    pub wallet_links: crate::domain::presentation::WalletLinks,
    /// Signed Digital Credentials API requests (`--dc-api-signing-key`/`-cert`).
    pub dc_api_signer: Option<crate::dcapi::RequestSigner>,
    /// `--zk-circuits`: the loaded circuits and their pool; `None` is off.
    pub zk: Option<Arc<crate::zk::Zk>>,
    pub status_mode: crate::domain::StatusMode,
    pub status_lists: Arc<crate::trust::status_lists::StatusLists>,
    pub rate_limit: u32,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Whether anyone reads the metrics (`--metrics-listen`); off, requests skip the
    /// per-request bookkeeping.
    pub observe: bool,
}

/// The complete service, ready to serve.
pub fn router(parts: AppParts) -> edge::Edge {
    let (routes, api) = routes();
    let openapi_json = Bytes::from(api.to_json().expect("the OpenAPI document serializes"));
    let public_url = parts.public_url.trim_end_matches('/').to_owned();
    let state = Arc::new(App {
        reads: parts.services.hot_reads(),
        services: parts.services,
        clock: parts.clock,
        dc_api: gateway::dc_api::DcApi::new(&public_url, parts.dc_api_signer),
        public_url,
        verifier_token: parts.verifier_token.as_deref().map(PasswordDigest::of),
        credentials: auth::CredentialCache::new(),
        trust: parts.trust,
        wallet_scheme: parts.wallet_scheme,
        signed_wallet_scheme: parts.signed_wallet_scheme,
        wallet_links: parts.wallet_links,
        zk: parts.zk,
        status_mode: parts.status_mode,
        status_lists: parts.status_lists,
        rate_limiter: crate::ratelimit::RateLimiter::new(parts.rate_limit),
        metrics: parts.metrics,
        openapi_json,
        jwks: receipts::JwksCache::default(),
    });
    let routes = routes
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed);
    let routes = if parts.observe {
        routes.layer(axum::middleware::from_fn_with_state(
            state.clone(),
            observe::observe,
        ))
    } else {
        routes
    };
    edge::Edge::new(routes.with_state(state))
}

async fn route_not_found() -> Response {
    ApiError::from(ErrorCode::RouteNotFound).into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::from(ErrorCode::MethodNotAllowed).into_response()
}
