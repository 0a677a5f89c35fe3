//! docs/zk.md#zero-knowledge-proofs end to end: a proof that pylongfellow mints, with
//! either prover (Google's C++ and ISRG's Rust), for the very request the server issued,
//! verifies the invite through each transport (link, DC API R1 and R2) by the kind's
//! method; its receipt carries `zkCircuit` and checks with an independent JOSE library.

use crate::helpers::SiteOptions;
use crate::receipts::{decode, jose_checked, jwks, receipt_of};
use crate::wallet::MDL_DOCTYPE;
use crate::zk::{mdl_claim, Backend, Job, Minter, Transport, ZkCase, ZkServer, V7_1ATTR_HASH};
use serde_json::{json, Value};

/// For each prover: an invite, a proof for its request's transcript through `transport`,
/// the answer, and what must follow.
async fn verified_through(transport: Transport) {
    let minter = Minter::start(&Backend::BOTH);
    let server = ZkServer::start(2).await;
    let app = &server.app;
    let options = SiteOptions {
        redirect_url: Some("https://shop.example/back"),
        ..Default::default()
    };
    let site = app.create_site_with(options).await;
    let mut cases = Vec::new();
    let mut jobs = Vec::new();
    for backend in Backend::BOTH {
        let case = ZkCase::of_site(app, site.clone()).await;
        let (offered, required) = case.offered(transport, MDL_DOCTYPE);
        assert_eq!(offered, [V7_1ATTR_HASH], "the one circuit loaded, offered");
        assert!(!required.unwrap_or(false), "prefer: not required");
        let transcript = case.transcript(transport, &app.base);
        let claim = mdl_claim(&case.claim());
        jobs.push(Job::prove(backend.name(), &transcript, &claim, backend));
        cases.push(case);
    }
    let answers = minter.mint(jobs).await;
    let keys = jwks(app).await.to_string();
    for ((case, answer), backend) in cases.iter().zip(answers).zip(Backend::BOTH) {
        let resp = case.answer(app, transport, MDL_DOCTYPE, &answer).await;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(body, json!({"redirect_uri": case.url}));
        let record = app.status_record(&case.site, &case.invite_id).await;
        assert_eq!(record["status"], "verified", "{backend:?}");

        let receipt = receipt_of(app, &case.site, &case.invite_id).await;
        let payload = jose_checked(&keys, &receipt).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(payload, decode(&receipt).1);
        assert_eq!(payload["zkCircuit"], V7_1ATTR_HASH, "{payload}");
        assert_eq!(payload["method"], "mdl");
        assert_eq!(payload["docType"], MDL_DOCTYPE);
        let expected_transport = match transport {
            Transport::Link => "openid4vp",
            _ => "dc-api",
        };
        assert_eq!(payload["transport"], expected_transport);
    }
}

#[tokio::test]
async fn a_pylongfellow_proof_through_the_link_verifies_the_invite_by_its_kind() {
    verified_through(Transport::Link).await;
}

#[tokio::test]
async fn a_pylongfellow_proof_through_dc_api_openid4vp_verifies_the_invite_by_its_kind() {
    verified_through(Transport::R1).await;
}

#[tokio::test]
async fn a_pylongfellow_proof_through_dc_api_annex_c_verifies_the_invite_by_its_kind() {
    verified_through(Transport::R2).await;
}
