//! docs/kinds.md#credential-kinds through the real server: three kinds of credential, each under its own
//! anchors; a site's `--accept`; the DCQL query with `credential_sets` only when more
//! than one kind is asked for; each kind through the link, with its method in the
//! webhook, the receipt and the metrics; the page. Through the Digital Credentials API
//! (R1 and R2): kinds/dc_api.rs.

use crate::dc_api::post_dc_api;
use crate::eu_av::{answer, request_on_page};
use crate::helpers::{
    assert_error, gateway_page, spawn_app_trusting, SiteOptions, TestApp, TestSite, T0,
};
use crate::receipts::{decode, receipt_of};
use crate::receiver::TestReceiver;
use crate::wallet::{
    Presentation, TestIssuer, AV_DOCTYPE, AV_NAMESPACE, MDL_DOCTYPE, MDL_NAMESPACE, PID_DOCTYPE,
    PID_NAMESPACE,
};
use crate::webhooks::hooked_site;
use agegate::domain::{Accept, Kind};
use serde_json::{json, Value};
use std::time::Duration;

mod dc_api;

/// One kind as the test wallet knows it (independently of the server's table).
pub(crate) struct Doc {
    pub kind: Kind,
    pub method: &'static str,
    pub doc_type: &'static str,
    pub namespace: &'static str,
    pub dcql_id: &'static str,
}

pub(crate) const AV: Doc = Doc {
    kind: Kind::EU_AV,
    method: "eu-av",
    doc_type: AV_DOCTYPE,
    namespace: AV_NAMESPACE,
    dcql_id: "proof_of_age",
};
pub(crate) const PID: Doc = Doc {
    kind: Kind::EUDI_PID,
    method: "eudi-pid",
    doc_type: PID_DOCTYPE,
    namespace: PID_NAMESPACE,
    dcql_id: "pid",
};
pub(crate) const MDL: Doc = Doc {
    kind: Kind::MDL,
    method: "mdl",
    doc_type: MDL_DOCTYPE,
    namespace: MDL_NAMESPACE,
    dcql_id: "mdl",
};

/// An issuer of each kind, each under its own CA.
pub(crate) struct Issuers {
    pub av: TestIssuer,
    pub pid: TestIssuer,
    pub mdl: TestIssuer,
}

impl Issuers {
    pub fn new() -> Self {
        Issuers {
            av: TestIssuer::named("agegate test Proof of Age CA", T0),
            pid: TestIssuer::named("agegate test PID provider CA", T0),
            mdl: TestIssuer::named("agegate test IACA root", T0),
        }
    }

    pub fn of(&self, doc: &Doc) -> &TestIssuer {
        // In the kinds table's order.
        [&self.av, &self.pid, &self.mdl][doc.kind.index()]
    }
}

/// A server trusting each listed kind's issuer for that kind only.
pub(crate) async fn app_trusting(issuers: &Issuers, docs: &[&Doc]) -> TestApp {
    let sources: Vec<(Kind, &str)> = docs
        .iter()
        .map(|doc| (doc.kind, issuers.of(doc).ca_pem.as_str()))
        .collect();
    spawn_app_trusting(&sources, |s| {
        s.allow_private_webhooks = true;
        s.metrics_listen = Some("127.0.0.1:0".into());
    })
    .await
}

/// A site accepting the kinds of `list` (as `--accept` takes it).
pub(crate) async fn site_accepting(app: &TestApp, list: &str) -> TestSite {
    app.create_site_with(SiteOptions {
        accept: Accept::parse(list).unwrap(),
        ..Default::default()
    })
    .await
}

pub(crate) async fn invite(app: &TestApp, site: &TestSite) -> (String, String) {
    let invite = app.new_invite(site, Some(json!({"customId": "u-1"}))).await;
    (
        invite["inviteId"].as_str().unwrap().to_owned(),
        invite["url"].as_str().unwrap().to_owned(),
    )
}

pub(crate) fn ids(dcql: &Value) -> Vec<String> {
    dcql["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_link_asks_for_every_kind_on_with_credential_sets_only_when_more_than_one() {
    let issuers = Issuers::new();
    let all = app_trusting(&issuers, &[&AV, &PID, &MDL]).await;
    let site = all.create_site().await;
    let (_, url) = invite(&all, &site).await;
    let req = request_on_page(&all, &url).await;
    let credential = |d: &Doc| {
        json!({"id": d.dcql_id, "format": "mso_mdoc", "meta": {"doctype_value": d.doc_type},
               "claims": [{"path": [d.namespace, "age_over_18"]}]})
    };
    assert_eq!(
        req.dcql_query,
        json!({
            "credentials": [credential(&AV), credential(&PID), credential(&MDL)],
            "credential_sets": [{"options": [["proof_of_age"], ["pid"], ["mdl"]]}]
        })
    );
    // A site accepting one kind of the three: one credential, no credential_sets.
    let one = site_accepting(&all, "mdl").await;
    let (_, url) = invite(&all, &one).await;
    let req = request_on_page(&all, &url).await;
    assert_eq!(req.dcql_query, json!({"credentials": [credential(&MDL)]}));
    // A server with one kind on: the same, whatever the site accepts (`all`).
    let only_pid = app_trusting(&issuers, &[&PID]).await;
    let site = only_pid.create_site().await;
    let (_, url) = invite(&only_pid, &site).await;
    let req = request_on_page(&only_pid, &url).await;
    assert_eq!(req.dcql_query, json!({"credentials": [credential(&PID)]}));
}

#[tokio::test]
async fn each_kind_verifies_through_the_link_with_its_method_in_the_webhook_and_receipt() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&AV, &PID, &MDL]).await;
    let receiver = TestReceiver::start().await;
    let site = hooked_site(&app, &receiver).await;
    for (n, doc) in [&AV, &PID, &MDL].into_iter().enumerate() {
        let (id, url) = invite(&app, &site).await;
        let req = request_on_page(&app, &url).await;
        let p = Presentation::for_request(&req, T0).of_doc(doc.doc_type, doc.namespace);
        let vp = issuers.of(doc).vp_token(&req, &p);
        assert!(vp.starts_with(&format!("{{\"{}\":", doc.dcql_id)), "{vp}");
        let resp = answer(&app, &req, &vp).await;
        assert_eq!(
            resp.status(),
            200,
            "{}: {}",
            doc.method,
            resp.text().await.unwrap()
        );
        assert_eq!(app.status_record(&site, &id).await["status"], "verified");
        let got = receiver.wait_for(n + 1, Duration::from_secs(5)).await;
        let hook = got[n].json();
        assert_eq!(
            (
                hook["data"]["inviteId"].as_str(),
                hook["data"]["method"].as_str()
            ),
            (Some(id.as_str()), Some(doc.method))
        );
        let (_, payload) = decode(&receipt_of(&app, &site, &id).await);
        assert_eq!(payload["method"], doc.method);
        assert_eq!(payload["docType"], doc.doc_type);
        assert_eq!(payload["transport"], "openid4vp");
        assert_eq!(
            payload["issuerAnchor"],
            crate::wallet::sha256(&issuers.of(doc).ca_der)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
    }
    let metrics = app.metrics().await;
    for kind in ["eu-av", "eudi-pid", "mdl"] {
        assert!(
            metrics.contains(&format!(
                "agegate_presentations_total{{kind=\"{kind}\",transport=\"openid4vp\",outcome=\"accepted\"}} 1"
            )),
            "{kind} counted: {metrics}"
        );
        assert!(
            metrics.contains(&format!(
                "agegate_invites_verified_total{{method=\"{kind}\"}} 1"
            )),
            "{metrics}"
        );
    }
}

#[tokio::test]
async fn a_driving_licence_signed_under_a_pid_anchor_is_refused() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&PID, &MDL]).await;
    let site = app.create_site().await;
    let (id, url) = invite(&app, &site).await;
    let req = request_on_page(&app, &url).await;
    // A licence from the PID provider's CA: both kinds are on, but a licence chains
    // only to the mdl anchors.
    let p = Presentation::for_request(&req, T0).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    let vp = issuers.pid.vp_token(&req, &p);
    let body = assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
    assert_eq!(
        body["message"],
        "presentation refused: issuer is not trusted"
    );
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
    // The same licence from the licence issuer's CA is accepted (the request stayed live).
    let vp = issuers.mdl.vp_token(&req, &p);
    assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    let metrics = app.metrics().await;
    assert!(
        metrics.contains(
            "agegate_presentations_total{kind=\"mdl\",transport=\"openid4vp\",outcome=\"untrusted_issuer\"} 1"
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn an_answer_of_a_kind_the_site_does_not_accept_is_refused() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&AV, &MDL]).await;
    let site = site_accepting(&app, "eu-av").await;
    let (id, url) = invite(&app, &site).await;
    let req = request_on_page(&app, &url).await;
    assert_eq!(ids(&req.dcql_query), ["proof_of_age"]);
    let p = Presentation::for_request(&req, T0).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    // Sent as what it is...
    let vp = issuers.mdl.vp_token(&req, &p);
    let vp = vp.replacen("\"proof_of_age\"", "\"mdl\"", 1);
    let body = assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
    assert_eq!(
        body["message"],
        "presentation refused: vp_token answers \"mdl\", which was not requested"
    );
    // ...or dressed up as the kind that was asked for.
    let vp = issuers.mdl.vp_token(&req, &p);
    let body = assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
    assert_eq!(
        body["message"],
        "presentation refused: document type \"org.iso.18013.5.1.mDL\" is not one that was requested"
    );
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
}

#[tokio::test]
async fn a_site_that_accepts_nothing_the_server_has_on_gets_the_plain_page() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&AV]).await;
    let site = site_accepting(&app, "mdl,eudi-pid").await;
    let (id, url) = invite(&app, &site).await;
    let resp = app.client.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let html = resp.text().await.unwrap();
    assert!(!html.contains("eu-av-link"), "no wallet link");
    assert!(!html.contains("dc-api-request"), "no DC API request");
    assert!(
        html.contains("verification partner"),
        "the page without a wallet"
    );
    let resp = app
        .client
        .post(format!("{url}/openid4vp"))
        .form(&[("state", "x"), ("vp_token", "{}")])
        .send()
        .await
        .unwrap();
    let body = assert_error(resp, 404, 40403).await;
    assert_eq!(
        body["message"],
        "no wallet credential this site accepts is enabled on this server"
    );
    let body = assert_error(
        post_dc_api(
            &app,
            &url,
            &json!({"state": "x", "protocol": "org-iso-mdoc", "data": {}}),
        )
        .await,
        404,
        40403,
    )
    .await;
    assert!(body["message"].is_string());
    assert_eq!(app.status_record(&site, &id).await["status"], "pending");
}

#[tokio::test]
async fn the_page_names_the_credentials_it_accepts() {
    let issuers = Issuers::new();
    let app = app_trusting(&issuers, &[&AV, &MDL]).await;
    let site = app.create_site().await;
    let (_, url) = invite(&app, &site).await;
    let html = gateway_page(&app.client, &url).await;
    assert!(html.contains("Use a wallet app"), "{html}");
    assert!(
        html.contains("Accepted here: EU Age Verification app; Mobile driving licence (mDL)."),
        "{html}"
    );
    let eu_av_only = app_trusting(&issuers, &[&AV]).await;
    let site = eu_av_only.create_site().await;
    let (_, url) = invite(&eu_av_only, &site).await;
    let html = gateway_page(&eu_av_only.client, &url).await;
    assert!(html.contains("Use the EU Age Verification app"));
    assert!(!html.contains("Accepted here"));
}
