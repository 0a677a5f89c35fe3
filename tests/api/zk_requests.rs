//! The site's zero-knowledge policy and what a request offers
//! (docs/zk.md#zero-knowledge-proofs): the policy is stored per site, and a request
//! made on a server with circuits keeps its offer, on both backends.

use agegate::domain::{InviteId, MinAge, PresentationRequest, SiteId, ZkOffer, ZkPolicy};
use agegate::store::SiteUpdate;

use crate::eu_av::eu_av_app;
use crate::helpers::{SiteOptions, TestApp, T0};
use crate::wallet::TestIssuer;
use crate::zk::{ZkServer, V7_1ATTR_HASH};

/// A server without circuits.
async fn plain_app() -> TestApp {
    eu_av_app(&TestIssuer::new(T0)).await
}

/// A site with `policy`, one of its invites, and the live request its page opened.
pub async fn request_for(app: &TestApp, policy: ZkPolicy) -> (InviteId, PresentationRequest) {
    let site = app
        .create_site_with(SiteOptions {
            zk: policy,
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, None).await;
    let id = InviteId::parse(invite["inviteId"].as_str().unwrap()).unwrap();
    let resp = app
        .client
        .get(invite["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let live = app.store.live_request(&id, T0).await.unwrap().unwrap();
    (id, live)
}

#[tokio::test]
async fn a_sites_zk_policy_defaults_to_prefer_and_is_stored_and_updated() {
    let app = plain_app().await;
    let plain = app.create_site().await;
    let id = SiteId::parse(&plain.site_id).unwrap();
    let stored = app.store.site(id).await.unwrap().unwrap();
    assert_eq!(stored.zk, ZkPolicy::Prefer);
    let update = SiteUpdate {
        zk: Some(ZkPolicy::Require),
        ..Default::default()
    };
    assert!(app.store.update_site(id, update).await.unwrap());
    let stored = app.store.site(id).await.unwrap().unwrap();
    assert_eq!(stored.zk, ZkPolicy::Require);
    assert_eq!(stored.min_age, MinAge::DEFAULT, "nothing else changed");
    let off = app
        .create_site_with(SiteOptions {
            zk: ZkPolicy::Off,
            ..Default::default()
        })
        .await;
    let off = SiteId::parse(&off.site_id).unwrap();
    assert_eq!(
        app.store.site(off).await.unwrap().unwrap().zk,
        ZkPolicy::Off
    );
}

#[tokio::test]
async fn a_requests_zk_offer_is_stored_with_it_and_read_back_by_state() {
    let app = plain_app().await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let id = InviteId::parse(invite["inviteId"].as_str().unwrap()).unwrap();
    let offer = ZkOffer {
        circuits: vec![V7_1ATTR_HASH.to_owned(), "ab".repeat(32)],
        required: true,
    };
    let made = PresentationRequest::new(MinAge::DEFAULT, T0).with_zk(Some(offer.clone()));
    app.store.open_request(&id, made.clone()).await.unwrap();
    let live = app.store.live_request(&id, T0).await.unwrap().unwrap();
    assert_eq!(live.zk, Some(offer.clone()));
    let by_state = app.store.request(&id, &made.state).await.unwrap().unwrap();
    assert_eq!(by_state, made);
}

#[tokio::test]
async fn a_request_made_with_circuits_loaded_offers_the_one_attribute_circuits() {
    let app = ZkServer::start(1).await.app;
    let (_, prefer) = request_for(&app, ZkPolicy::Prefer).await;
    let expected = ZkOffer {
        circuits: vec![V7_1ATTR_HASH.to_owned()],
        required: false,
    };
    assert_eq!(prefer.zk, Some(expected.clone()));
    let (_, require) = request_for(&app, ZkPolicy::Require).await;
    assert_eq!(
        require.zk,
        Some(ZkOffer {
            required: true,
            ..expected
        })
    );
    let (_, off) = request_for(&app, ZkPolicy::Off).await;
    assert_eq!(off.zk, None);
}

#[tokio::test]
async fn a_request_made_without_circuits_offers_no_proof_whatever_the_policy() {
    let app = plain_app().await;
    for policy in [ZkPolicy::Prefer, ZkPolicy::Require] {
        let (_, request) = request_for(&app, policy).await;
        assert_eq!(request.zk, None, "{policy}");
    }
}
