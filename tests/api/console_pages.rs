//! What the console's overview and trust pages show (docs/console.md#what-it-shows).

use crate::console_actions::{by_id, signed_in, text, wait_for_page};
use crate::console_helpers::{create_user, get, post, sign_in, spawn_console, spawn_console_with};
use crate::helpers::{until, T0};
use crate::wallet::TestIssuer;
use agegate::mdoc::TrustAnchors;
use std::time::Duration;

#[tokio::test]
async fn the_overview_counts_invites_created_verified_by_method_and_expired_per_day() {
    let app = spawn_console().await;
    let password = create_user(&app, "alice");
    let site = app.create_site().await;
    let day = |n: i64| agegate::clock::rfc3339((T0 / 86_400 + n) * 86_400)[..10].to_owned();
    let a = app.new_invite_id(&site, None).await;
    let b = app.new_invite_id(&site, None).await;
    // On to 01:00 the next day (UTC); a and b are still pending (T0 is 08:00).
    let next_day = 86_400 - T0 % 86_400 + 3600;
    app.clock.advance(next_day);
    let session = sign_in(&app, "alice", &password).await;
    assert_eq!(app.verify(&a).await.status(), 200);
    let c = app.new_invite_id(&site, None).await;
    let base = format!("/admin/sites/{}/invites", site.site_id);
    let resp = post(
        &app,
        &session,
        &format!("{base}/{c}/cancel"),
        Some(&session.csrf),
        &[],
    )
    .await;
    assert_eq!(resp.status(), 303);
    app.clock.advance(86_400 - next_day);
    // b expires at its time, a day after it was made; the sweeper notes it.
    let html = wait_for_page(
        &app,
        &session,
        &format!("{base}/{b}"),
        "<dd id=\"status\">expired",
    )
    .await;
    assert!(html.contains("expired"));
    let html = until(Duration::from_secs(10), || async {
        let html = text(get(&app, &session.cookie, "/admin/").await).await;
        if by_id(&html, "total-expired") == "2" {
            Ok(html)
        } else {
            Err(html)
        }
    })
    .await
    .unwrap_or_else(|html| html);
    assert_eq!(by_id(&html, "total-created"), "3");
    assert_eq!(by_id(&html, "total-verified"), "1");
    assert_eq!(by_id(&html, "total-expired"), "2");
    assert_eq!(by_id(&html, "backlog"), "0");
    let row = |d: &str| {
        let at = html.find(&format!(">{d}</td>")).unwrap();
        html[at..].split("</tr>").next().unwrap().to_owned()
    };
    assert!(
        row(&day(0)).contains("data-label=\"Created\">2<"),
        "{}",
        row(&day(0))
    );
    let today = row(&day(1));
    for cell in ["Created\">1<", "Verified: verifier\">1<", "Expired\">2<"] {
        assert!(today.contains(cell), "{cell} in {today}");
    }
    assert!(html.contains(&format!(
        "<title>{}: 1 created, 1 verified (verifier 1), 2 expired</title>",
        day(1)
    )));
}

#[tokio::test]
async fn the_trust_page_lists_each_anchor_with_subject_expiry_fingerprint_and_source() {
    use sha2::Digest;
    let issuer = TestIssuer::new(T0);
    let soon = issuer.with_signer_validity(T0 - 86_400, T0 + 10 * 86_400);
    let pem = format!("{}{}", issuer.ca_pem, soon.ds_cert_pem);
    let anchors = TrustAnchors::from_pem(&pem).unwrap();
    let app = spawn_console_with(|s| {
        s.trust = agegate::trust::TrustHandle::fixed(agegate::trust::Trust::single(
            agegate::domain::Kind::EU_AV,
            anchors,
            "/etc/agegate/eu-av.pem",
        ))
    })
    .await;
    let session = signed_in(&app).await;
    let html = text(get(&app, &session.cookie, "/admin/trust").await).await;
    let rows: Vec<&str> = html.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{html}");
    let fingerprint = |der: &[u8]| {
        sha2::Sha256::digest(der)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert!(
        rows[0].contains("CN=agegate test Proof of Age CA"),
        "{}",
        rows[0]
    );
    assert!(rows[0].contains(&fingerprint(&issuer.ca_der)));
    assert!(rows[0].contains("/etc/agegate/eu-av.pem") && rows[0].contains(">eu-av<"));
    assert!(!rows[0].contains("expires within 30 days"));
    assert!(rows[1].contains(&fingerprint(&soon.ds_cert_der)));
    assert!(rows[1].contains("expires within 30 days"), "{}", rows[1]);
}

#[tokio::test]
async fn the_trust_page_says_when_no_anchor_is_configured() {
    let app = spawn_console().await;
    let session = signed_in(&app).await;
    let html = text(get(&app, &session.cookie, "/admin/trust").await).await;
    assert!(html.contains("id=\"no-anchors\""), "{html}");
}
