//! Zero-knowledge answers at the gateway (docs/zk.md#zero-knowledge-proofs): a proof
//! pylongfellow made for the very request the server issued verifies the invite by the
//! kind's method, its receipt names the circuit; every refusal names its own reason and
//! leaves the request live; the site's policy decides between plain and ZK answers.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::eu_av::answer as link_answer;
use crate::helpers::{assert_error, SiteOptions, TestApp, T0};
use crate::receipts::{decode, jose_checked, jwks, receipt_of};
use crate::wallet::{rfc3339, Presentation, AV_DOCTYPE, MDL_DOCTYPE};
use crate::zk::V7_1ATTR_HASH;
use crate::zk::{iaca_pem, mdl_claim, Backend, Job, Minter, Transport, ZkCase, ZkServer};
use agegate::domain::ZkPolicy;

/// The v6 1-attribute circuit: loaded by no test server, so offered by no request.
const V6_1ATTR_HASH: &str = "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6";

/// `{"mdl_zk": ["<base64url DeviceResponse>"]}`: the link's vp_token of an mDL proof.
pub fn mdl_vp_token(device_response: &[u8]) -> String {
    json!({"mdl_zk": [URL_SAFE_NO_PAD.encode(device_response)]}).to_string()
}

/// A proof of the case's claim for the link's SessionTranscript, by google-cpp.
pub fn link_proof(id: &str, case: &ZkCase, app: &TestApp) -> Job {
    let transcript = case.transcript(Transport::Link, &app.base);
    Job::prove(
        id,
        &transcript,
        &mdl_claim(&case.claim()),
        Backend::GoogleCpp,
    )
}

async fn message(resp: reqwest::Response, status: u16, code: u32) -> String {
    let body = assert_error(resp, status, code).await;
    body["message"].as_str().unwrap().to_owned()
}

async fn metrics(app: &TestApp) -> String {
    let url = format!("{}/metrics", app.metrics_base.as_deref().unwrap());
    let resp = app.client.get(url).send().await.unwrap();
    resp.text().await.unwrap()
}

#[tokio::test]
async fn a_zk_answer_verifies_the_invite_by_the_kinds_method_and_its_receipt_names_the_circuit() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start_with(2, |s| s.metrics_listen = Some("127.0.0.1:0".into())).await;
    let app = &server.app;
    let case = ZkCase::new(app, SiteOptions::default()).await;
    let answer = minter.one(link_proof("ok", &case, app)).await;

    let resp = case.post_link(app, &mdl_vp_token(&answer)).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body, json!({"redirect_uri": case.url}));
    assert_eq!(case.status(app).await, "verified");

    let receipt = receipt_of(app, &case.site, &case.invite_id).await;
    let (_, payload) = decode(&receipt);
    let iaca = iaca_pem();
    let iaca_der = agegate::mdoc::TrustAnchors::from_pem(&iaca)
        .unwrap()
        .summaries()[0]
        .sha256;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let nonce_hash = hex(&Sha256::digest(case.link.nonce.as_bytes()));
    assert_eq!(
        payload,
        json!({
            "iss": app.base, "sub": case.invite_id, "siteId": case.site.site_id,
            "customId": "c-9", "iat": T0, "method": "mdl", "minAge": 18,
            "docType": MDL_DOCTYPE, "issuerAnchor": hex(&iaca_der),
            "transport": "openid4vp", "nonceHash": nonce_hash,
            "zkCircuit": V7_1ATTR_HASH,
            // A proof hides the MSO, and so its status.
            "credentialStatus": "unknown",
        })
    );
    let members: Vec<&String> = payload.as_object().unwrap().keys().collect();
    assert_eq!(members.last().unwrap().as_str(), "zkCircuit", "{members:?}");
    // Any JOSE library checks it against the published keys.
    let keys = jwks(app).await.to_string();
    let checked = tokio::task::spawn_blocking(move || jose_checked(&keys, &receipt))
        .await
        .unwrap();
    assert_eq!(checked, Ok(payload));

    let text = metrics(app).await;
    for line in [
        "agegate_presentations_total{kind=\"mdl\",transport=\"openid4vp\",outcome=\"accepted\"} 1"
            .to_owned(),
        "agegate_zk_verify_seconds_count 1".to_owned(),
        "agegate_invites_verified_total{method=\"mdl\"} 1".to_owned(),
    ] {
        assert!(text.contains(&line), "{line} in\n{text}");
    }
}

#[tokio::test]
async fn zk_answers_are_refused_each_for_its_reason_and_the_request_stays_live() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start(2).await;
    let app = &server.app;
    let case = ZkCase::new(app, SiteOptions::default()).await;
    let ok = minter.one(link_proof("ok", &case, app)).await;
    let shown = |id: &str| Job::reuse(id, "ok");
    let jobs = vec![
        Job {
            zk_system_id: Some(V6_1ATTR_HASH.to_owned()),
            ..shown("v6")
        },
        Job {
            timestamp_shown: Some(rfc3339(T0 + 6 * 60)),
            ..shown("late")
        },
        Job {
            timestamp_shown: Some(rfc3339(T0 - 6 * 60)),
            ..shown("early")
        },
        Job {
            value_shown: Some(false),
            ..shown("false")
        },
        Job {
            device_signed: Some("nonempty"),
            ..shown("device")
        },
        Job {
            doc_type_shown: Some("eu.europa.ec.av.1".to_owned()),
            ..shown("doctype")
        },
        Job {
            chain: Some("self-signed"),
            ..shown("untrusted")
        },
        Job {
            proof: Some("bit-flipped"),
            ..shown("flipped")
        },
        Job {
            proof: Some("truncated"),
            ..shown("truncated")
        },
        Job {
            proof: Some("extended"),
            ..shown("extended")
        },
        Job {
            zk_system_id: Some("multipaz".to_owned()),
            proof: Some("bit-flipped"),
            ..shown("multipaz")
        },
    ];
    let answers = minter.mint(jobs).await;
    let not_verified = "presentation refused: the zero-knowledge proof does not verify";
    let expected = [
        format!("presentation refused: the proof's circuit \"{V6_1ATTR_HASH}\" is not one this request offered"),
        "presentation refused: the proof's timestamp is not within 5 minutes of the server's clock".into(),
        "presentation refused: the proof's timestamp is not within 5 minutes of the server's clock".into(),
        "presentation refused: the zero-knowledge document does not list age_over_18 as true in the credential's namespace".into(),
        "presentation refused: device-signed elements are not allowed with a zero-knowledge proof".into(),
        "presentation refused: document type \"eu.europa.ec.av.1\" is not one that was requested".into(),
        "presentation refused: issuer is not trusted".into(),
        not_verified.into(),
        not_verified.into(),
        not_verified.into(),
        not_verified.into(),
    ];
    for (answer, want) in answers.iter().zip(&expected) {
        let resp = case.post_link(app, &mdl_vp_token(answer)).await;
        assert_eq!(&message(resp, 400, 40010).await, want);
    }
    // The transcript is the server's own for the transport: a proof made for the link's
    // does not verify when it comes through the DC API.
    let resp = case.answer(app, Transport::R2, MDL_DOCTYPE, &ok).await;
    assert_eq!(message(resp, 400, 40010).await, not_verified);
    assert_eq!(case.status(app).await, "pending");
    // The request stayed live through every refusal.
    let resp = case.post_link(app, &mdl_vp_token(&ok)).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn require_refuses_a_plain_answer_and_off_refuses_a_proof() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start(2).await;
    let app = &server.app;
    let eu_av_plain = |case: &ZkCase| {
        let p = Presentation::for_request(&case.link, T0);
        let answer = server
            .plain
            .device_response_cbor_over(case.link_transcript(), &p);
        json!({case.link.id_for(AV_DOCTYPE): [URL_SAFE_NO_PAD.encode(answer)]}).to_string()
    };

    let require = SiteOptions {
        zk: ZkPolicy::Require,
        ..Default::default()
    };
    let case = ZkCase::new(app, require).await;
    let resp = case.post_link(app, &eu_av_plain(&case)).await;
    assert_eq!(
        message(resp, 400, 40010).await,
        "presentation refused: this site requires a zero-knowledge proof; a plain presentation is refused"
    );
    let answer = minter.one(link_proof("required", &case, app)).await;
    let resp = case.post_link(app, &mdl_vp_token(&answer)).await;
    assert_eq!(resp.status(), 200, "a proof answers it");

    let off = SiteOptions {
        zk: ZkPolicy::Off,
        ..Default::default()
    };
    let case = ZkCase::new(app, off).await;
    let answer = minter.one(link_proof("off", &case, app)).await;
    let resp = case.post_link(app, &mdl_vp_token(&answer)).await;
    assert_eq!(
        message(resp, 400, 40010).await,
        "presentation refused: a zero-knowledge proof was not asked for by this request"
    );
    let resp = case.post_link(app, &eu_av_plain(&case)).await;
    assert_eq!(resp.status(), 200, "a plain answer does");

    // Under prefer, either answers.
    let case = ZkCase::new(app, SiteOptions::default()).await;
    let resp = case.post_link(app, &eu_av_plain(&case)).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn a_full_proof_pool_answers_503_with_retry_after_and_leaves_the_invite_and_request_as_they_were(
) {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    // One checker and a queue of one: a third proof in flight finds the pool full.
    let server = ZkServer::start(1).await;
    let app = &server.app;
    let case = ZkCase::new(app, SiteOptions::default()).await;
    let ok = minter.one(link_proof("ok", &case, app)).await;
    let flipped = Job {
        proof: Some("bit-flipped"),
        ..Job::reuse("flipped", "ok")
    };
    let flipped = mdl_vp_token(&minter.one(flipped).await);
    let posts = (0..12).map(|_| case.post_link(app, &flipped));
    let answers = futures_util::future::join_all(posts).await;
    let mut busy = 0;
    for resp in answers {
        match resp.status().as_u16() {
            503 => {
                assert_eq!(resp.headers()["retry-after"], "1");
                let body = assert_error(resp, 503, 50302).await;
                assert_eq!(
                    body["message"],
                    "every zero-knowledge proof check is busy; send the answer again after the time in Retry-After"
                );
                busy += 1;
            }
            _ => {
                let m = message(resp, 400, 40010).await;
                assert_eq!(
                    m,
                    "presentation refused: the zero-knowledge proof does not verify"
                );
            }
        }
    }
    assert!(
        busy >= 1,
        "twelve proofs at once fill one checker and its queue"
    );
    assert_eq!(case.status(app).await, "pending");
    let resp = case.post_link(app, &mdl_vp_token(&ok)).await;
    assert_eq!(resp.status(), 200, "the request stayed live");
}

#[tokio::test]
async fn the_wallet_answer_routes_read_1_5_mib_bodies_and_other_routes_still_only_64_kib() {
    let issuer = crate::wallet::TestIssuer::new(T0);
    let app = crate::eu_av::eu_av_app(&issuer).await;
    let (site, invite, req) = crate::eu_av::invite_with_request(&app, SiteOptions::default()).await;
    // About 1.5 MiB of form: read, then refused for what it holds, not for its size.
    let vp_token = json!({"proof_of_age": ["A".repeat(1536 * 1024 - 64)]}).to_string();
    let resp = link_answer(&app, &req, &vp_token).await;
    assert_eq!(
        message(resp, 400, 40010).await,
        "presentation refused: device response is too large"
    );
    let url = invite["url"].as_str().unwrap();
    let page = crate::dc_api::dc_page(&app, url).await;
    let body = json!({
        "state": page.state,
        "protocol": "org-iso-mdoc",
        "data": {"response": "A".repeat(1536 * 1024 - 64)},
    });
    assert!(body.to_string().len() > 1536 * 1024 - 64);
    let resp = crate::dc_api::post_dc_api(&app, url, &body).await;
    assert_error(resp, 400, 40022).await;
    // Every other route keeps 64 KiB.
    let resp = app
        .client
        .post(app.url(&format!("/v1/website/{}/invite", site.site_id)))
        .basic_auth(&site.username, Some(&site.password))
        .header("content-type", "application/json")
        .body(format!("{{\"customId\": \"{}\"}}", "a".repeat(64 * 1024)))
        .send()
        .await
        .unwrap();
    assert_error(resp, 413, 41301).await;
    assert_eq!(
        app.status_record(&site, invite["inviteId"].as_str().unwrap())
            .await["status"],
        "pending"
    );
}
