//! With circuits loaded, the request object offers zero-knowledge proofs only to a
//! wallet whose metadata names `mso_mdoc_zk`; the by-value link never does, so its QR
//! code holds the whole request.

use super::*;
use crate::wallet::AuthorizationRequest;
use crate::zk::ZkServer;

async fn zk_case(policy: agegate::domain::ZkPolicy) -> RefCase {
    let identity = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let signer = identity.signer();
    let server = ZkServer::start_with(1, |s| s.dc_api_signer = Some(signer)).await;
    let options = SiteOptions {
        zk: policy,
        ..Default::default()
    };
    RefCase::on(server.plain, identity, server.app, options).await
}

#[tokio::test]
async fn zk_proofs_are_offered_only_to_a_wallet_whose_metadata_names_mso_mdoc_zk() {
    let c = zk_case(agegate::domain::ZkPolicy::Prefer).await;
    let with = resolve(&c.link(), &wallet_metadata(true, &["A128GCM"]))
        .await
        .unwrap();
    assert!(
        with.formats().iter().any(|f| f == "mso_mdoc_zk"),
        "{:?}",
        with.formats()
    );
    assert!(
        with.formats().iter().any(|f| f == "mso_mdoc"),
        "prefer keeps plain queries"
    );
    let without = resolve(&c.link(), &wallet_metadata(false, &["A128GCM"]))
        .await
        .unwrap();
    assert!(!without.formats().is_empty());
    assert!(
        without.formats().iter().all(|f| f == "mso_mdoc"),
        "{:?}",
        without.formats()
    );
    assert!(!without.payload()["dcql_query"]
        .to_string()
        .contains("mso_mdoc_zk"));
    // The same live request either way.
    assert_eq!(with.text("state"), without.text("state"));
}

#[tokio::test]
async fn the_by_value_link_of_a_zk_prefer_site_carries_no_zk_offer_and_fits_its_qr_code() {
    let c = zk_case(agegate::domain::ZkPolicy::Prefer).await;
    let by_value = AuthorizationRequest::from_gateway_html(&c.html);
    let dcql = by_value.dcql_query.to_string();
    assert!(!dcql.contains("mso_mdoc_zk"), "{dcql}");
    assert!(
        c.html.contains("id=\"eu-av-qr\""),
        "a QR code of the by-value link"
    );
    assert!(
        c.html.contains("id=\"signed-qr\""),
        "and one of the by-reference link"
    );
}

#[tokio::test]
async fn a_zk_require_site_shows_no_by_value_link() {
    let c = zk_case(agegate::domain::ZkPolicy::Require).await;
    assert!(!c.html.contains("id=\"eu-av-link\""));
    assert!(c.html.contains("id=\"signed-link\""));
    let with = resolve(&c.link(), &wallet_metadata(true, &["A256GCM"]))
        .await
        .unwrap();
    assert!(with.formats().iter().any(|f| f == "mso_mdoc_zk"));
}
