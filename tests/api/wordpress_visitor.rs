//! A visitor of the test's WordPress without a browser: plain HTTP requests with the
//! cookies WordPress set (kept by hand), and the checks of the plugin that need no page
//! to be rendered: forged returns, feeds and the REST API, webhook signatures, and the
//! unavailable page.

use crate::helpers::{self, TestSite};
use crate::wordpress_site::WordPress;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::BTreeMap;

pub const GATED: &str = "GATED-MARKER";
pub const SHORTCODE: &str = "SHORTCODE-MARKER";
pub const OPEN: &str = "OPEN-MARKER";
pub const UNAVAILABLE: &str = "Age verification is unavailable right now; please try again shortly";
pub const NOT_CONFIRMED: &str = "Your age could not be confirmed. Please try again.";

/// One answer: status, the cookies it set, where it redirects, its body.
pub struct Page {
    pub status: u16,
    pub set_cookies: Vec<String>,
    pub location: Option<String>,
    pub body: String,
}

impl Page {
    /// Whether it sets cookie `name` to a value (not a deletion).
    pub fn sets(&self, name: &str) -> bool {
        self.set_cookies.iter().any(|c| {
            c.starts_with(&format!("{name}=")) && !c.starts_with(&format!("{name}=deleted"))
        })
    }

    /// The gate page: heading and button, nothing of the gated post.
    pub fn assert_gate(&self, what: &str) {
        assert!(
            self.body.contains("<h1>Age verification required</h1>")
                && self.body.contains("Verify your age"),
            "{what}: the gate page, got {} {}",
            self.status,
            self.body
        );
        assert!(
            !self.body.contains(GATED),
            "{what}: the gated content leaked"
        );
    }
}

pub struct Visitor<'a> {
    pub site: &'a WordPress,
    client: reqwest::Client,
    pub cookies: BTreeMap<String, String>,
}

impl<'a> Visitor<'a> {
    pub fn new(site: &'a WordPress) -> Self {
        Self {
            site,
            client: helpers::client(),
            cookies: BTreeMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        let pairs: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        pairs.join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let resp = request
            .header("Cookie", self.cookie_header())
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let set_cookies: Vec<String> = resp
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        for cookie in &set_cookies {
            let pair = cookie.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            if value == "deleted" || cookie.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        let location = resp
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        Page {
            status,
            set_cookies,
            location,
            body: resp.text().await.unwrap(),
        }
    }

    /// GET a path of the site (no redirect followed).
    pub async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(self.site.url(path));
        self.send(request).await
    }

    /// POST a form to a path of the site.
    pub async fn post(&mut self, path: &str, form: &[(&str, String)]) -> Page {
        let request = self.client.post(self.site.url(path)).form(form);
        self.send(request).await
    }

    /// Logs in through wp-login.php; the session's cookies are kept.
    pub async fn log_in(&mut self, user: &str, password: &str) {
        self.cookies
            .insert("wordpress_test_cookie".into(), "WP%20Cookie%20check".into());
        let form = [
            ("log", user.to_owned()),
            ("pwd", password.to_owned()),
            ("testcookie", "1".to_owned()),
        ];
        let page = self.post("/wp-login.php", &form).await;
        assert_eq!(page.status, 302, "logging {user} in: {}", page.body);
    }

    /// Presses "Verify your age" on the gate page of `path`: the answer to the POST.
    pub async fn press_verify(&mut self, path: &str) -> Page {
        let gate = self.get(path).await;
        gate.assert_gate(path);
        let nonce = field(&gate.body, "agegate_nonce");
        let back = field(&gate.body, "agegate_back");
        let action = format!("{}/wp-admin/admin-post.php", self.site.base);
        let form = [
            ("action", "agegate_verify".to_owned()),
            ("agegate_nonce", nonce),
            ("agegate_back", back),
        ];
        let request = self.client.post(action).form(&form);
        self.send(request).await
    }

    /// Comes back as agegate sends a verified visitor back, with `vs`.
    pub async fn return_with(&mut self, vs: &str) -> Page {
        self.get(&format!("/?agegate_return=1&vs={vs}")).await
    }
}

/// The value of the hidden input `name` in `html`.
pub fn field(html: &str, name: &str) -> String {
    let at = html
        .find(&format!("name=\"{name}\""))
        .unwrap_or_else(|| panic!("no field {name} in {html}"));
    let rest = &html[at..];
    let start = rest.find("value=\"").unwrap() + "value=\"".len();
    let end = rest[start..].find('"').unwrap();
    rest[start..start + end]
        .replace("&#038;", "&")
        .replace("&amp;", "&")
}

/// The invite id at the end of a gateway URL.
pub fn invite_id_of(gateway_url: &str) -> String {
    let id = gateway_url.rsplit('/').next().unwrap().to_owned();
    assert!(
        gateway_url.contains("/gateway/") && !id.is_empty(),
        "{gateway_url}"
    );
    id
}

/// A Standard Webhooks delivery of `body` signed with `secret` (or `key_secret` for the
/// signing key, when forging) at `timestamp`.
pub async fn post_webhook(
    site: &WordPress,
    key_secret: &str,
    id: &str,
    timestamp: i64,
    body: &str,
) -> (u16, String) {
    let key = base64::engine::general_purpose::STANDARD
        .decode(key_secret.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let resp = helpers::client()
        .post(site.url("/wp-json/agegate/v1/webhook"))
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", format!("v1,{signature}"))
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// An `invite.verified` event of `site` for `custom_id`, as agegate sends it.
pub fn verified_event(site: &TestSite, custom_id: &str) -> String {
    serde_json::json!({
        "type": "invite.verified",
        "timestamp": "2026-11-29T01:00:00Z",
        "data": {
            "siteId": site.site_id,
            "inviteId": "abcdefghabcdefghabcdefghabcdef",
            "url": "http://localhost/gateway/abcdefghabcdefghabcdefghabcdef",
            "status": "verified",
            "customId": custom_id,
            "method": "verifier",
        }
    })
    .to_string()
}

/// The verified cookie WordPress would set for `expires`, keyed with its auth salt.
pub fn verified_cookie(site: &WordPress, expires: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(site.auth_salt().as_bytes()).unwrap();
    mac.update(format!("agegate_verified|{expires}").as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{expires}.{hex}")
}
