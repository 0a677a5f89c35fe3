//! The receipt keys (docs/evidence.md#keys): the first start creates the receipt key in the database, and
//! every node on that database signs with the same one.

use crate::helpers::{spawn_app, spawn_beside};
use crate::receipts::{decode, jwks, receipt_of};

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
