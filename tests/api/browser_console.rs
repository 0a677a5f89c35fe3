//! The operator console in a real browser: headless Chromium, driven through chromedriver,
//! signs in and walks overview → sites → site → invites → invite → redeliver, at 390 px
//! and 1280 px wide, on a deployment with a few thousand invites over 30 days. Every page
//! must fit its width (no horizontal scrolling); each is saved as a PNG under
//! `target/console-screenshots/` for people to look at.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`scripts/setup.sh` installs them);
//! chromedriver is `browser.rs`'s.

use crate::browser::Chromedriver;
use crate::console_helpers::{create_user, seed, spawn_console_with};
use crate::helpers::{until, TestApp, TestSite};
use crate::receiver::TestReceiver;
use crate::webdriver::Session;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Screenshots show the page as people see it: no scrollbars, one pixel per CSS pixel.
const SCREENSHOT_FLAGS: [&str; 2] = ["--hide-scrollbars", "--force-device-scale-factor=1"];
const WIDTHS: [u32; 2] = [390, 1280];
/// The tallest full-page screenshot.
const SCREEN_HEIGHT: u32 = 4000;

#[tokio::test]
async fn the_console_walk_fits_390_and_1280_px_wide_and_redelivers_from_the_invite_page() {
    let receiver = TestReceiver::start().await;
    let app = spawn_console_with(|s| s.allow_private_webhooks = true).await;
    let password = create_user(&app, "operator");
    let shop = seed(&app, &receiver).await;
    let shots = screenshot_dir();
    let driver = Chromedriver::start().await;
    for width in WIDTHS {
        let browser = driver
            .session_in(&format!("profile-{width}"), &SCREENSHOT_FLAGS)
            .await;
        let view = View::of(&browser, width).await;
        let walked = walk(&browser, &view, &app, &shop, &password, &shots).await;
        let closed = browser.close().await;
        walked.unwrap_or_else(|e| panic!("at {width} px: {e}"));
        closed.expect("closing the browser session");
    }
    // Each walk redelivered the event once more.
    let got = receiver.wait_for(3, Duration::from_secs(10)).await;
    assert!(got.len() >= 3, "{} deliveries", got.len());
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

type Walked = Result<(), String>;

/// The page's size as the browser lays it out, set through chromedriver's DevTools
/// endpoint: a viewport exactly `width` CSS px wide (mobile below 600 px, as a phone
/// would), and as tall as the page for a full-page screenshot.
struct View {
    width: u32,
}

impl View {
    async fn of(b: &Session, width: u32) -> Self {
        let view = Self { width };
        view.resize(b, 900).await.unwrap();
        view
    }

    async fn resize(&self, b: &Session, height: u32) -> Walked {
        let params = json!({
            "width": self.width, "height": height, "deviceScaleFactor": 1,
            "mobile": self.width < 600,
        });
        b.cdp("Emulation.setDeviceMetricsOverride", params)
            .await
            .map(drop)
            .map_err(|e| format!("resizing: {e}"))
    }
}

async fn walk(
    b: &Session,
    view: &View,
    app: &TestApp,
    shop: &TestSite,
    password: &str,
    shots: &Path,
) -> Walked {
    let admin = app.admin_base.clone().unwrap();
    open(b, &format!("{admin}/admin/")).await?;
    expect_path(b, "/admin/sign-in").await?;
    check_page(b, view, shots, "sign-in").await?;
    type_into(b, "#username", "operator").await?;
    type_into(b, "#password", password).await?;
    click(b, "#sign-in").await?;
    expect_path(b, "/admin/").await?;
    check_page(b, view, shots, "overview").await?;
    click(b, "header a[href='/admin/sites']").await?;
    expect_path(b, "/admin/sites").await?;
    check_page(b, view, shots, "sites").await?;
    click(b, &format!("a[href='/admin/sites/{}']", shop.site_id)).await?;
    check_page(b, view, shots, "site").await?;
    click(b, "#invites-link").await?;
    check_page(b, view, shots, "invites").await?;
    click(b, "#invites a.id").await?;
    check_page(b, view, shots, "invite").await?;
    click(b, "button.redeliver").await?;
    wait_for_text(b, ".notice", "queued again").await?;
    check_page(b, view, shots, "redelivered").await?;
    click(b, "#sign-out").await?;
    expect_path(b, "/admin/sign-in").await
}

/// No horizontal scrolling at this width; then a full-page screenshot.
async fn check_page(b: &Session, view: &View, shots: &Path, name: &str) -> Walked {
    let metrics = b
        .execute(
            "const e = document.documentElement; \
             return [e.scrollWidth, e.clientWidth, e.scrollHeight, window.innerWidth];",
            json!([]),
        )
        .await
        .map_err(|e| format!("{name}: {e}"))?;
    let n = |i: usize| metrics[i].as_u64().unwrap_or(0);
    let (scroll, client, height, inner) = (n(0), n(1), n(2), n(3));
    let width = view.width;
    if inner != u64::from(width) {
        return Err(format!("{name}: the viewport is {inner} px, not {width}"));
    }
    if scroll > client {
        return Err(format!(
            "{name}: scrolls horizontally ({scroll} > {client} px)"
        ));
    }
    let tall = u32::try_from(height)
        .unwrap_or(SCREEN_HEIGHT)
        .clamp(600, SCREEN_HEIGHT);
    view.resize(b, tall).await?;
    let png = b.screenshot().await.map_err(|e| format!("{name}: {e}"))?;
    std::fs::write(shots.join(format!("{name}-{width}.png")), png).map_err(|e| e.to_string())?;
    view.resize(b, 900).await
}

async fn open(b: &Session, url: &str) -> Walked {
    b.goto(url).await.map_err(|e| format!("opening {url}: {e}"))
}

async fn click(b: &Session, css: &str) -> Walked {
    let el = b.find(css).await.map_err(|e| format!("no {css}: {e}"))?;
    el.click().await.map_err(|e| format!("clicking {css}: {e}"))
}

async fn type_into(b: &Session, css: &str, text: &str) -> Walked {
    let el = b.find(css).await.map_err(|e| format!("no {css}: {e}"))?;
    el.send_keys(text)
        .await
        .map_err(|e| format!("typing into {css}: {e}"))
}

/// Waits up to 10 s for the element `css` to say `needle` (the page may still be loading).
async fn wait_for_text(b: &Session, css: &str, needle: &str) -> Walked {
    until(Duration::from_secs(10), || async move {
        let found = match b.find(css).await {
            Ok(el) => el.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if found.contains(needle) {
            return Ok(());
        }
        Err(format!("after 10 s, {css} says {found:?}, not {needle:?}"))
    })
    .await
}

/// Waits up to 10 s for the browser to be on `path`.
async fn expect_path(b: &Session, path: &str) -> Walked {
    until(Duration::from_secs(10), || async move {
        let url = b.current_url().await?;
        let on = url::Url::parse(&url)
            .map(|u| u.path().to_owned())
            .unwrap_or_default();
        if on == path {
            return Ok(());
        }
        Err(format!("still on {url}, not {path}"))
    })
    .await
}
