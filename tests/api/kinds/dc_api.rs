//! The kinds through the Digital Credentials API: R1 and R2 carry every kind the site
//! accepts, each kind verifies through both with its method in the webhook and its
//! transport in the receipt, and a licence under the wrong anchor or of a kind the site
//! does not accept is refused.

use super::{app_trusting, ids, invite, site_accepting, Issuers, AV, MDL, PID};
use crate::dc_api::{dc_page, post_dc_api};
use crate::helpers::{assert_error, T0};
use crate::receipts::{decode, receipt_of};
use crate::receiver::TestReceiver;
use crate::wallet::{
    DcAnswer, DcWallet as _, Presentation, AV_DOCTYPE, MDL_DOCTYPE, MDL_NAMESPACE, PID_DOCTYPE,
    PID_NAMESPACE,
};
use crate::webhooks::hooked_site;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn the_dc_api_requests_carry_every_kind_and_each_kind_verifies_through_r1_and_r2() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&AV, &PID, &MDL]).await;
    let receiver = TestReceiver::start().await;
    let site = hooked_site(&app, &receiver).await;
    let (_, url) = invite(&app, &site).await;
    let page = dc_page(&app, &url).await;
    let r1 = page.r1();
    assert_eq!(
        ids(&r1.params["dcql_query"]),
        ["proof_of_age", "pid", "mdl"]
    );
    assert_eq!(
        r1.params["dcql_query"]["credential_sets"],
        json!([{"options": [["proof_of_age"], ["pid"], ["mdl"]]}])
    );
    assert_eq!(page.r2().doc_types, [AV_DOCTYPE, PID_DOCTYPE, MDL_DOCTYPE]);

    let mut sent = 0;
    for doc in [&AV, &PID, &MDL] {
        for protocol in ["r1", "r2"] {
            let (id, url) = invite(&app, &site).await;
            let page = dc_page(&app, &url).await;
            let claim = page.r1().requested_claim;
            let p = Presentation::for_claim(&claim, T0).of_doc(doc.doc_type, doc.namespace);
            let issuer = issuers.of(doc);
            let data = match protocol {
                "r1" => issuer.dc_openid4vp_data(&page.r1(), &app.base, &p, &DcAnswer::default()),
                _ => issuer.dc_annex_c_data(&page.r2(), &app.base, &p, &DcAnswer::default()),
            };
            let wire = match protocol {
                "r1" => page.r1().protocol,
                _ => "org-iso-mdoc".to_owned(),
            };
            let body = json!({"state": page.state, "protocol": wire, "data": data});
            let resp = post_dc_api(&app, &url, &body).await;
            assert_eq!(
                resp.status(),
                200,
                "{} {protocol}: {}",
                doc.method,
                resp.text().await.unwrap()
            );
            sent += 1;
            let got = receiver.wait_for(sent, Duration::from_secs(5)).await;
            let hook = got[sent - 1].json();
            assert_eq!(hook["data"]["inviteId"], id.as_str());
            assert_eq!(hook["data"]["method"], doc.method, "{protocol}");
            let (_, payload) = decode(&receipt_of(&app, &site, &id).await);
            assert_eq!(
                (payload["docType"].as_str(), payload["transport"].as_str()),
                (Some(doc.doc_type), Some("dc-api"))
            );
        }
    }
}

#[tokio::test]
async fn through_the_dc_api_a_licence_under_the_wrong_anchor_or_kind_is_refused() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&PID, &MDL]).await;
    let site = site_accepting(&app, "mdl").await;
    let (id, url) = invite(&app, &site).await;
    let page = dc_page(&app, &url).await;
    assert_eq!(page.r2().doc_types, [MDL_DOCTYPE]);
    let claim = page.r1().requested_claim;
    let licence = Presentation::for_claim(&claim, T0).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    // R2: a licence from the PID provider's CA.
    let data = issuers
        .pid
        .dc_annex_c_data(&page.r2(), &app.base, &licence, &DcAnswer::default());
    let body = json!({"state": page.state, "protocol": "org-iso-mdoc", "data": data});
    let err = assert_error(post_dc_api(&app, &url, &body).await, 400, 40010).await;
    assert_eq!(
        err["message"],
        "presentation refused: issuer is not trusted"
    );
    // R1: a PID, which the site does not accept, sent as `pid`.
    let pid = Presentation::for_claim(&claim, T0).of_doc(PID_DOCTYPE, PID_NAMESPACE);
    let answer = DcAnswer {
        credential_id: Some("pid".into()),
        ..Default::default()
    };
    let data = issuers
        .pid
        .dc_openid4vp_data(&page.r1(), &app.base, &pid, &answer);
    let body = json!({"state": page.state, "protocol": page.r1().protocol, "data": data});
    assert_error(post_dc_api(&app, &url, &body).await, 400, 40024).await;
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
}
