//! The same-device link's form: `{scheme}://authorize?…`, the authority wallets register
//! their links under (docs/wallets.md#the-wallet-links-scheme), for every scheme, and the
//! QR code carries the same URI.

use crate::eu_av::eu_av_app_with;
use crate::helpers::{gateway_page, T0};
use crate::wallet::{AuthorizationRequest, TestIssuer};
use qrcode::{Color, EcLevel, QrCode};
use std::collections::BTreeSet;

/// The dark modules of the page's QR code, read off its SVG path (`M{x} {y}h{w}v{h}…`
/// per dark run), in module units relative to the top-left dark module.
pub fn qr_modules_on_page(html: &str) -> BTreeSet<(u32, u32)> {
    let start = html.find("id=\"eu-av-qr\"").expect("the QR code");
    let svg = &html[start..];
    let d_start = svg.find(" d=\"").expect("the QR code's path") + 4;
    let d = &svg[d_start..d_start + svg[d_start..].find('"').unwrap()];
    let mut rects = Vec::new();
    for rect in d.split('M').filter(|r| !r.is_empty()) {
        let nums: Vec<u32> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect();
        // left, top, width, height, left, top
        rects.push((nums[0], nums[1], nums[2], nums[3]));
    }
    let unit = rects
        .iter()
        .map(|r| r.2.min(r.3))
        .min()
        .expect("dark modules");
    let x0 = rects.iter().map(|r| r.0).min().unwrap();
    let y0 = rects.iter().map(|r| r.1).min().unwrap();
    let mut modules = BTreeSet::new();
    for (x, y, w, h) in rects {
        for dx in 0..w / unit {
            for dy in 0..h / unit {
                modules.insert(((x - x0) / unit + dx, (y - y0) / unit + dy));
            }
        }
    }
    modules
}

/// The text of the page's QR code, read back by an independent decoder (rqrr) from the
/// modules drawn 4 pixels each with a 4-module quiet zone.
pub fn qr_text_on_page(html: &str) -> String {
    let modules = qr_modules_on_page(html);
    let side = modules.iter().map(|m| m.0.max(m.1)).max().unwrap() + 1;
    let px = (side + 8) * 4;
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(px as usize, px as usize, |x, y| {
            let (mx, my) = (
                (x as u32 / 4).wrapping_sub(4),
                (y as u32 / 4).wrapping_sub(4),
            );
            if modules.contains(&(mx, my)) {
                0
            } else {
                255
            }
        });
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code");
    grids[0].decode().expect("a readable QR code").1
}

/// The dark modules of `text`'s QR code, relative to its top-left dark module.
pub fn qr_modules_of(text: &str) -> BTreeSet<(u32, u32)> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L).unwrap();
    let width = code.width() as u32;
    let dark: Vec<(u32, u32)> = code
        .to_colors()
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == Color::Dark)
        .map(|(i, _)| (i as u32 % width, i as u32 / width))
        .collect();
    let x0 = dark.iter().map(|m| m.0).min().unwrap();
    let y0 = dark.iter().map(|m| m.1).min().unwrap();
    dark.into_iter().map(|(x, y)| (x - x0, y - y0)).collect()
}

#[tokio::test]
async fn the_wallet_link_and_its_qr_code_are_scheme_authorize_for_every_scheme() {
    let issuer = TestIssuer::new(T0);
    for scheme in ["av", "openid4vp", "eudi-openid4vp", "mdoc-openid4vp"] {
        let app = eu_av_app_with(&issuer, |s| s.wallet_scheme = scheme.into()).await;
        let site = app.create_site().await;
        let invite = app.new_invite(&site, None).await;
        let html = gateway_page(&app.client, invite["url"].as_str().unwrap()).await;
        // The link's href, HTML-unescaped.
        let req = AuthorizationRequest::from_gateway_html(&html);
        let href = req.uri.clone();
        let url = url::Url::parse(&href).unwrap_or_else(|e| panic!("{e}: {href}"));
        assert_eq!(url.scheme(), scheme, "{href}");
        assert_eq!(url.host_str(), Some("authorize"), "{href}");
        assert_eq!(url.port(), None, "{href}");
        assert_eq!(
            url.path(),
            "",
            "nothing between the authority and '?': {href}"
        );
        assert!(
            href.starts_with(&format!("{scheme}://authorize?response_type=vp_token&")),
            "{href}"
        );
        // The request it carries is the page's live one.
        assert_eq!(req.response_type, "vp_token");
        assert_eq!(
            req.response_uri,
            format!(
                "{}/gateway/{}/openid4vp",
                app.base,
                invite["inviteId"].as_str().unwrap()
            )
        );
        assert_eq!(
            qr_modules_on_page(&html),
            qr_modules_of(&href),
            "the QR code is the link's URI"
        );
    }
}
