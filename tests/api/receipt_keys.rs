//! Receipt keys (docs/evidence.md#receipt-keys): the first start creates the receipt key
//! in the database, every node on that database signs with the same one, and a rotated
//! key is in every node's served key set before any node signs with it, so a receipt
//! handed out always verifies against the key set fetched after it.

use crate::helpers::{run_cli, spawn_app, spawn_beside, spawn_on_url, temp_db, TestApp};
use crate::receipts::{cli, decode, jwks, receipt_of};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::Value;
use std::time::{Duration, Instant};

#[tokio::test]
async fn every_node_on_one_database_signs_with_the_key_the_first_start_made() {
    let first = spawn_app().await;
    let second = spawn_beside(&first, |_| {}).await;
    let site = first.create_site().await;
    let a = first.new_invite_id(&site, None).await;
    let b = first.new_invite_id(&site, None).await;
    assert_eq!(first.verify(&a).await.status(), 200);
    assert_eq!(second.verify(&b).await.status(), 200);
    let (a, b) = (
        decode(&receipt_of(&first, &site, &a).await).0,
        decode(&receipt_of(&second, &site, &b).await).0,
    );
    assert_eq!(a["kid"], b["kid"], "one key for every node");
    for app in [&first, &second] {
        let keys = jwks(app).await;
        let keys = keys["keys"].as_array().unwrap();
        assert_eq!(keys.len(), 1, "the second start made no key of its own");
        assert_eq!(keys[0]["kid"], a["kid"]);
    }
}

/// Whether the ES256 signature of `receipt` holds under the key of its `kid` in `jwks`
/// (checked here with `p256` alone, not with agegate's own code).
fn verifies(receipt: &str, jwks: &Value) -> bool {
    let kid = &decode(receipt).0["kid"];
    let Some(jwk) = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| &k["kid"] == kid)
    else {
        return false;
    };
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let point = p256::EncodedPoint::from_affine_coordinates(
        coordinate("x").as_slice().into(),
        coordinate("y").as_slice().into(),
        false,
    );
    let key = VerifyingKey::from_encoded_point(&point).unwrap();
    let (signed, signature) = receipt.rsplit_once('.').unwrap();
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
    key.verify(signed.as_bytes(), &signature).is_ok()
}

/// Rotates the receipt key; its kid.
async fn rotate(app: &TestApp) -> String {
    let (code, stdout, stderr) = cli(app, &["receipt-key", "rotate", "--json"]).await;
    assert_eq!(code, 0, "{stderr}");
    let rotated: Value = serde_json::from_str(stdout.trim()).unwrap();
    rotated["kid"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_receipt_handed_out_always_verifies_against_the_key_set_fetched_after_it() {
    let first = spawn_app().await;
    let second = spawn_beside(&first, |_| {}).await;
    let nodes = [&first, &second];
    let site = first.create_site().await;
    for rotation in 0..2 {
        // Every node has just served (and so keeps for a while) the key set of now.
        for node in nodes {
            jwks(node).await;
        }
        let asked = Instant::now();
        let kid = rotate(&first).await;
        // Fresh receipts from alternate nodes, each checked against the key set of every
        // node fetched after it, until one is signed with the new key.
        for turn in 0.. {
            let node = nodes[turn % 2];
            let id = node.new_invite_id(&site, None).await;
            let verifying = Instant::now();
            assert_eq!(node.verify(&id).await.status(), 200);
            let receipt = receipt_of(node, &site, &id).await;
            for (n, other) in nodes.iter().enumerate() {
                let keys = jwks(other).await;
                assert!(
                    verifies(&receipt, &keys),
                    "rotation {rotation}: a receipt of node {} signed with {} does not verify \
                     against node {n}'s key set fetched after it: {keys}",
                    turn % 2,
                    decode(&receipt).0["kid"],
                );
            }
            if decode(&receipt).0["kid"] == kid.as_str() {
                break;
            }
            assert!(
                verifying.duration_since(asked) < Duration::from_secs(10),
                "rotation {rotation}: still signing with the old key 10 s after the rotation"
            );
        }
    }
}

#[tokio::test]
async fn a_key_rotated_in_before_any_start_is_the_first_and_signs_at_once() {
    let (_dir, db) = temp_db();
    let (code, stdout, stderr) = run_cli(&db, &["receipt-key", "rotate", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let kid = serde_json::from_str::<Value>(stdout.trim()).unwrap()["kid"].clone();
    let app = spawn_on_url(db.url.clone()).await;
    let site = app.create_site().await;
    let id = app.new_invite_id(&site, None).await;
    assert_eq!(app.verify(&id).await.status(), 200);
    let receipt = receipt_of(&app, &site, &id).await;
    assert_eq!(
        decode(&receipt).0["kid"],
        kid,
        "no server had listed a key yet"
    );
    assert!(verifies(&receipt, &jwks(&app).await));
}
