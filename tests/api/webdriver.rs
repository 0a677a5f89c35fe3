//! The W3C WebDriver commands the browser tests use (JSON over HTTP to chromedriver on
//! loopback), and chromedriver's Chrome DevTools Protocol passthrough.
//!
//! In the tree rather than a crate: the few commands are plain HTTP requests over the
//! `reqwest` the tests already use, while fantoccini 0.22 brings the `webdriver` crate
//! and with it second copies of `http`, `cookie` and the ICU crates.

use serde_json::{json, Value};
use std::time::Duration;

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session: `{driver}/session/{id}`.
pub struct Session {
    http: reqwest::Client,
    url: String,
}

/// An element of the current page.
pub struct Element<'a> {
    session: &'a Session,
    id: String,
}

impl Session {
    /// `POST /session` with `capabilities` as `alwaysMatch`.
    pub async fn start(
        driver_url: &str,
        capabilities: serde_json::Map<String, Value>,
    ) -> Result<Session, String> {
        let http = reqwest::Client::builder()
            .no_proxy()
            // Starting Chromium can take a while on a loaded machine; no command more.
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let body = json!({ "capabilities": { "alwaysMatch": capabilities } });
        let value = call(
            &http,
            reqwest::Method::POST,
            format!("{driver_url}/session"),
            Some(body),
        )
        .await
        .map_err(|e| format!("new session: {e}"))?;
        let id = value["sessionId"]
            .as_str()
            .ok_or_else(|| format!("new session: no sessionId in {value}"))?;
        Ok(Session {
            http,
            url: format!("{driver_url}/session/{id}"),
        })
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, String> {
        let url = format!("{}{path}", self.url);
        call(&self.http, reqwest::Method::POST, url, Some(body)).await
    }

    async fn get(&self, path: &str) -> Result<Value, String> {
        let url = format!("{}{path}", self.url);
        call(&self.http, reqwest::Method::GET, url, None).await
    }

    /// Navigates and waits for the page to load.
    pub async fn goto(&self, url: &str) -> Result<(), String> {
        self.post("/url", json!({ "url": url })).await.map(drop)
    }

    pub async fn current_url(&self) -> Result<String, String> {
        let value = self.get("/url").await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("the current URL is {value}"))
    }

    /// The first element matching the CSS `selector`, now (no implicit wait).
    pub async fn find(&self, selector: &str) -> Result<Element<'_>, String> {
        let body = json!({ "using": "css selector", "value": selector });
        let value = self.post("/element", body).await?;
        let id = value[ELEMENT]
            .as_str()
            .ok_or_else(|| format!("no element reference in {value}"))?;
        Ok(Element {
            session: self,
            id: id.to_owned(),
        })
    }

    /// A Chrome DevTools Protocol command through chromedriver
    /// (`POST /session/{id}/goog/cdp/execute`); the command's result.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Result<Value, String> {
        self.post("/goog/cdp/execute", json!({ "cmd": cmd, "params": params }))
            .await
    }

    /// Runs `script` (a function body) in the page with `args`; what it returns.
    pub async fn execute(&self, script: &str, args: Value) -> Result<Value, String> {
        self.post("/execute/sync", json!({ "script": script, "args": args }))
            .await
    }

    /// Resizes the window (its outer size, in CSS pixels).
    pub async fn set_window_size(&self, width: u32, height: u32) -> Result<(), String> {
        let rect = json!({ "width": width, "height": height });
        self.post("/window/rect", rect).await.map(drop)
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>, String> {
        use base64::Engine;
        let value = self.get("/screenshot").await?;
        let text = value.as_str().ok_or("no screenshot")?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("screenshot: {e}"))
    }

    /// The current page's HTML as the browser has it now.
    pub async fn source(&self) -> Result<String, String> {
        let value = self.get("/source").await?;
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("the page source is {value}"))
    }

    /// The cookie `name` of the current page's site, as WebDriver serializes it
    /// (`name`, `value`, `httpOnly`, `secure`, `sameSite`, `expiry`, ...); `None` if unset.
    pub async fn cookie(&self, name: &str) -> Result<Option<Value>, String> {
        let all = self.get("/cookie").await?;
        Ok(all
            .as_array()
            .and_then(|cookies| cookies.iter().find(|c| c["name"] == name).cloned()))
    }

    /// Ends the session, which quits its browser.
    pub async fn close(self) -> Result<(), String> {
        call(&self.http, reqwest::Method::DELETE, self.url.clone(), None)
            .await
            .map(drop)
    }
}

impl Element<'_> {
    fn path(&self, what: &str) -> String {
        format!("/element/{}/{what}", self.id)
    }

    pub async fn click(&self) -> Result<(), String> {
        self.session
            .post(&self.path("click"), json!({}))
            .await
            .map(drop)
    }

    pub async fn attr(&self, name: &str) -> Result<Option<String>, String> {
        let value = self
            .session
            .get(&self.path(&format!("attribute/{name}")))
            .await?;
        Ok(value.as_str().map(str::to_owned))
    }

    /// Types `text` into the element.
    pub async fn send_keys(&self, text: &str) -> Result<(), String> {
        self.session
            .post(&self.path("value"), json!({ "text": text }))
            .await
            .map(drop)
    }

    pub async fn is_displayed(&self) -> Result<bool, String> {
        let value = self.session.get(&self.path("displayed")).await?;
        Ok(value.as_bool().unwrap_or(false))
    }

    pub async fn text(&self) -> Result<String, String> {
        let value = self.session.get(&self.path("text")).await?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }
}

/// One command: the answer's `value`, or its WebDriver error as text.
async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> Result<Value, String> {
    let request = http.request(method.clone(), &url);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    let resp = request
        .send()
        .await
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let status = resp.status();
    let answer: Value = resp
        .json()
        .await
        .map_err(|e| format!("{method} {url}: {status}, not JSON: {e}"))?;
    let value = answer["value"].clone();
    if status.is_success() {
        Ok(value)
    } else {
        Err(format!(
            "{method} {url}: {status} {}: {}",
            value["error"], value["message"]
        ))
    }
}
