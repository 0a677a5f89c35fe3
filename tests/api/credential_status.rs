//! docs/credential-status.md end to end: credentials from the test issuer name a status
//! list or identifier list whose token is made and signed by implementations nobody on
//! agegate wrote (scripts/status-list-token.py: PyPI's token-status-list, cbor2, pycose),
//! served by a loopback server that counts its fetches. Bad inputs are in
//! `credential_status_bad.rs`, transports and nodes in `credential_status_nodes.rs`.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agegate::domain::StatusMode;
use agegate::testkit::{identifier_list_ref, status_list_ref, StatusSigner};
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

fn hex(bytes: &[u8]) -> String {
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

#[tokio::test]
async fn a_revoked_credential_is_refused_and_a_valid_one_verifies_with_credential_status_valid() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    lists.serve_body(
        "/sl/1",
        status_list(&lists.uri("/sl/1"), &signer, json!({"3": 1}), |_| {}),
    );
    let app = status_app(&issuer, StatusMode::Check).await;
    let uri = lists.uri("/sl/1");

    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(3, &uri, None))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");

    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(4, &uri, None))).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    // Fetched whole, once, asking for the CWT form.
    assert_eq!(lists.accepts("/sl/1"), ["application/statuslist+cwt"]);

    let metrics = app.metrics().await;
    for line in [
        "agegate_status_list_fetches_total{result=\"ok\"} 1",
        "agegate_credential_status_total{kind=\"eu-av\",status=\"revoked\"} 1",
        "agegate_credential_status_total{kind=\"eu-av\",status=\"valid\"} 1",
        "agegate_presentations_total{kind=\"eu-av\",transport=\"openid4vp\",outcome=\"revoked\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

#[tokio::test]
async fn each_status_value_is_judged_and_an_index_past_the_end_is_refused() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/2bits");
    // Two bits per entry: 0 valid, 1 revoked, 2 suspended, 3 application-specific.
    let body = status_list(&uri, &signer, json!({"1": 1, "2": 2, "3": 3}), |s| {
        s["bits"] = json!(2);
        s["size"] = json!(16);
    });
    lists.serve_body("/sl/2bits", body);
    let app = status_app(&issuer, StatusMode::Check).await;
    let cases = [
        (1, "presentation refused: the credential is revoked"),
        (2, "presentation refused: the credential is suspended"),
        (3, "presentation refused: the credential's status is not valid (status 3)"),
        (16, "presentation refused: the credential's status index is past the end of its status list"),
    ];
    for (idx, message) in cases {
        let (_, _, resp) =
            answer_with_status(&app, &issuer, Some(status_list_ref(idx, &uri, None))).await;
        assert_eq!(refused(resp).await, message, "idx {idx}");
    }
    let (site, id, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(15, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    assert_eq!(lists.fetches("/sl/2bits"), 1);
}

#[tokio::test]
async fn an_identifier_list_revokes_the_identifiers_it_holds() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/il/1");
    let body = token(&json!({
        "form": "identifier_list", "uri": uri, "iat": T0 - 60, "exp": T0 + 3600,
        "ids": [hex(b"revoked-1"), hex(b"revoked-2")],
        "key_pem": signer.key_pem, "x5chain": [hex(&signer.cert_der)],
    }));
    lists.serve_body("/il/1", body);
    let app = status_app(&issuer, StatusMode::Check).await;
    let (_, _, resp) = answer_with_status(
        &app,
        &issuer,
        Some(identifier_list_ref(b"revoked-2", &uri, None)),
    )
    .await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    let (site, id, resp) = answer_with_status(
        &app,
        &issuer,
        Some(identifier_list_ref(b"fine", &uri, None)),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    assert_eq!(lists.accepts("/il/1"), ["application/identifierlist+cwt"]);
}

#[tokio::test]
async fn a_list_signed_by_the_certificate_the_credential_names_needs_no_x5chain() {
    let issuer = TestIssuer::new(T0);
    // A signer no anchor vouches for: the issuer vouches for it by naming it.
    let signer = agegate::testkit::stranger_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/named");
    lists.serve_body(
        "/sl/named",
        status_list(&uri, &signer, json!({"9": 1}), |s| s["x5chain"] = json!([])),
    );
    let app = status_app(&issuer, StatusMode::Require).await;
    let named = |idx| status_list_ref(idx, &uri, Some(&signer.cert_der));
    let (_, _, resp) = answer_with_status(&app, &issuer, Some(named(9))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: the credential is revoked"
    );
    let (site, id, resp) = answer_with_status(&app, &issuer, Some(named(8))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(receipt_status(&app, &site, &id).await, "valid");
    // Without the certificate, the same list has no signer the kind's anchors know.
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(8, &uri, None))).await;
    let message = refused(resp).await;
    assert!(
        message.contains("cannot be checked") && message.contains("x5chain"),
        "{message}"
    );
}

#[tokio::test]
async fn five_credentials_on_one_list_within_its_ttl_cost_one_fetch_and_then_one_more() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/ttl");
    lists.serve_body("/sl/ttl", status_list(&uri, &signer, json!({}), |_| {}));
    let app = status_app(&issuer, StatusMode::Check).await;
    let mut answers = Vec::new();
    for idx in 0..5 {
        let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
        answers.push((site, invite, req, idx));
    }
    // Five at once: one fetch, the others wait for it.
    let all = answers.iter().map(|(_, _, req, idx)| {
        answer_req(&app, &issuer, req, Some(status_list_ref(*idx, &uri, None)))
    });
    for resp in futures_util::future::join_all(all).await {
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(lists.fetches("/sl/ttl"), 1);
    // Past its ttl (600 s) the copy in hand still answers, and is fetched again behind it.
    app.clock.advance(601);
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(7, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    let refetched = || async { lists.fetches("/sl/ttl") == 2 };
    crate::helpers::eventually("the list fetched again", Duration::from_secs(5), refetched).await;
    let (_, _, resp) =
        answer_with_status(&app, &issuer, Some(status_list_ref(8, &uri, None))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(lists.fetches("/sl/ttl"), 2);
}

#[tokio::test]
async fn a_credential_whose_issuer_signature_fails_names_a_list_never_fetched() {
    let issuer = TestIssuer::new(T0);
    let signer = issuer.status_signer(T0);
    let lists = ListServer::start().await;
    let uri = lists.uri("/sl/never");
    lists.serve_body("/sl/never", status_list(&uri, &signer, json!({}), |_| {}));
    let app = status_app(&issuer, StatusMode::Require).await;
    let (_, _, req) = invite_with_request(&app, SiteOptions::default()).await;
    let mut p = Presentation::for_request(&req, T0);
    p.mso_status = Some(status_list_ref(1, &uri, None));
    p.bad_issuer_signature = true;
    let resp = answer(&app, &req, &issuer.vp_token(&req, &p)).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: issuer signature is invalid"
    );
    // Nor for a stranger's credential that is otherwise well made.
    let stranger = TestIssuer::new(T0);
    let resp = answer_req(&app, &stranger, &req, Some(status_list_ref(1, &uri, None))).await;
    assert_eq!(
        refused(resp).await,
        "presentation refused: issuer is not trusted"
    );
    assert_eq!(lists.fetches("/sl/never"), 0);
}
