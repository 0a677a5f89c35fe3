//! Signed requests by reference (docs/wallets.md#signed-requests-by-reference) from the
//! wallet's side, played by code agegate did not write: the OpenWallet Foundation's
//! `@openid4vc/openid4vp` 0.4.6 resolves the by-reference link (fetches the request
//! object with POST and the wallet's metadata, checks its signature by the `x5c` leaf
//! and the `x509_hash` client id, reads the DCQL query), and `jwcrypto` encrypts the
//! answer to the key the request names. The DeviceResponse comes from the test issuer,
//! its device signature over the B.2.6.1 transcript computed here.

mod flow;
mod refusals;
mod serve;
mod zk_offer;

use crate::helpers::{spawn_app_with, SiteOptions, TestApp, TestSite, T0};
use crate::wallet::{html_unescape, sha256, Presentation, TestIssuer};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};
use std::path::PathBuf;

pub const DAY: i64 = 86_400;

/// A verifier's signing identity: a leaf issued by a CA (not self-signed), valid
/// around `T0`, as PEM files in a directory that lives as long as it.
pub struct Identity {
    pub key: PathBuf,
    pub cert: PathBuf,
    pub leaf_der: Vec<u8>,
    pub ca_der: Vec<u8>,
    _dir: tempfile::TempDir,
}

impl Identity {
    /// A leaf that is its own issuer (allowed, with a warning: HAIP wallets refuse it).
    pub fn self_signed(from: i64, until: i64) -> Self {
        let at =
            |t: i64| rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(t as u64);
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut leaf = rcgen::CertificateParams::new(vec!["age.example".into()]).unwrap();
        leaf.not_before = at(from);
        leaf.not_after = at(until);
        let leaf = leaf.self_signed(&key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (key_path, cert_path) = (dir.path().join("key.pem"), dir.path().join("leaf.pem"));
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        std::fs::write(&cert_path, leaf.pem()).unwrap();
        Identity {
            key: key_path,
            cert: cert_path,
            leaf_der: leaf.der().to_vec(),
            ca_der: Vec::new(),
            _dir: dir,
        }
    }

    pub fn ca_issued(from: i64, until: i64) -> Self {
        let at =
            |t: i64| rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(t as u64);
        let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca = rcgen::CertificateParams::new(vec![]).unwrap();
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "agegate test registrar CA");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.not_before = at(from - DAY);
        ca.not_after = at(until + DAY);
        let ca = ca.self_signed(&ca_key).unwrap();
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut leaf = rcgen::CertificateParams::new(vec!["age.example".into()]).unwrap();
        leaf.distinguished_name
            .push(rcgen::DnType::CommonName, "age.example verifier");
        leaf.not_before = at(from);
        leaf.not_after = at(until);
        let leaf = leaf.signed_by(&key, &ca, &ca_key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (key_path, cert_path) = (dir.path().join("key.pem"), dir.path().join("chain.pem"));
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        std::fs::write(&cert_path, format!("{}{}", leaf.pem(), ca.pem())).unwrap();
        Identity {
            key: key_path,
            cert: cert_path,
            leaf_der: leaf.der().to_vec(),
            ca_der: ca.der().to_vec(),
            _dir: dir,
        }
    }

    pub fn signer(&self) -> agegate::dcapi::RequestSigner {
        agegate::config::load_dc_api_signer(&self.key, &self.cert, T0).expect("a valid identity")
    }
}

/// A server signing with a CA-issued identity and trusting `issuer` for eu-av; an
/// invite of a site on it, and its pending page.
pub struct RefCase {
    pub issuer: TestIssuer,
    pub identity: Identity,
    pub app: TestApp,
    pub site: TestSite,
    pub invite_id: String,
    pub url: String,
    pub html: String,
}

impl RefCase {
    pub async fn new() -> Self {
        Self::with(|_| {}).await
    }

    pub async fn with(configure: impl FnOnce(&mut agegate::config::Settings)) -> Self {
        let issuer = TestIssuer::new(T0);
        let identity = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
        let signer = identity.signer();
        let app = spawn_app_with(|s| {
            s.trust = crate::helpers::trusting(agegate::domain::Kind::EU_AV, &issuer.ca_pem);
            s.dc_api_signer = Some(signer);
            configure(s);
        })
        .await;
        Self::on(issuer, identity, app, SiteOptions::default()).await
    }

    pub async fn on(
        issuer: TestIssuer,
        identity: Identity,
        app: TestApp,
        options: SiteOptions<'_>,
    ) -> Self {
        let site = app.create_site_with(options).await;
        let invite = app.new_invite(&site, None).await;
        let url = invite["url"].as_str().unwrap().to_owned();
        let html = app
            .client
            .get(&url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        RefCase {
            issuer,
            identity,
            app,
            site,
            invite_id: invite["inviteId"].as_str().unwrap().to_owned(),
            url,
            html,
        }
    }

    /// The by-reference link on the page.
    pub fn link(&self) -> String {
        link_with_id(&self.html, "signed-link").expect("a by-reference link")
    }

    pub async fn status(&self) -> String {
        let record = self.app.status_record(&self.site, &self.invite_id).await;
        record["status"].as_str().unwrap().to_owned()
    }

    /// `POST {response_uri}` with the form `fields`.
    pub async fn post_answer(
        &self,
        response_uri: &str,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        self.app
            .client
            .post(response_uri)
            .form(fields)
            .send()
            .await
            .unwrap()
    }
}

/// The `href` of the element with `id` on a page, unescaped; also for other tests.
pub fn link_with_id(html: &str, id: &str) -> Option<String> {
    let at = html.find(&format!("id=\"{id}\""))?;
    let rest = &html[at..];
    let start = rest.find("href=\"")? + 6;
    let end = rest[start..].find('"')?;
    Some(html_unescape(&rest[start..start + end]))
}

/// What `@openid4vc/openid4vp` resolved, as `tests/openid4vp-wallet/resolve.mjs` prints it.
pub struct Resolved {
    pub out: Value,
}

impl Resolved {
    pub fn payload(&self) -> &Value {
        &self.out["payload"]
    }

    pub fn text(&self, name: &str) -> String {
        self.payload()[name].as_str().unwrap().to_owned()
    }

    /// The request's encryption key, as its `client_metadata.jwks` gives it.
    pub fn jwk(&self) -> &Value {
        &self.payload()["client_metadata"]["jwks"]["keys"][0]
    }

    /// The DCQL credential query ids, in order.
    pub fn credential_ids(&self) -> Vec<String> {
        self.payload()["dcql_query"]["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn formats(&self) -> Vec<String> {
        self.payload()["dcql_query"]["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["format"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// The directory of the wallet script and its pinned `node_modules` (`scripts/setup.sh`).
fn wallet_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/openid4vp-wallet")
}

/// Resolves `link` as a wallet on `@openid4vc/openid4vp` does, posting `metadata`
/// (none: `null`); the library's error when it refuses.
pub async fn resolve(link: &str, metadata: &Value) -> Result<Resolved, String> {
    let dir = wallet_dir();
    assert!(
        dir.join("node_modules/@openid4vc/openid4vp").is_dir(),
        "@openid4vc/openid4vp is not installed in {}: run `bash scripts/setup.sh`",
        dir.display()
    );
    let mut command = std::process::Command::new("node");
    command.current_dir(&dir).arg("resolve.mjs").arg(link);
    if !metadata.is_null() {
        command.arg(metadata.to_string());
    }
    // On the blocking pool: the server under test answers the script's fetch meanwhile.
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("node runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let out = serde_json::from_slice(&out.stdout).expect("resolve.mjs prints JSON");
    Ok(Resolved { out })
}

/// Wallet metadata as a HAIP wallet declares it: mso_mdoc (and `mso_mdoc_zk` with `zk`),
/// and the `enc` values it supports.
pub fn wallet_metadata(zk: bool, enc: &[&str]) -> Value {
    let mut formats =
        json!({"mso_mdoc": {"issuerauth_alg_values": [-7], "deviceauth_alg_values": [-7]}});
    if zk {
        formats["mso_mdoc_zk"] = json!({});
    }
    json!({
        "vp_formats_supported": formats,
        "authorization_encryption_alg_values_supported": ["ECDH-ES"],
        "authorization_encryption_enc_values_supported": enc,
    })
}

/// RFC 7638 SHA-256 thumbprint of an EC JWK: its required members in lexical order.
pub fn thumbprint(jwk: &Value) -> Vec<u8> {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap(),
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap()
    );
    sha256(canonical.as_bytes()).to_vec()
}

/// OpenID4VP 1.0 B.2.6.1: `[null, null, ["OpenID4VPHandover", SHA-256(CBOR([client_id,
/// nonce, jwkThumbprint, response_uri]))]]`; `thumbprint` `None` leaves it null (the
/// transcript of an unencrypted answer).
pub fn transcript(resolved: &Resolved, thumbprint: Option<Vec<u8>>) -> ciborium::Value {
    use ciborium::Value as C;
    let info = C::Array(vec![
        C::Text(resolved.text("client_id")),
        C::Text(resolved.text("nonce")),
        thumbprint.map_or(C::Null, C::Bytes),
        C::Text(resolved.text("response_uri")),
    ]);
    let hash = sha256(&crate::wallet::cbor(&info));
    C::Array(vec![
        C::Null,
        C::Null,
        C::Array(vec![
            C::Text("OpenID4VPHandover".into()),
            C::Bytes(hash.to_vec()),
        ]),
    ])
}

/// The claims a wallet encrypts: `state` and `vp_token` for the request's first
/// credential query, with a DeviceResponse by `issuer` over `transcript`.
pub fn plaintext(
    issuer: &TestIssuer,
    resolved: &Resolved,
    transcript: ciborium::Value,
    p: &Presentation,
) -> String {
    let id = &resolved.credential_ids()[0];
    let device_response = URL_SAFE_NO_PAD.encode(issuer.device_response_cbor_over(transcript, p));
    json!({"state": resolved.text("state"), "vp_token": {id: [device_response]}}).to_string()
}

/// The valid plaintext for `resolved`: bound to its key's thumbprint.
pub fn valid_plaintext(issuer: &TestIssuer, resolved: &Resolved) -> String {
    let claim = resolved.payload()["dcql_query"]["credentials"][0]["claims"][0]["path"][1]
        .as_str()
        .unwrap()
        .to_owned();
    let t = transcript(resolved, Some(thumbprint(resolved.jwk())));
    plaintext(issuer, resolved, t, &Presentation::for_claim(&claim, T0))
}

/// jwcrypto's JWE of `plaintext` to `jwk` (see `encrypt.py` for `alg`).
pub fn encrypt(jwk: &Value, alg: &str, enc: &str, plaintext: &str) -> String {
    let python = crate::schemathesis::venv().join("bin/python");
    let script = include_str!("encrypt.py");
    let out = std::process::Command::new(&python)
        .args(["-c", script, &jwk.to_string(), alg, enc, plaintext])
        .output()
        .expect("the test venv's python (bash scripts/setup.sh)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}
