//! The WordPress plugin's rules that need no browser, each against the running site of
//! the end-to-end test (tests/api/wordpress.rs calls them in order).

use crate::helpers::{now, TestApp, TestSite};
use crate::wordpress_site::{WordPress, ADMIN_PASSWORD};
use crate::wordpress_visitor::{
    field, invite_id_of, post_webhook, verified_cookie, verified_event, Visitor, GATED,
    NOT_CONFIRMED, OPEN, SHORTCODE, UNAVAILABLE,
};

const GATED_PATH: &str = "/reserve-tasting/";

/// Coming back with another visitor's verified invite, a made-up or malformed `vs`, or a
/// verified cookie whose expiry was changed (or signed for longer than the remembered
/// time) does not unlock the post; the genuine cookie does.
pub async fn forged_returns_and_cookies_do_not_unlock(
    wp: &WordPress,
    app: &TestApp,
    site: &TestSite,
    genuine: &str,
) {
    let mut control = Visitor::new(wp);
    control
        .cookies
        .insert("agegate_verified".into(), genuine.into());
    let page = control.get(GATED_PATH).await;
    assert!(
        page.body.contains(GATED),
        "the genuine cookie unlocks: {}",
        page.body
    );

    let (expires, mac) = genuine.split_once('.').unwrap();
    let expires: i64 = expires.parse().unwrap();
    let forged = [
        format!("{}.{mac}", expires + 86_400),
        format!("{}.{mac}", expires - 1),
        verified_cookie(wp, now() + 10 * 365 * 86_400),
        verified_cookie(wp, now() - 1),
        format!("{expires}.{}", "0".repeat(64)),
    ];
    for cookie in forged {
        let mut visitor = Visitor::new(wp);
        visitor
            .cookies
            .insert("agegate_verified".into(), cookie.clone());
        visitor
            .get(GATED_PATH)
            .await
            .assert_gate(&format!("cookie {cookie}"));
    }
    // The test's HMAC is WordPress's: a cookie it signs within the remembered time works.
    let mut signed = Visitor::new(wp);
    signed
        .cookies
        .insert("agegate_verified".into(), verified_cookie(wp, now() + 3600));
    assert!(signed.get(GATED_PATH).await.body.contains(GATED));

    // The first visitor's verified invite, the only one so far.
    let verified = app
        .client
        .get(app.url(&format!(
            "/v1/website/{}/invite?status=verified",
            site.site_id
        )))
        .basic_auth(&site.username, Some(&site.password))
        .send()
        .await
        .unwrap();
    let verified: serde_json::Value = verified.json().await.unwrap();
    let theirs = verified["data"][0]["inviteId"].as_str().unwrap().to_owned();

    let mut other = Visitor::new(wp);
    let pressed = other.press_verify(GATED_PATH).await;
    assert_eq!(pressed.status, 303, "{}", pressed.body);
    assert!(other.cookies.contains_key("agegate_visitor"));
    let own = invite_id_of(pressed.location.as_deref().unwrap());
    let cases = [
        (theirs.as_str(), 403, NOT_CONFIRMED),
        ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 403, NOT_CONFIRMED),
        (own.as_str(), 403, "The verification is not finished yet."),
        ("..%2Fv1", 400, NOT_CONFIRMED),
    ];
    for (vs, status, says) in cases {
        let page = other.return_with(vs).await;
        assert_eq!(page.status, status, "vs={vs}: {}", page.body);
        page.assert_gate(&format!("return with vs={vs}"));
        assert!(page.body.contains(says), "vs={vs}: {}", page.body);
        assert!(!page.sets("agegate_verified"), "vs={vs} set the cookie");
        other
            .get(GATED_PATH)
            .await
            .assert_gate("after a forged return");
    }
    // Without any visitor id, the verified invite of someone else does not unlock either.
    let mut stranger = Visitor::new(wp);
    let page = stranger.return_with(&theirs).await;
    assert_eq!(page.status, 403);
    assert!(!page.sets("agegate_verified"));
}

/// The feed and /wp-json/wp/v2/posts carry the ungated post's content and not the gated
/// post's, nor a shortcode's enclosed content; a verified visitor's feed does.
pub async fn feeds_and_the_rest_api_do_not_carry_gated_content(wp: &WordPress, genuine: &str) {
    let gated_id = wp.id("gated");
    let mut anyone = Visitor::new(wp);
    for path in [
        "/feed/".to_owned(),
        "/?feed=rss2".to_owned(),
        "/feed/atom/".to_owned(),
        "/wp-json/wp/v2/posts".to_owned(),
        format!("/wp-json/wp/v2/posts/{gated_id}"),
        "/?s=cherry".to_owned(),
        "/".to_owned(),
        "/reserve-tasting/embed/".to_owned(),
    ] {
        let page = anyone.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(!page.body.contains(GATED), "{path} carries the gated post");
        assert!(
            !page.body.contains(SHORTCODE),
            "{path} carries [agegate] content"
        );
        if path.contains("posts/") {
            let post: serde_json::Value = serde_json::from_str(&page.body).unwrap();
            assert_eq!(post["id"], gated_id, "{path}");
        } else if !path.contains("s=") && !path.contains("embed") {
            assert!(page.body.contains(OPEN), "{path} lists the open post");
        }
    }
    // [agegate]…[/agegate]: the rest of the post is shown, the enclosed part is the button.
    let mixed = anyone.get("/members-corner/").await;
    assert!(mixed.body.contains("MIXED-OPEN-MARKER") && mixed.body.contains("Verify your age"));
    assert!(
        !mixed.body.contains(SHORTCODE),
        "[agegate] content shown unverified"
    );
    let mut verified = Visitor::new(wp);
    verified
        .cookies
        .insert("agegate_verified".into(), genuine.into());
    assert!(verified.get("/feed/").await.body.contains(GATED));
}

/// The webhook route: a bad signature, another key, or a stale timestamp → 401 and
/// nothing changed; a good one marks the user verified; its webhook-id again changes
/// nothing.
pub async fn webhooks_need_a_valid_fresh_unseen_signature(wp: &WordPress, site: &TestSite) {
    let second = wp.id("second");
    let meta = format!("return get_user_meta( {second}, 'agegate_verified_at', true );");
    let body = verified_event(site, &second.to_string());
    let other_key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let refused = [
        (other_key, "msg_other_key", now()),
        (site.webhook_secret.as_str(), "msg_stale", now() - 330),
        (site.webhook_secret.as_str(), "msg_future", now() + 330),
    ];
    for (key, id, timestamp) in refused {
        let (status, answer) = post_webhook(wp, key, id, timestamp, &body).await;
        assert_eq!(status, 401, "{id}: {answer}");
        assert_eq!(wp.eval(&meta), "", "{id} changed the user");
    }
    let tampered = body.replace("verified\",\"customId", "verified\" ,\"customId");
    let (status, _) = post_webhook(wp, &site.webhook_secret, "msg_ok", now(), &body).await;
    assert_eq!(status, 200);
    let at = wp.eval(&meta);
    let at: i64 = at.as_str().unwrap().parse().unwrap();
    assert!((at - now()).abs() < 60, "agegate_verified_at {at}");

    // The same webhook-id again (a replay) is acknowledged and changes nothing.
    wp.eval(&format!(
        "return delete_user_meta( {second}, 'agegate_verified_at' );"
    ));
    let (status, answer) = post_webhook(wp, &site.webhook_secret, "msg_ok", now(), &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(wp.eval(&meta), "", "a replay changed the user");
    // A body that is not the one signed: the signature no longer matches.
    let resp = crate::helpers::client()
        .post(wp.url("/wp-json/agegate/v1/webhook"))
        .header("webhook-id", "msg_tampered")
        .header("webhook-timestamp", now().to_string())
        .header("webhook-signature", "v1,AAAA")
        .body(tampered)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(wp.eval(&meta), "", "a bad signature changed the user");
}

/// `AGEGATE_GATE_ALL` in wp-config.php gates every front-end page (the ungated post
/// too), not the login page; the settings page shows the field locked.
pub async fn gate_everything_by_constant_gates_every_page_and_locks_the_field(wp: &WordPress) {
    wp.configure("define( 'AGEGATE_GATE_ALL', true );");
    let mut anyone = Visitor::new(wp);
    for path in ["/visiting-hours/", "/", "/members-corner/"] {
        let page = anyone.get(path).await;
        page.assert_gate(path);
        assert!(
            !page.body.contains(OPEN),
            "{path} shown in gate-everything mode"
        );
    }
    let login = anyone.get("/wp-login.php").await;
    assert_eq!(login.status, 200);
    assert!(
        login.body.contains("user_login"),
        "the login page is never gated"
    );
    let locked = wp.eval(
        "require_once ABSPATH . 'wp-admin/includes/template.php'; ob_start(); \
         agegate_render_field( array( 'key' => 'gate_all' ) ); return ob_get_clean();",
    );
    let locked = locked.as_str().unwrap();
    assert!(
        locked.contains("disabled")
            && locked.contains("checked")
            && locked.contains("wp-config.php"),
        "{locked}"
    );
}

/// With agegate stopped, pressing the button and coming back both answer the
/// unavailable page (503), never the content.
pub async fn agegate_stopped_shows_the_unavailable_page(wp: &WordPress) {
    let mut visitor = Visitor::new(wp);
    let page = visitor.press_verify(GATED_PATH).await;
    assert_eq!(page.status, 503, "{}", page.body);
    assert!(page.body.contains(UNAVAILABLE), "{}", page.body);
    assert!(!page.body.contains(GATED));
    let page = visitor.return_with("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").await;
    assert_eq!(page.status, 503, "{}", page.body);
    assert!(page.body.contains(UNAVAILABLE));
    assert!(!page.sets("agegate_verified"));
}

/// The box "Requires age verification": ticked and saved through WordPress's edit form
/// (the fields the block editor posts for meta boxes), the post is gated; unticked, it
/// is shown again.
pub async fn the_editor_box_gates_and_ungates_a_post(wp: &WordPress) {
    let mut admin = Visitor::new(wp);
    admin.log_in("admin", ADMIN_PASSWORD).await;
    let id = wp.id("open");
    let edit = admin
        .get(&format!("/wp-admin/post.php?post={id}&action=edit"))
        .await;
    assert_eq!(edit.status, 200);
    assert!(
        edit.body.contains("Requires age verification"),
        "the box is in the editor"
    );
    let form = |tick: bool| {
        let mut fields = vec![
            ("action", "editpost".to_owned()),
            ("post_ID", id.to_string()),
            ("post_type", "post".to_owned()),
            ("_wpnonce", field(&edit.body, "_wpnonce")),
            (
                "agegate_meta_nonce",
                field(&edit.body, "agegate_meta_nonce"),
            ),
        ];
        if tick {
            fields.push(("agegate_required", "1".to_owned()));
        }
        fields
    };
    let saved = admin.post("/wp-admin/post.php", &form(true)).await;
    assert_eq!(saved.status, 302, "{}", saved.body);
    let meta = format!("return get_post_meta( {id}, '_agegate_required', true );");
    assert_eq!(wp.eval(&meta), "1");
    let page = Visitor::new(wp).get("/visiting-hours/").await;
    page.assert_gate("the post whose box was ticked");
    assert!(!page.body.contains(OPEN));

    let saved = admin.post("/wp-admin/post.php", &form(false)).await;
    assert_eq!(saved.status, 302, "{}", saved.body);
    assert_eq!(wp.eval(&meta), "");
    let page = Visitor::new(wp).get("/visiting-hours/").await;
    assert!(
        page.body.contains(OPEN),
        "unticked, the post is shown again"
    );
}

/// After a verified return the visitor is sent back to the page they pressed the button
/// on, even one whose address has percent-encoded characters, and it is unlocked.
pub async fn a_verified_return_goes_back_to_the_page_the_visitor_came_from(
    wp: &WordPress,
    app: &TestApp,
) {
    // WordPress keeps the slug "cellar-ワイン" percent-encoded.
    let link = wp.eval(&format!("return get_permalink( {} );", wp.id("cave")));
    let link = link.as_str().unwrap();
    let path = link.strip_prefix(&wp.base).unwrap();
    assert_eq!(path, "/cellar-%e3%83%af%e3%82%a4%e3%83%b3/");
    let mut visitor = Visitor::new(wp);
    let pressed = visitor.press_verify(path).await;
    assert_eq!(pressed.status, 303, "{}", pressed.body);
    let invite = invite_id_of(pressed.location.as_deref().unwrap());
    assert_eq!(app.verify(&invite).await.status(), 200);
    let back = visitor.return_with(&invite).await;
    assert_eq!(back.status, 303, "{}", back.body);
    assert!(back.sets("agegate_verified"));
    assert_eq!(back.location.as_deref(), Some(wp.url(path).as_str()));
    let page = visitor.get(path).await;
    assert!(page.body.contains(GATED), "{}", page.body);
}
