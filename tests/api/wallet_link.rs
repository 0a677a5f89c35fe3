//! The same-device link's form: `{scheme}://authorize?…`, the authority wallets register
//! their links under (docs/wallets.md#the-wallet-links-scheme), for every scheme, and the
//! QR code carries the same URI.

use crate::eu_av::eu_av_app_with;
use crate::helpers::{gateway_page, T0};
use crate::wallet::{AuthorizationRequest, TestIssuer};
use qrcode::{Color, EcLevel, QrCode};
use std::collections::BTreeSet;

/// The dark modules of the page's by-value QR code, read off its SVG path, in module
/// units relative to the top-left dark module.
pub fn qr_modules_on_page(html: &str) -> BTreeSet<(u32, u32)> {
    qr_modules_in(html, "eu-av-qr")
}

/// The dark modules of the QR code in the element `id` of a page (its path is rows of
/// runs: `M{x} {y}.5h{run}m{gap} 0h{run}…`), relative to its top-left dark module.
pub fn qr_modules_in(html: &str, id: &str) -> BTreeSet<(u32, u32)> {
    let start = html.find(&format!("id=\"{id}\"")).expect("the QR code");
    let svg = &html[start..];
    let d_start = svg.find(" d=\"").expect("the QR code's path") + 4;
    let d = &svg[d_start..d_start + svg[d_start..].find('"').unwrap()];
    let mut dark = Vec::new();
    for row in d.split('M').filter(|r| !r.is_empty()) {
        let (head, runs) = row.split_once('h').expect("a row starts with a run");
        let (x, y) = head.split_once(' ').expect("M{x} {y}");
        let (mut x, y): (u32, u32) = (
            x.parse().unwrap(),
            y.trim_end_matches(".5").parse().unwrap(),
        );
        for (i, step) in runs.split(['h', 'm']).enumerate() {
            // Runs and gaps alternate: "7", "3 0", "2", ...
            let n: u32 = step.split(' ').next().unwrap().parse().unwrap();
            if i % 2 == 0 {
                dark.extend((x..x + n).map(|x| (x, y)));
            }
            x += n;
        }
    }
    let x0 = dark.iter().map(|m| m.0).min().expect("dark modules");
    let y0 = dark.iter().map(|m| m.1).min().unwrap();
    dark.into_iter().map(|(x, y)| (x - x0, y - y0)).collect()
}

/// The text of the page's QR code, read back by an independent decoder (rqrr) from the
/// modules drawn 4 pixels each with a 4-module quiet zone.
pub fn qr_text_on_page(html: &str) -> String {
    qr_text_in(html, "eu-av-qr")
}

/// The text of the QR code in the element `id`, read back by rqrr.
pub fn qr_text_in(html: &str, id: &str) -> String {
    let modules = qr_modules_in(html, id);
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
