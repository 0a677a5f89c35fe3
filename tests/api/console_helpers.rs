//! Helpers of the console's tests (`console*.rs`, `browser_console.rs`): a server with
//! the console on, accounts made with the real binary, signing in, pages and forms.

use crate::helpers::{run_cli, spawn_app_with, SiteOptions, TestApp, TestDb, TestSite};
use crate::receiver::TestReceiver;
use agegate::clock::Clock;
use agegate::config::Settings;
use agegate::domain::{CredentialStatus, InviteId, SiteId, VerifyMethod};
use agegate::receipt::{Evidence, Presented, Transport};
use agegate::store::{NewInvite, Store};
use reqwest::header::{HeaderMap, LOCATION, SET_COOKIE};
use serde_json::json;
use std::net::IpAddr;
use std::time::Duration;

/// A server with the console on a port of its own.
pub async fn spawn_console() -> TestApp {
    spawn_console_with(|_| {}).await
}

pub async fn spawn_console_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app_with(|s| {
        s.admin_listen = Some("127.0.0.1:0".into());
        configure(s);
    })
    .await
}

pub fn admin(app: &TestApp, path: &str) -> String {
    format!(
        "{}{path}",
        app.admin_base.as_deref().expect("the console is on")
    )
}

/// The app's database, for the command line.
pub fn db(app: &TestApp) -> TestDb {
    TestDb {
        url: app.db_url.clone(),
        path: None,
    }
}

/// Creates a console account with the real binary; its password.
pub fn create_user(app: &TestApp, name: &str) -> String {
    let (code, stdout, stderr) = run_cli(&db(app), &["admin", "user", "create", name, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["username"], name);
    v["password"].as_str().unwrap().to_owned()
}

/// A client that follows no redirects, optionally from another loopback address.
pub fn client_from(local: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    if let Some(ip) = local {
        builder = builder.local_address(ip.parse::<IpAddr>().unwrap());
    }
    builder.build().unwrap()
}

/// A signed-in operator: the session cookie and the CSRF token of its pages.
#[derive(Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

pub async fn sign_in_response(
    client: &reqwest::Client,
    app: &TestApp,
    name: &str,
    password: &str,
) -> reqwest::Response {
    client
        .post(admin(app, "/admin/sign-in"))
        .form(&[("username", name), ("password", password)])
        .send()
        .await
        .unwrap()
}

/// The `agegate_console=...` pair of a Set-Cookie header.
pub fn session_cookie(headers: &HeaderMap) -> String {
    let set = headers[SET_COOKIE].to_str().unwrap();
    set.split(';').next().unwrap().to_owned()
}

pub async fn sign_in(app: &TestApp, name: &str, password: &str) -> Session {
    let resp = sign_in_response(&client_from(None), app, name, password).await;
    assert_eq!(resp.status(), 303, "{}", resp.text().await.unwrap());
    assert_eq!(resp.headers()[LOCATION], "/admin/");
    let cookie = session_cookie(resp.headers());
    let page = get(app, &cookie, "/admin/").await;
    assert_eq!(page.status(), 200);
    let csrf = csrf_of(&page.text().await.unwrap());
    Session { cookie, csrf }
}

/// The CSRF token a page's forms carry.
pub fn csrf_of(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a token")
        + 19;
    html[at..].split('"').next().unwrap().to_owned()
}

pub async fn get(app: &TestApp, cookie: &str, path: &str) -> reqwest::Response {
    client_from(None)
        .get(admin(app, path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

/// POSTs a console form as `session`; `csrf` is added unless `None`.
pub async fn post(
    app: &TestApp,
    session: &Session,
    path: &str,
    csrf: Option<&str>,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut form: Vec<(&str, &str)> = fields.to_vec();
    if let Some(token) = csrf {
        form.push(("csrf", token));
    }
    client_from(None)
        .post(admin(app, path))
        .header("cookie", &session.cookie)
        .form(&form)
        .send()
        .await
        .unwrap()
}

pub fn assert_to_sign_in(resp: &reqwest::Response, path: &str) {
    assert_eq!(resp.status(), 303, "{path}");
    assert_eq!(resp.headers()[LOCATION], "/admin/sign-in", "{path}");
}

/// A deployment with some thousands of invites over the last 30 days: one busy site
/// without a webhook, and one small site whose receiver answers; verified by every
/// method, some cancelled, the rest expired at their time. Returns the small site.
pub async fn seed(app: &TestApp, receiver: &TestReceiver) -> TestSite {
    let busy = app
        .create_site_with(SiteOptions {
            name: Some("Busy shop"),
            ..Default::default()
        })
        .await;
    let shop = app
        .create_site_with(SiteOptions {
            name: Some("Shop with a webhook"),
            webhook_url: Some(&receiver.url),
            ..Default::default()
        })
        .await;
    let store = app.store.as_ref();
    let busy_id = SiteId::parse(&busy.site_id).unwrap();
    let methods = [
        VerifyMethod::EU_AV,
        VerifyMethod::Verifier,
        VerifyMethod::Sandbox,
    ];
    for day in 0..30i64 {
        let per_day = 60 + (day * 37 % 11) * 12 + day * 2;
        for i in 0..per_day {
            let now = app.clock.now();
            let id = new_invite(store, busy_id, now + i).await;
            match i % 10 {
                0..=5 => {
                    let method = methods[(i as usize + day as usize) % 3];
                    let evidence = evidence(app, method, i as usize);
                    store
                        .verify_invite(&id, method, evidence, now + i + 90)
                        .await
                        .unwrap();
                }
                6 => {
                    store
                        .cancel_invite(busy_id, &id, now + i + 600)
                        .await
                        .unwrap();
                }
                _ => {}
            }
        }
        app.clock.advance(86_400);
    }
    // The day's leftovers expire at their time (the sweeper may have been first).
    app.clock.advance(3600);
    store.expire_due(app.clock.now(), 100_000).await.unwrap();
    let invite = app
        .new_invite_id(&shop, Some(json!({"customId": "user-42"})))
        .await;
    assert_eq!(app.verify(&invite).await.status(), 200);
    assert_eq!(receiver.wait_for(1, Duration::from_secs(10)).await.len(), 1);
    shop
}

/// A wallet verification's evidence records a credential status (each in turn), the
/// others' none.
fn evidence(app: &TestApp, method: VerifyMethod, i: usize) -> Evidence {
    let presented = match method {
        VerifyMethod::Wallet(kind) => Some(Presented {
            kind,
            doc_type: "eu.europa.ec.av.1",
            issuer_anchor: [7; 32],
            transport: Transport::OpenId4Vp,
            nonce: format!("n-{i}"),
            zk_circuit: None,
            credential_status: CredentialStatus::ALL[i % CredentialStatus::ALL.len()],
        }),
        _ => None,
    };
    Evidence {
        issuer: app.base.clone(),
        min_age: 18,
        presented,
    }
}

async fn new_invite(store: &dyn Store, site: SiteId, now: i64) -> InviteId {
    let id = InviteId::generate(now * 1000);
    store
        .create_invite(
            NewInvite {
                id: id.clone(),
                site_id: site,
                custom_id: None,
                created_at: now,
                expires_at: now + 86_400,
            },
            None,
        )
        .await
        .unwrap();
    id
}
