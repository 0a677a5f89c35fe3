//! The benchmark's ceiling: the invite API's two routes on the same stack (tokio, hyper,
//! axum, serde_json), with the same Basic check (SHA-256 digest, constant-time compare)
//! and the same JSON shapes, but no storage. What agegate keeps of this server's speed
//! is what its own work costs. Used by `bench/run.sh`; not part of the product.
//!
//!   cargo run --release --example ceiling -- 127.0.0.1:9000 SITE_ID USERNAME PASSWORD

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use subtle::ConstantTimeEq;

struct Site {
    id: String,
    username: String,
    digest: [u8; 32],
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CreateBody {
    #[serde(default)]
    custom_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invite {
    invite_id: String,
    url: String,
    expires: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusRecord {
    invite_id: String,
    url: String,
    status: &'static str,
    custom_id: Option<String>,
}

#[derive(Serialize)]
struct ErrorBody {
    error: u32,
    message: &'static str,
}

fn error(status: StatusCode, code: u32, message: &'static str) -> Response {
    (
        status,
        Json(ErrorBody {
            error: code,
            message,
        }),
    )
        .into_response()
}

/// The same decision agegate makes before any handler runs: a Basic credential whose
/// password digest matches, for the site in the path.
fn authorized(site: &Site, headers: &HeaderMap, path_site: &str) -> Result<(), Box<Response>> {
    let unauthorized = || {
        Box::new(error(
            StatusCode::UNAUTHORIZED,
            40101,
            "invalid credentials",
        ))
    };
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(unauthorized)?;
    let (scheme, encoded) = value.trim().split_once(' ').ok_or_else(unauthorized)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(unauthorized());
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| unauthorized())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unauthorized())?;
    let (user, pass) = decoded.split_once(':').ok_or_else(unauthorized)?;
    let digest: [u8; 32] = Sha256::digest(pass.as_bytes()).into();
    if user != site.username || !bool::from(digest.ct_eq(&site.digest)) {
        return Err(unauthorized());
    }
    if path_site != site.id {
        return Err(Box::new(error(StatusCode::FORBIDDEN, 40301, "wrong site")));
    }
    Ok(())
}

fn invite_id() -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

async fn create(
    State(site): State<Arc<Site>>,
    Path(site_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(r) = authorized(&site, &headers, &site_id) {
        return *r;
    }
    let parsed: CreateBody = if body.is_empty() {
        CreateBody::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(b) => b,
            Err(_) => return error(StatusCode::BAD_REQUEST, 40001, "malformed JSON"),
        }
    };
    drop(parsed.custom_id);
    let id = invite_id();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Json(Invite {
        url: format!("http://127.0.0.1/gateway/{id}"),
        invite_id: id,
        expires: now + 86_400,
    })
    .into_response()
}

async fn read(
    State(site): State<Arc<Site>>,
    Path((site_id, invite_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = authorized(&site, &headers, &site_id) {
        return *r;
    }
    Json([StatusRecord {
        url: format!("http://127.0.0.1/gateway/{invite_id}"),
        invite_id,
        status: "pending",
        custom_id: Some("bench-user".to_owned()),
    }])
    .into_response()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, id, username, password] = args.as_slice() else {
        eprintln!("usage: ceiling LISTEN SITE_ID USERNAME PASSWORD");
        std::process::exit(2);
    };
    let site = Arc::new(Site {
        id: id.clone(),
        username: username.clone(),
        digest: Sha256::digest(password.as_bytes()).into(),
    });
    let app = Router::new()
        .route("/v1/website/{site_id}/invite", post(create))
        .route("/v1/website/{site_id}/invite/{invite_id}", get(read))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(site);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    axum::serve(listener, app).await
}
