//! The fixtures of the credential-status tests (`credential_status*.rs`, and the
//! console's counts by status): list tokens made and signed by implementations nobody on
//! agegate wrote (scripts/status-list-token.py: PyPI's token-status-list, cbor2, pycose),
//! a loopback list host that counts its fetches, and answers naming a status.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agegate::domain::StatusMode;
use agegate::testkit::StatusSigner;
use serde_json::{json, Value};
use sha2::Digest as _;

use crate::eu_av::{answer, eu_av_app_with, invite_with_request};
use crate::helpers::{SiteOptions, TestApp, TestSite, T0};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};

const REQUIREMENTS: &str = include_str!("../../scripts/status-requirements.txt");

/// The venv `scripts/setup.sh` made from scripts/status-requirements.txt.
fn python() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"));
    let digest = sha2::Sha256::digest(REQUIREMENTS.as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let python = cache.join(format!("agegate-status-{hash}/bin/python"));
    assert!(
        python.is_file(),
        "{} is missing: run `bash scripts/setup.sh`",
        python.display()
    );
    python
}

/// A token made by scripts/status-list-token.py from `spec` (its keys as the script
/// documents them).
pub fn token(spec: &Value) -> Vec<u8> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/status-list-token.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 1-bit status list of `size` entries at `uri`, `statuses` set, signed by `signer`
/// with it in x5chain; `change` edits the spec first.
pub fn status_list(
    uri: &str,
    signer: &StatusSigner,
    statuses: Value,
    change: impl FnOnce(&mut Value),
) -> Vec<u8> {
    let mut spec = json!({
        "form": "status_list", "uri": uri, "iat": T0 - 60, "exp": T0 + 86_400, "ttl": 600,
        "bits": 1, "size": 1024, "statuses": statuses,
        "key_pem": signer.key_pem, "x5chain": [hex(&signer.cert_der)],
    });
    change(&mut spec);
    token(&spec)
}

/// What the list server serves at one path.
#[derive(Clone, Default)]
pub struct Served {
    pub body: Vec<u8>,
    pub delay: Duration,
    /// A `302` to this location instead.
    pub redirect: Option<String>,
    /// Any status but 200.
    pub status: Option<u16>,
}

/// A loopback list host that counts fetches by path and keeps their Accept headers.
#[derive(Clone)]
pub struct ListServer {
    pub addr: SocketAddr,
    served: Arc<Mutex<HashMap<String, Served>>>,
    fetches: Arc<Mutex<Vec<(String, String)>>>,
}

impl ListServer {
    pub async fn start() -> Self {
        let served: Arc<Mutex<HashMap<String, Served>>> = Arc::default();
        let fetches: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let (s, f) = (served.clone(), fetches.clone());
        let handler = move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
            let (s, f) = (s.clone(), f.clone());
            async move {
                let path = uri.path().to_owned();
                let accept = headers
                    .get("accept")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                f.lock().unwrap().push((path.clone(), accept));
                let entry = s.lock().unwrap().get(&path).cloned();
                let Some(entry) = entry else {
                    return axum::http::Response::builder()
                        .status(404)
                        .body(axum::body::Body::empty())
                        .unwrap();
                };
                tokio::time::sleep(entry.delay).await;
                let builder = axum::http::Response::builder();
                match entry.redirect {
                    Some(to) => builder
                        .status(302)
                        .header("location", to)
                        .body(axum::body::Body::empty()),
                    None => builder
                        .status(entry.status.unwrap_or(200))
                        .header("content-type", "application/statuslist+cwt")
                        .body(axum::body::Body::from(entry.body)),
                }
                .unwrap()
            }
        };
        let router = axum::Router::new().fallback(handler);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        ListServer {
            addr,
            served,
            fetches,
        }
    }

    pub fn uri(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn serve(&self, path: &str, served: Served) {
        self.served.lock().unwrap().insert(path.to_owned(), served);
    }

    pub fn serve_body(&self, path: &str, body: Vec<u8>) {
        self.serve(
            path,
            Served {
                body,
                ..Served::default()
            },
        );
    }

    /// How many times `path` was fetched.
    pub fn fetches(&self, path: &str) -> usize {
        self.fetches
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .count()
    }

    pub fn accepts(&self, path: &str) -> Vec<String> {
        let fetches = self.fetches.lock().unwrap();
        fetches
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, a)| a.clone())
            .collect()
    }
}

/// A server trusting `issuer` with `--credential-status mode` and metrics.
pub async fn status_app(issuer: &TestIssuer, mode: StatusMode) -> TestApp {
    eu_av_app_with(issuer, |s| {
        s.credential_status = mode;
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await
}

/// A new invite's request answered with `issuer`'s credential naming `status`.
pub async fn answer_with_status(
    app: &TestApp,
    issuer: &TestIssuer,
    status: Option<ciborium::Value>,
) -> (TestSite, String, reqwest::Response) {
    let (site, invite, req) = invite_with_request(app, SiteOptions::default()).await;
    let resp = answer_req(app, issuer, &req, status).await;
    (site, invite["inviteId"].as_str().unwrap().to_owned(), resp)
}

pub async fn answer_req(
    app: &TestApp,
    issuer: &TestIssuer,
    req: &AuthorizationRequest,
    status: Option<ciborium::Value>,
) -> reqwest::Response {
    let mut p = Presentation::for_request(req, T0);
    p.mso_status = status;
    answer(app, req, &issuer.vp_token(req, &p)).await
}

/// The receipt's `credentialStatus` of a verified invite.
pub async fn receipt_status(app: &TestApp, site: &TestSite, id: &str) -> Value {
    let receipt = crate::receipts::receipt_of(app, site, id).await;
    crate::receipts::decode(&receipt).1["credentialStatus"].clone()
}

/// A refusal's 400 and its message.
pub async fn refused(resp: reqwest::Response) -> String {
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    body["message"].as_str().unwrap().to_owned()
}
