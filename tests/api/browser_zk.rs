//! docs/zk.md#zero-knowledge-proofs in a real browser: headless Chromium opens the
//! gateway page of a server with circuits, reads the DC API requests the page carries,
//! and its virtual wallet (DevTools `DigitalCredentials.setVirtualWalletBehavior`) hands
//! the page a zero-knowledge answer that pylongfellow minted for that request and origin
//! — through OpenID4VP (JWE) and Annex C (HPKE), one invite each; the page posts it and
//! the browser lands on the site's redirect URL with the invite verified.

use crate::browser_dc_api::{in_browser, open_page, wait_for_url, wallet_will};
use crate::helpers::SiteOptions;
use crate::wallet::MDL_DOCTYPE;
use crate::zk::{mdl_claim, Backend, Job, Minter, Transport, ZkCase, ZkServer};
use axum::routing::get;
use serde_json::json;

#[tokio::test]
async fn a_pylongfellow_proof_through_the_browsers_dc_api_lands_on_the_redirect_url() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start(2).await;
    let app = &server.app;
    let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let back_url = format!("http://{}/back", receiver.local_addr().unwrap());
    let back = axum::Router::new().route("/back", get(|| async { "welcome back" }));
    tokio::spawn(async move { axum::serve(receiver, back).await });
    let options = SiteOptions {
        redirect_url: Some(&back_url),
        ..Default::default()
    };
    let site = app.create_site_with(options).await;
    let origin = app.base.clone();
    assert!(origin.starts_with("http://127.0.0.1:"), "loopback only");

    let transports = [Transport::R1, Transport::R2];
    let mut cases = Vec::new();
    let mut jobs = Vec::new();
    for (i, transport) in transports.into_iter().enumerate() {
        let case = ZkCase::of_site(app, site.clone()).await;
        let transcript = case.transcript(transport, &origin);
        let claim = mdl_claim(&case.claim());
        jobs.push(Job::prove(
            &i.to_string(),
            &transcript,
            &claim,
            Backend::GoogleCpp,
        ));
        cases.push(case);
    }
    // Proving runs while the browser starts.
    let minting = tokio::spawn({
        let minter = minter.clone();
        async move { minter.mint(jobs).await }
    });

    let landed = in_browser(|driver, browser| async {
        let walked = async {
            let answers = minting.await.map_err(|e| e.to_string())?;
            let mut landed = Vec::new();
            for ((case, transport), answer) in cases.iter().zip(transports).zip(answers) {
                let page = open_page(&browser, &case.url).await?;
                if page.state != case.page.state {
                    return Err("the browser was shown another live request".into());
                }
                let data = case.dc_data(transport, &origin, MDL_DOCTYPE, &answer);
                let protocol = case.protocol(transport);
                let respond = json!({"action": "respond", "protocol": protocol, "response": data});
                wallet_will(&browser, respond).await?;
                browser
                    .find("#dc-api-button")
                    .await?
                    .click()
                    .await
                    .map_err(|e| format!("clicking the button: {e}"))?;
                landed.push(wait_for_url(&browser, &back_url, 20).await?);
            }
            Ok(landed.join("\n"))
        }
        .await;
        (driver, browser, walked)
    })
    .await;

    for (case, landed) in cases.iter().zip(landed.lines()) {
        let landed = url::Url::parse(landed).unwrap();
        let query: Vec<(String, String)> = landed.query_pairs().into_owned().collect();
        assert_eq!(
            query,
            [
                ("vs".to_owned(), case.invite_id.clone()),
                ("cid".to_owned(), "c-9".to_owned())
            ]
        );
        assert_eq!(case.status(app).await, "verified");
    }
}
