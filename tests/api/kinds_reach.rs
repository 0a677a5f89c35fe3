//! The kinds for the wallets people hold (docs/kinds.md#credential-kinds): Google
//! Wallet's ID pass (`google-id`) and the ISO/IEC 23220 Photo ID (`photo-id`, either
//! spelling of its docType), each through the link, R1 and R2 under its own anchors only;
//! their flags and environment variables.

use crate::dc_api::{dc_page, post_dc_api};
use crate::eu_av::{answer, request_on_page};
use crate::helpers::{
    agegate, assert_error, gateway_page, json_output, spawn_app_trusting, TestApp, TestSite, T0,
};
use crate::receipts::{decode, receipt_of};
use crate::wallet::{
    DcAnswer, DcWallet as _, Presentation, TestIssuer, GOOGLE_ID_DOCTYPE, MDL_DOCTYPE,
    MDL_NAMESPACE, PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE, PHOTO_ID_NAMESPACE,
};
use agegate::domain::Kind;
use serde_json::{json, Value};

/// One credential as the test wallet holds it (independently of the server's table).
struct Doc {
    method: &'static str,
    doc_type: &'static str,
    namespace: &'static str,
    /// The DCQL credential id the request gives its docType.
    dcql_id: &'static str,
}

const GOOGLE_ID: Doc = Doc {
    method: "google-id",
    doc_type: GOOGLE_ID_DOCTYPE,
    namespace: MDL_NAMESPACE,
    dcql_id: "google_id",
};
const PHOTO_ID: Doc = Doc {
    method: "photo-id",
    doc_type: PHOTO_ID_DOCTYPE,
    namespace: PHOTO_ID_NAMESPACE,
    dcql_id: "photo_id",
};
const PHOTO_ID_DRAFT: Doc = Doc {
    method: "photo-id",
    doc_type: PHOTO_ID_DRAFT_DOCTYPE,
    namespace: PHOTO_ID_NAMESPACE,
    dcql_id: "photo_id_2",
};

/// Google's IACA and a Photo ID issuer's, each trusted for its own kind only.
struct Issuers {
    google: TestIssuer,
    photo: TestIssuer,
}

impl Issuers {
    fn new() -> Self {
        Issuers {
            google: TestIssuer::named("agegate test Identity Credential Root IACA", T0),
            photo: TestIssuer::named("agegate test Photo ID IACA", T0),
        }
    }

    fn of(&self, doc: &Doc) -> &TestIssuer {
        match doc.method {
            "google-id" => &self.google,
            _ => &self.photo,
        }
    }

    async fn app(&self) -> TestApp {
        let sources = [
            (Kind::GOOGLE_ID, self.google.ca_pem.as_str()),
            (Kind::PHOTO_ID, self.photo.ca_pem.as_str()),
        ];
        spawn_app_trusting(&sources, |s| {
            s.metrics_listen = Some("127.0.0.1:0".into());
        })
        .await
    }
}

async fn invite(app: &TestApp, site: &TestSite) -> (String, String) {
    let invite = app.new_invite(site, None).await;
    (
        invite["inviteId"].as_str().unwrap().to_owned(),
        invite["url"].as_str().unwrap().to_owned(),
    )
}

fn credential(d: &Doc) -> Value {
    json!({"id": d.dcql_id, "format": "mso_mdoc", "meta": {"doctype_value": d.doc_type},
           "claims": [{"path": [d.namespace, "age_over_18"]}]})
}

#[tokio::test]
async fn the_requests_ask_for_google_ids_and_both_photo_id_doc_types_each_alone() {
    let issuers = Issuers::new();
    let app = issuers.app().await;
    let site = app.create_site().await;
    let (_, url) = invite(&app, &site).await;
    let expected = json!({
        "credentials": [credential(&GOOGLE_ID), credential(&PHOTO_ID), credential(&PHOTO_ID_DRAFT)],
        "credential_sets": [{"options": [["google_id"], ["photo_id"], ["photo_id_2"]]}]
    });
    assert_eq!(request_on_page(&app, &url).await.dcql_query, expected);
    let page = dc_page(&app, &url).await;
    assert_eq!(page.r1().params["dcql_query"], expected);
    assert_eq!(
        page.r2().doc_types,
        [GOOGLE_ID_DOCTYPE, PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE],
        "one docRequest per docType"
    );
    let html = gateway_page(&app.client, &url).await;
    assert!(
        html.contains("Accepted here: Google Wallet ID pass; Photo ID (ISO/IEC 23220)."),
        "{html}"
    );
}

#[tokio::test]
async fn google_ids_and_photo_ids_of_either_spelling_verify_through_the_link_r1_and_r2() {
    let issuers = Issuers::new();
    let app = issuers.app().await;
    let site = app.create_site().await;
    for doc in [&GOOGLE_ID, &PHOTO_ID, &PHOTO_ID_DRAFT] {
        for transport in ["link", "r1", "r2"] {
            let (id, url) = invite(&app, &site).await;
            let issuer = issuers.of(doc);
            let resp = match transport {
                "link" => {
                    let req = request_on_page(&app, &url).await;
                    let p = Presentation::for_request(&req, T0).of_doc(doc.doc_type, doc.namespace);
                    let vp = issuer.vp_token(&req, &p);
                    assert!(vp.starts_with(&format!("{{\"{}\":", doc.dcql_id)), "{vp}");
                    answer(&app, &req, &vp).await
                }
                _ => {
                    let page = dc_page(&app, &url).await;
                    let p = Presentation::for_claim(&page.r1().requested_claim, T0)
                        .of_doc(doc.doc_type, doc.namespace);
                    let (protocol, data) = if transport == "r1" {
                        let r1 = page.r1();
                        let data =
                            issuer.dc_openid4vp_data(&r1, &app.base, &p, &DcAnswer::default());
                        (r1.protocol, data)
                    } else {
                        let data =
                            issuer.dc_annex_c_data(&page.r2(), &app.base, &p, &DcAnswer::default());
                        ("org-iso-mdoc".to_owned(), data)
                    };
                    let body = json!({"state": page.state, "protocol": protocol, "data": data});
                    post_dc_api(&app, &url, &body).await
                }
            };
            let what = format!("{} {transport}", doc.doc_type);
            assert_eq!(resp.status(), 200, "{what}: {}", resp.text().await.unwrap());
            let record = app.status_record(&site, &id).await;
            assert_eq!(record["status"], "verified", "{what}");
            let (_, receipt) = decode(&receipt_of(&app, &site, &id).await);
            assert_eq!(receipt["method"], doc.method, "{what}");
            assert_eq!(
                receipt["docType"], doc.doc_type,
                "the docType presented: {what}"
            );
        }
    }
    let metrics = app.metrics().await;
    for (kind, n) in [("google-id", 3), ("photo-id", 6)] {
        assert!(
            metrics.contains(&format!(
                "agegate_invites_verified_total{{method=\"{kind}\"}} {n}"
            )),
            "{kind}: {metrics}"
        );
    }
}

#[tokio::test]
async fn a_photo_id_signed_under_the_google_id_anchors_is_refused() {
    let issuers = Issuers::new();
    let app = issuers.app().await;
    let site = app.create_site().await;
    for doc in [&PHOTO_ID, &PHOTO_ID_DRAFT] {
        let (id, url) = invite(&app, &site).await;
        let req = request_on_page(&app, &url).await;
        let p = Presentation::for_request(&req, T0).of_doc(doc.doc_type, doc.namespace);
        // Issued by Google's IACA: both kinds are on, but a Photo ID chains only to the
        // photo-id anchors.
        let vp = issuers.google.vp_token(&req, &p);
        let body = assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
        assert_eq!(
            body["message"],
            "presentation refused: issuer is not trusted"
        );
        // Over R2 too, where no DCQL id names the kind.
        let page = dc_page(&app, &url).await;
        let data = issuers
            .google
            .dc_annex_c_data(&page.r2(), &app.base, &p, &DcAnswer::default());
        let body = json!({"state": page.state, "protocol": "org-iso-mdoc", "data": data});
        let body = assert_error(post_dc_api(&app, &url, &body).await, 400, 40010).await;
        assert_eq!(
            body["message"],
            "presentation refused: issuer is not trusted"
        );
        assert_eq!(app.status_record(&site, &id).await["status"], "pending");
        // And the other way: a Google ID pass under the Photo ID issuer.
        let p = Presentation::for_request(&req, T0).of_doc(GOOGLE_ID_DOCTYPE, MDL_NAMESPACE);
        let vp = issuers.photo.vp_token(&req, &p);
        assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
        // The same Photo ID from its own issuer is accepted (the request stayed live).
        let vp = issuers.photo.vp_token(
            &req,
            &Presentation::for_request(&req, T0).of_doc(doc.doc_type, doc.namespace),
        );
        assert_eq!(answer(&app, &req, &vp).await.status(), 200);
    }
    // A driving licence is no Google ID pass, though its elements share a namespace.
    let (_, url) = invite(&app, &site).await;
    let req = request_on_page(&app, &url).await;
    let p = Presentation::for_request(&req, T0).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    let vp = issuers
        .google
        .vp_token(&req, &p)
        .replacen("\"proof_of_age\"", "\"google_id\"", 1);
    let body = assert_error(answer(&app, &req, &vp).await, 400, 40010).await;
    assert_eq!(
        body["message"],
        "presentation refused: document type \"org.iso.18013.5.1.mDL\" is not one that was requested"
    );
}

#[test]
fn the_anchors_flags_and_envs_turn_google_id_and_photo_id_on_each_from_its_file() {
    let issuers = Issuers::new();
    let dir = tempfile::tempdir().unwrap();
    let google = dir.path().join("google.pem");
    let photo = dir.path().join("photo.pem");
    std::fs::write(&google, &issuers.google.ca_pem).unwrap();
    std::fs::write(&photo, &issuers.photo.ca_pem).unwrap();
    let show = |args: &[&std::ffi::OsStr], env: &[(&str, &std::path::Path)]| -> Value {
        let mut show = agegate();
        show.args(["trust", "show", "--json"])
            .args(args)
            .env_remove("AGEGATE_GOOGLE_ID_TRUST_ANCHORS")
            .env_remove("AGEGATE_PHOTO_ID_TRUST_ANCHORS")
            .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())));
        json_output(&mut show).0
    };
    let by_flags = show(
        &[
            "--google-id-trust-anchors".as_ref(),
            google.as_os_str(),
            "--photo-id-trust-anchors".as_ref(),
            photo.as_os_str(),
        ],
        &[],
    );
    let by_env = show(
        &[],
        &[
            ("AGEGATE_GOOGLE_ID_TRUST_ANCHORS", &google),
            ("AGEGATE_PHOTO_ID_TRUST_ANCHORS", &photo),
        ],
    );
    for shown in [&by_flags, &by_env] {
        assert_eq!(
            shown["kindsOn"],
            json!(["google-id", "photo-id"]),
            "{shown}"
        );
        let sources: Vec<(&str, &str)> = shown["anchors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["kind"].as_str().unwrap(), a["source"].as_str().unwrap()))
            .collect();
        assert_eq!(
            sources,
            [
                ("google-id", google.to_str().unwrap()),
                ("photo-id", photo.to_str().unwrap())
            ]
        );
    }
}
