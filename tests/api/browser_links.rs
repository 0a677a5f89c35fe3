//! Both wallet links in a real browser (docs/wallets.md#signed-requests-by-reference):
//! headless Chromium shows the pending page of a site accepting every kind, proofs
//! preferred, on a server with circuits and a signing identity, at 390 and 1280 px wide.
//! Each QR code, scrolled into view and read back from the screenshot's pixels by rqrr,
//! is exactly its link; the screenshots are saved under `target/gateway-screenshots/`
//! for people to look at. The page, as sent compressed, stays under 25 KB.

use crate::browser::Chromedriver;
use crate::by_reference::link_with_id;
use crate::helpers::Identity;
use crate::helpers::{SiteOptions, T0};
use crate::webdriver::Session;
use crate::zk::ZkServer;
use agegate::domain::Kind;
use agegate::mdoc::TrustAnchors;
use agegate::testkit::DAY;
use agegate::trust::{AnchorSource, Trust, TrustHandle};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCREENSHOT_FLAGS: [&str; 1] = ["--hide-scrollbars"];

/// A server with circuits, a CA-issued signing identity and all five kinds on; a site
/// accepting them all, proofs preferred; an invite's page URL.
async fn five_kinds_page() -> (ZkServer, String) {
    let identity = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let signer = identity.signer();
    let pem = crate::zk::iaca_pem();
    let anchors = Arc::new(TrustAnchors::from_pem(&pem).unwrap());
    let trust = TrustHandle::fixed(Trust::from_sources(
        Kind::all()
            .map(|kind| AnchorSource {
                kind,
                origin: "test".into(),
                anchors: anchors.clone(),
            })
            .collect(),
    ));
    let server = ZkServer::start_with(1, |s| {
        s.trust = trust;
        s.dc_api_signer = Some(signer);
    })
    .await;
    let site = server.app.create_site_with(SiteOptions::default()).await;
    let invite = server.app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap().to_owned();
    (server, url)
}

#[tokio::test]
async fn both_links_show_at_390_and_1280_px_and_each_qr_code_reads_back_as_its_link() {
    let (server, url) = five_kinds_page().await;
    let html = crate::helpers::gateway_page(&server.app.client, &url).await;
    let by_value = link_with_id(&html, "eu-av-link").expect("the by-value link");
    let by_reference = link_with_id(&html, "signed-link").expect("the by-reference link");
    assert!(
        !by_value.contains("mso_mdoc_zk"),
        "no proof offered by value"
    );
    let dir = screenshot_dir();
    let driver = Chromedriver::start().await;
    for width in [390, 1280] {
        let browser = driver
            .session_in(&format!("links-{width}"), &SCREENSHOT_FLAGS)
            .await;
        let shown = show(
            &browser,
            &url,
            width,
            &dir,
            &[("#eu-av-qr", &by_value), ("#signed-qr", &by_reference)],
        )
        .await;
        let closed = browser.close().await;
        shown.unwrap_or_else(|e| panic!("at {width} px: {e}"));
        closed.expect("closing the browser session");
    }
}

/// Opens the page `width` px wide, and for each (QR code, link) scrolls the code into
/// view, takes a screenshot, and reads every QR code in it: one must be the link.
async fn show(
    b: &Session,
    url: &str,
    width: u32,
    dir: &Path,
    codes: &[(&str, &str)],
) -> Result<(), String> {
    // Two device pixels per CSS pixel, as phones and most laptops have: a code of 160
    // modules is then 3 to 4 pixels a module, as a camera sees it on such a screen.
    let params =
        json!({"width": width, "height": 900, "deviceScaleFactor": 2, "mobile": width < 600});
    b.cdp("Emulation.setDeviceMetricsOverride", params).await?;
    b.goto(url).await?;
    let scroll_width = b
        .execute("return document.documentElement.scrollWidth", json!([]))
        .await?;
    if scroll_width.as_u64() > Some(u64::from(width)) {
        return Err(format!("the page is {scroll_width} px wide"));
    }
    for (selector, link) in codes {
        b.find(selector).await?;
        b.execute(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
            json!([selector]),
        )
        .await?;
        let png = b.screenshot().await?;
        let name = selector.trim_start_matches('#');
        std::fs::write(dir.join(format!("{name}-{width}.png")), &png).unwrap();
        let read = qr_codes_in(&png);
        if !read.iter().any(|text| text == link) {
            return Err(format!(
                "{selector}: the screenshot's QR codes read {:?}, not its link ({} characters)",
                read.iter()
                    .map(|t| t.chars().take(60).collect::<String>())
                    .collect::<Vec<_>>(),
                link.len()
            ));
        }
    }
    Ok(())
}

/// The texts of every QR code rqrr finds in a PNG screenshot. rqrr finds the finder
/// patterns of a dense code (160 modules at 3.2 device pixels each) only once modules
/// are about 4 pixels, so the screenshot is also read enlarged (nearest pixel).
fn qr_codes_in(png: &[u8]) -> Vec<String> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let (w, h) = (info.width as usize, info.height as usize);
    let grey = |x: usize, y: usize| {
        let at = (y * w + x) * channels;
        let px = &buf[at..at + channels.min(3)];
        (px.iter().map(|&c| u32::from(c)).sum::<u32>() / px.len() as u32) as u8
    };
    let mut texts = Vec::new();
    for scale in [1.0f64, 1.25, 1.5] {
        let (sw, sh) = ((w as f64 * scale) as usize, (h as f64 * scale) as usize);
        let mut image = rqrr::PreparedImage::prepare_from_greyscale(sw, sh, |x, y| {
            grey(
                ((x as f64 / scale) as usize).min(w - 1),
                ((y as f64 / scale) as usize).min(h - 1),
            )
        });
        texts.extend(
            image
                .detect_grids()
                .into_iter()
                .filter_map(|grid| grid.decode().ok().map(|(_, text)| text)),
        );
    }
    texts
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gateway-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn the_page_with_both_links_weighs_under_25_kb_as_sent() {
    let (server, url) = five_kinds_page().await;
    for encoding in ["br", "gzip"] {
        let resp = server
            .app
            .client
            .get(&url)
            .header("accept-encoding", encoding)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-encoding"], encoding);
        let sent = resp.bytes().await.unwrap().len();
        assert!(sent < 25_000, "{sent} bytes sent with {encoding}");
    }
}
