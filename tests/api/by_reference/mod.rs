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

use crate::helpers::Identity;
use crate::helpers::{gateway_page, spawn_signing_app, SiteOptions, TestApp, TestSite, T0};
use crate::wallet::{html_unescape, sha256, Presentation, TestIssuer};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};
use std::path::PathBuf;

use agegate::testkit::DAY;

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
        let app = spawn_signing_app(&issuer, &identity, configure).await;
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
        let html = gateway_page(&app.client, &url).await;
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

    /// The by-reference link's `request_uri`: where the wallet fetches the request object.
    pub fn request_uri(&self) -> String {
        let link = url::Url::parse(&self.link()).unwrap();
        link.query_pairs()
            .find(|(k, _)| k == "request_uri")
            .expect("a request_uri")
            .1
            .into_owned()
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

    /// The claim the first credential query asks for (`age_over_NN`).
    pub fn claim(&self) -> String {
        self.payload()["dcql_query"]["credentials"][0]["claims"][0]["path"][1]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The DCQL credential query ids, in order.
    pub fn credential_ids(&self) -> Vec<String> {
        self.of_each_credential("id")
    }

    pub fn formats(&self) -> Vec<String> {
        self.of_each_credential("format")
    }

    /// The text member `name` of each DCQL credential query, in order.
    fn of_each_credential(&self, name: &str) -> Vec<String> {
        self.payload()["dcql_query"]["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[name].as_str().unwrap().to_owned())
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
    let claim = resolved.claim();
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
