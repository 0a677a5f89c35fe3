//! docs/zk.md#zero-knowledge-proofs: the acceptance rules a proof itself must meet,
//! each broken on its own by a proof pylongfellow minted for the invite's own request (or
//! that proof re-wrapped) — another transcript, a false claim, another docType, another
//! issuer key, another kind's anchor, a version-5 or unoffered circuit, the server's clock
//! 6 minutes off — each a 400 naming its reason, the invite pending and its request live:
//! the valid answer, sent last (as Multipaz encodes it), verifies it. The refusals of the
//! cheap checks alone are in zk_answers.rs.

use crate::helpers::SiteOptions;
use crate::wallet::{AV_DOCTYPE, AV_NAMESPACE, MDL_DOCTYPE, PID_DOCTYPE, PID_NAMESPACE};
use crate::zk::{mdl_claim, Backend, Claim, Job, Minter, Transport, ZkCase, ZkServer};
use serde_json::Value;

const V7_2ATTR_HASH: &str = "6a5810683e62b6d7766ebd0d7ca72518a2b8325418142adcadb10d51dbbcd5ad";
/// Google's version-5 one-attribute circuit (2025-08-21), before the soundness fix.
const V5_1ATTR_HASH: &str = "f88a39e561ec0be02bb3dfe38fb609ad154e98decbbe632887d850fc612fea6f";
const NOT_VERIFIED: &str = "presentation refused: the zero-knowledge proof does not verify";

fn knob(id: &str, set: impl FnOnce(&mut Job)) -> Job {
    let mut job = Job::reuse(id, "valid");
    set(&mut job);
    job
}

#[tokio::test]
async fn each_broken_zk_rule_is_refused_for_its_own_reason_and_leaves_the_request_live() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let server = ZkServer::start(2).await;
    let app = &server.app;
    let c = ZkCase::new(app, SiteOptions::default()).await;
    let transcript = c.transcript(Transport::Link, &app.base);
    let mut other_transcript = transcript.clone();
    *other_transcript.last_mut().unwrap() ^= 1;
    let claim = mdl_claim(&c.claim());
    let cpp = Backend::GoogleCpp;
    let eu_av = Claim {
        doc_type: AV_DOCTYPE.into(),
        namespace: AV_NAMESPACE.into(),
        ..claim.clone()
    };
    let s = |t: &str| Some(t.to_owned());
    let jobs = vec![
        Job::prove("valid", &transcript, &claim, cpp),
        Job::prove("another transcript", &other_transcript, &claim, cpp),
        Job::prove(
            "the claim false",
            &transcript,
            &Claim {
                value: false,
                ..claim.clone()
            },
            cpp,
        ),
        Job::prove(
            "an eu-av proof under the mDL anchor",
            &transcript,
            &eu_av,
            cpp,
        ),
        knob("the false claim shown as true", |j| {
            j.reuse = s("the claim false");
            j.value_shown = Some(true);
        }),
        knob("another requested docType (PID, same anchor)", |j| {
            j.doc_type_shown = s(PID_DOCTYPE);
            j.namespace_shown = s(PID_NAMESPACE);
        }),
        knob("a circuit not offered (v7, 2 attributes)", |j| {
            j.zk_system_id = s(V7_2ATTR_HASH)
        }),
        knob("a version-5 circuit", |j| j.zk_system_id = s(V5_1ATTR_HASH)),
        knob("a version-5 circuit, Multipaz's form", |j| {
            j.zk_system_id = Some(format!("longfellow-libzk-v1_5_1_4096_2945_{V5_1ATTR_HASH}"))
        }),
        knob("a leaf for another key than the proof's issuer", |j| {
            j.chain = Some("other-leaf")
        }),
        // The last: Multipaz's zkSystemId and the chain as an array, which must verify.
        knob("valid, as Multipaz sends it", |j| {
            j.zk_system_id = s("multipaz");
            j.chain = Some("leaf+iaca");
        }),
    ];
    let ids: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
    let answers: Vec<(String, Vec<u8>)> = ids.into_iter().zip(minter.mint(jobs).await).collect();
    let answer = |id: &str| &answers.iter().find(|(i, _)| i == id).unwrap().1;
    let not_offered = "is not one this request offered";
    // (case, the docType whose ZK credential id the vp_token answers, the reason named)
    let expected = [
        ("another transcript", MDL_DOCTYPE, NOT_VERIFIED.to_owned()),
        (
            "the claim false",
            MDL_DOCTYPE,
            format!("does not list {} as true", c.claim()),
        ),
        (
            "the false claim shown as true",
            MDL_DOCTYPE,
            NOT_VERIFIED.into(),
        ),
        (
            "an eu-av proof under the mDL anchor",
            AV_DOCTYPE,
            "issuer is not trusted".into(),
        ),
        (
            "another requested docType (PID, same anchor)",
            PID_DOCTYPE,
            NOT_VERIFIED.into(),
        ),
        (
            "a circuit not offered (v7, 2 attributes)",
            MDL_DOCTYPE,
            not_offered.into(),
        ),
        ("a version-5 circuit", MDL_DOCTYPE, not_offered.into()),
        (
            "a version-5 circuit, Multipaz's form",
            MDL_DOCTYPE,
            not_offered.into(),
        ),
        (
            "a leaf for another key than the proof's issuer",
            MDL_DOCTYPE,
            NOT_VERIFIED.into(),
        ),
    ];
    let mut failures = Vec::new();
    let mut refused = |name: &str, got: (u16, Value), message: &str| {
        let (status, body) = got;
        let said = body["message"].as_str().unwrap_or_default().to_lowercase();
        if status != 400 || body["error"] != 40010 || !said.contains(&message.to_lowercase()) {
            failures.push(format!(
                "{name}: want 400 40010 naming {message:?}, got {status} {body}"
            ));
        }
    };
    let post =
        |id: &str, doc_type: &'static str| c.answer(app, Transport::Link, doc_type, answer(id));
    for (name, doc_type, message) in &expected {
        let resp = post(name, doc_type).await;
        refused(
            name,
            (resp.status().as_u16(), resp.json().await.unwrap()),
            message,
        );
    }
    // The valid proof 6 minutes after, and 6 minutes before, its timestamp.
    for (name, shift) in [("6 minutes late", 360), ("6 minutes early", -360)] {
        app.clock.advance(shift);
        let resp = post("valid", MDL_DOCTYPE).await;
        refused(
            name,
            (resp.status().as_u16(), resp.json().await.unwrap()),
            "timestamp",
        );
        app.clock.advance(-shift);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(c.status(app).await, "pending");

    // 4 minutes after its timestamp, the valid answer still verifies the invite.
    app.clock.advance(240);
    let resp = post("valid, as Multipaz sends it", MDL_DOCTYPE).await;
    let status = resp.status();
    assert_eq!(status, 200, "{}", resp.text().await.unwrap());
    assert_eq!(c.status(app).await, "verified");
}
