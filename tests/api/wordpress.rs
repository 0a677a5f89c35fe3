//! The WordPress plugin (integrations/wordpress/agegate) end to end, on loopback: Debian's
//! WordPress on PHP's built-in server with a throwaway MariaDB, agegate serving a sandbox
//! site whose redirect URL is the WordPress return route, and headless Chromium as the
//! visitor. agegate is on `localhost`, WordPress on `127.0.0.1`: two sites, so cookies
//! behave as they do in production across the round trip.
//!
//! `AGEGATE_SCREENSHOTS=DIR` keeps the screenshots (gate page and verified post at 390
//! and 1280 px wide); docs/wordpress/ holds the ones the docs show.

use crate::browser::{arrival, Chromedriver};
use crate::helpers::{self, eventually, spawn_real_time_app, TestApp, TestSite};
use crate::webdriver::Session;
use crate::wordpress_site::{WordPress, ADMIN_PASSWORD, READER_PASSWORD};
use crate::wordpress_visitor::{invite_id_of, GATED, OPEN, SHORTCODE, UNAVAILABLE};
use std::time::Duration;

const GATED_PATH: &str = "/reserve-tasting/";
const OPEN_PATH: &str = "/visiting-hours/";
const MIXED_PATH: &str = "/members-corner/";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wordpress_plugin_withholds_gated_content_until_agegate_verified_the_visitor() {
    let wp = tokio::task::spawn_blocking(WordPress::start).await.unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let app = spawn_real_time_app(|s| {
        s.listen = format!("127.0.0.1:{port}");
        s.public_url = Some(format!("http://localhost:{port}"));
        s.allow_private_webhooks = true;
        s.webhook_retry_schedule = vec![Duration::from_secs(1); 3];
    })
    .await;
    let return_url = format!("{}/?agegate_return=1", wp.base);
    let webhook_url = wp.url("/wp-json/agegate/v1/webhook");
    let site = app
        .create_site_with(helpers::SiteOptions {
            name: Some("Cellar Door Wines"),
            redirect_url: Some(&return_url),
            webhook_url: Some(&webhook_url),
            sandbox: true,
            ..Default::default()
        })
        .await;

    let driver = Chromedriver::start().await;
    let admin = driver.session_in("admin", &[]).await;
    let configured = async {
        plugin_installs_from_its_zip_through_the_upload_page(&admin, &wp).await?;
        settings_page_takes_the_four_settings_and_never_shows_secrets_back(&admin, &wp, &app, &site)
            .await
    }
    .await;
    let closed = admin.close().await;
    configured.unwrap_or_else(|e| panic!("{e}\n{}", wp.errors()));
    closed.expect("closing the admin's session");

    let visitor = driver.session_in("visitor", &[]).await;
    let walked = visitor_walks_from_the_gate_through_the_sandbox_back_to_the_post(
        &visitor, &wp, &app, &site,
    )
    .await;
    let closed = visitor.close().await;
    let cookie = walked.unwrap_or_else(|e| panic!("{e}\n{}", wp.errors()));
    closed.expect("closing the visitor's session");

    crate::wordpress_checks::forged_returns_and_cookies_do_not_unlock(&wp, &app, &site, &cookie)
        .await;
    crate::wordpress_checks::a_verified_return_goes_back_to_the_page_the_visitor_came_from(
        &wp, &app,
    )
    .await;
    crate::wordpress_checks::feeds_and_the_rest_api_do_not_carry_gated_content(&wp, &cookie).await;
    crate::wordpress_checks::webhooks_need_a_valid_fresh_unseen_signature(&wp, &site).await;

    crate::wordpress_checks::the_editor_box_gates_and_ungates_a_post(&wp).await;

    let reader = driver.session_in("reader", &[]).await;
    let webhook_only = logged_in_user_verified_by_webhook_only_is_let_in(&reader, &wp, &app).await;
    let closed = reader.close().await;
    webhook_only.unwrap_or_else(|e| panic!("{e}\n{}", wp.errors()));
    closed.expect("closing the reader's session");

    crate::wordpress_checks::gate_everything_by_constant_gates_every_page_and_locks_the_field(&wp)
        .await;
    app.stop().await;
    crate::wordpress_checks::agegate_stopped_shows_the_unavailable_page(&wp).await;
    let late = driver.session_in("late", &[]).await;
    let shown = async {
        press_verify_in_browser(&late, &wp).await?;
        // The click may return while the POST's answer is still loading.
        helpers::poll(Duration::from_secs(20), || async {
            let text = late.find("body").await.ok()?.text().await.ok()?;
            (text.contains(UNAVAILABLE) || text.contains(GATED)).then_some(text)
        })
        .await
        .ok_or_else(|| "no page after pressing the button with agegate stopped".to_owned())
    }
    .await;
    let closed = late.close().await;
    let shown = shown.unwrap_or_else(|e| panic!("{e}"));
    closed.expect("closing the late visitor's session");
    assert!(
        shown.contains(UNAVAILABLE),
        "the unavailable page, got {shown}"
    );
    assert!(!shown.contains(GATED), "{shown}");

    let log = wp.log("debug.log");
    let plugin_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("plugins/agegate"))
        .collect();
    assert!(
        plugin_lines.is_empty(),
        "PHP errors of the plugin: {plugin_lines:#?}"
    );
}

/// Plugins → Add New → Upload Plugin with the zip, Install Now, Activate Plugin.
async fn plugin_installs_from_its_zip_through_the_upload_page(
    browser: &Session,
    wp: &WordPress,
) -> Result<(), String> {
    log_in(browser, wp, "admin", ADMIN_PASSWORD).await?;
    browser
        .goto(&wp.url("/wp-admin/plugin-install.php?tab=upload"))
        .await?;
    let zip = wp.plugin_zip();
    browser
        .find("input#pluginzip")
        .await?
        .send_keys(&zip.display().to_string())
        .await?;
    browser
        .find("#install-plugin-submit")
        .await?
        .click()
        .await?;
    let activate = helpers::poll(Duration::from_secs(30), || async {
        let link = browser.find("a[href*='action=activate']").await.ok()?;
        link.attr("href").await.ok()?
    })
    .await;
    let Some(activate) = activate else {
        let text = browser.find("body").await?.text().await?;
        return Err(format!(
            "the upload did not offer 'Activate Plugin': {text}"
        ));
    };
    if !activate.contains("plugin=agegate%2Fagegate.php") {
        return Err(format!("the activation link is {activate}"));
    }
    browser
        .find("a[href*='action=activate']")
        .await?
        .click()
        .await?;
    arrive(browser, &wp.url("/wp-admin/plugins.php"), "activating").await?;
    let active = wp.eval("return get_option( 'active_plugins' );");
    if active != serde_json::json!(["agegate/agegate.php"]) {
        return Err(format!("active plugins: {active}"));
    }
    Ok(())
}

/// Settings → agegate: an administrator enters the URL, site ID, username and password
/// (and the webhook secret); the saved page never carries the password or the secret.
async fn settings_page_takes_the_four_settings_and_never_shows_secrets_back(
    browser: &Session,
    wp: &WordPress,
    app: &TestApp,
    site: &TestSite,
) -> Result<(), String> {
    browser
        .goto(&wp.url("/wp-admin/options-general.php?page=agegate"))
        .await?;
    let page = browser.source().await?;
    for shown in [
        format!("{}/?agegate_return=1", wp.base),
        wp.url("/wp-json/agegate/v1/webhook"),
    ] {
        if !page.contains(&shown) {
            return Err(format!("the settings page does not name {shown}"));
        }
    }
    let fields = [
        ("#agegate_url", app.base.replace("127.0.0.1", "localhost")),
        ("#agegate_site_id", site.site_id.clone()),
        ("#agegate_username", site.username.clone()),
        ("#agegate_password", site.password.clone()),
        ("#agegate_webhook_secret", site.webhook_secret.clone()),
    ];
    for (selector, value) in &fields {
        browser.find(selector).await?.send_keys(value).await?;
    }
    browser.find("#submit").await?.click().await?;
    // WordPress removes settings-updated=true from the address bar; the notice stays.
    let saved = helpers::poll(Duration::from_secs(20), || async {
        let page = browser.source().await.ok()?;
        page.contains("Settings saved.").then_some(page)
    })
    .await
    .ok_or("saving the settings did not say 'Settings saved.'")?;
    for secret in [&site.password, &site.webhook_secret] {
        if saved.contains(secret.as_str()) {
            return Err("the settings page shows a saved secret".into());
        }
    }
    let url = browser.find("#agegate_url").await?.attr("value").await?;
    if url.as_deref() != Some(fields[0].1.as_str()) {
        return Err(format!("agegate URL saved as {url:?}"));
    }
    Ok(())
}

/// An ungated post never leaves WordPress; a gated one shows the button, which leads to
/// the gateway, whose sandbox control sends the visitor back to the post with its
/// content; a second visit goes straight in. The verified cookie's value.
async fn visitor_walks_from_the_gate_through_the_sandbox_back_to_the_post(
    browser: &Session,
    wp: &WordPress,
    app: &TestApp,
    site: &TestSite,
) -> Result<String, String> {
    browser.goto(&wp.url(OPEN_PATH)).await?;
    let open = browser.source().await?;
    if !open.contains(OPEN) || open.contains("agegate-form") {
        return Err(format!("the ungated post is not shown as it is: {open}"));
    }
    if browser.current_url().await? != wp.url(OPEN_PATH) || invites(app, site).await != 0 {
        return Err("the ungated post left WordPress or created an invite".into());
    }

    browser.goto(&wp.url(GATED_PATH)).await?;
    let gate = browser.source().await?;
    if gate.contains(GATED) || !gate.contains("Age verification required") {
        return Err(format!("not the gate page: {gate}"));
    }
    let button = browser
        .find("form.agegate-form button[type=submit]")
        .await?;
    if button.text().await? != "Verify your age" {
        return Err("the button does not say 'Verify your age'".into());
    }
    screenshots(browser, "gate").await;

    browser.find("button.agegate-button").await?.click().await?;
    let gateway = format!("{}/gateway/", app.base.replace("127.0.0.1", "localhost"));
    arrive(browser, &gateway, "the button").await?;
    browser.find("button#approve").await?.click().await?;
    arrive(browser, &wp.url(GATED_PATH), "the sandbox control").await?;
    let post = browser.source().await?;
    if !post.contains(GATED) {
        return Err(format!("back on the post, its content is missing: {post}"));
    }
    screenshots(browser, "verified").await;

    let cookie = browser
        .cookie("agegate_verified")
        .await?
        .ok_or("no agegate_verified cookie")?;
    if cookie["httpOnly"] != true || cookie["sameSite"] != "Lax" || cookie["secure"] != false {
        return Err(format!("the verified cookie's attributes: {cookie}"));
    }
    let value = cookie["value"].as_str().unwrap_or_default().to_owned();

    // A second visit within the remembered time: straight in, no new invite.
    browser.goto(&wp.url(OPEN_PATH)).await?;
    browser.goto(&wp.url(GATED_PATH)).await?;
    let again = browser.source().await?;
    if !again.contains(GATED) || browser.current_url().await? != wp.url(GATED_PATH) {
        return Err("the second visit did not go straight in".into());
    }
    browser.goto(&wp.url(MIXED_PATH)).await?;
    if !browser.source().await?.contains(SHORTCODE) {
        return Err("the [agegate] content is missing for a verified visitor".into());
    }
    if invites(app, site).await != 1 {
        return Err("a second invite was created".into());
    }
    Ok(value)
}

/// A logged-in user whose invite is verified while they are away from the gateway (no
/// redirect back) is let in by the webhook alone.
async fn logged_in_user_verified_by_webhook_only_is_let_in(
    browser: &Session,
    wp: &WordPress,
    app: &TestApp,
) -> Result<(), String> {
    log_in(browser, wp, "reader", READER_PASSWORD).await?;
    press_verify_in_browser(browser, wp).await?;
    let gateway = format!("{}/gateway/", app.base.replace("127.0.0.1", "localhost"));
    let at = arrive(browser, &gateway, "the button").await?;
    browser.goto("about:blank").await?;
    let verified = app.verify(&invite_id_of(&at)).await;
    if verified.status() != 200 {
        return Err(format!("verifier API: {}", verified.status()));
    }
    let reader = wp.id("reader");
    let meta = format!("return get_user_meta( {reader}, 'agegate_verified_at', true );");
    eventually(
        "the webhook sets agegate_verified_at",
        Duration::from_secs(20),
        || async { wp.eval(&meta).as_str().is_some_and(|s| !s.is_empty()) },
    )
    .await;
    browser.goto(&wp.url(GATED_PATH)).await?;
    if !browser.source().await?.contains(GATED) {
        return Err("the user verified by webhook is still gated".into());
    }
    if browser.cookie("agegate_verified").await?.is_some() {
        return Err("a logged-in user got a verified cookie".into());
    }
    Ok(())
}

/// Opens the gated post and presses "Verify your age".
async fn press_verify_in_browser(browser: &Session, wp: &WordPress) -> Result<(), String> {
    browser.goto(&wp.url(GATED_PATH)).await?;
    browser.find("button.agegate-button").await?.click().await
}

async fn log_in(browser: &Session, wp: &WordPress, user: &str, pass: &str) -> Result<(), String> {
    browser.goto(&wp.url("/wp-login.php")).await?;
    browser.find("#user_login").await?.send_keys(user).await?;
    browser.find("#user_pass").await?.send_keys(pass).await?;
    browser.find("#wp-submit").await?.click().await?;
    arrive(
        browser,
        &wp.url("/wp-admin/"),
        &format!("logging {user} in"),
    )
    .await
    .map(drop)
}

/// Waits up to 20 s for the browser to be at a URL starting with `prefix`; that URL, or
/// where it is instead and what the page says.
async fn arrive(browser: &Session, prefix: &str, after: &str) -> Result<String, String> {
    if let Some(arrived) = arrival(browser, prefix, Duration::from_secs(20)).await {
        return arrived;
    }
    let url = browser.current_url().await.unwrap_or_default();
    let text = match browser.find("body").await {
        Ok(body) => body.text().await.unwrap_or_default(),
        Err(e) => e,
    };
    Err(format!(
        "{after} did not lead to {prefix} but to {url}: {text}"
    ))
}

/// How many invites the site has.
async fn invites(app: &TestApp, site: &TestSite) -> usize {
    let resp = app
        .client
        .get(app.url(&format!("/v1/website/{}/invite", site.site_id)))
        .basic_auth(&site.username, Some(&site.password))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = resp.json().await.unwrap();
    body["data"].as_array().map_or(0, Vec::len)
}

/// The page at 390 and 1280 px wide, kept under `AGEGATE_SCREENSHOTS` when set.
async fn screenshots(browser: &Session, name: &str) {
    for width in [390, 1280] {
        browser.set_window_size(width, 844).await.unwrap();
        let png = browser.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        if let Some(dir) = std::env::var_os("AGEGATE_SCREENSHOTS") {
            std::fs::create_dir_all(&dir).unwrap();
            let path = std::path::Path::new(&dir).join(format!("{name}-{width}.png"));
            std::fs::write(path, png).unwrap();
        }
    }
}
