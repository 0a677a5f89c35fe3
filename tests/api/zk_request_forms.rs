//! docs/zk.md#zero-knowledge-proofs: the gateway page of a site that prefers or
//! requires a proof, on a server with circuits, asks for it over the Digital Credentials
//! API — R1's DCQL query gains one `mso_mdoc_zk` credential per docType, R2's
//! itemsRequests a `requestInfo.zkRequest` — while the by-value link never offers one
//! (and a site that requires a proof shows none); without circuits or with the policy
//! off the requests are exactly as before.

use agegate::domain::{presentation, Kind, KindSet, MinAge, ZkPolicy};
use ciborium::Value as Cbor;
use serde_json::{json, Value as Json};

use crate::dc_api::dc_page;
use crate::eu_av::{eu_av_app, request_on_page};
use crate::helpers::{SiteOptions, TestApp, T0};
use crate::wallet::{AuthorizationRequest, DcApiPage, TestIssuer};
use crate::zk::{ZkServer, V7_1ATTR_HASH};

/// The page of a fresh invite of a site with `policy`: its link's request and DC API requests.
async fn page_of(app: &TestApp, policy: ZkPolicy) -> (AuthorizationRequest, DcApiPage) {
    let site = app
        .create_site_with(SiteOptions {
            zk: policy,
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let link = request_on_page(app, url).await;
    let dc = dc_page(app, url).await;
    assert_eq!(dc.state, link.state, "one live request");
    (link, dc)
}

/// ZkServer's kinds as a set.
fn zk_server_kinds() -> KindSet {
    [Kind::EU_AV, Kind::EUDI_PID, Kind::MDL]
        .into_iter()
        .collect()
}

/// The one circuit the test servers load, as a DCQL `zk_system_type` entry.
fn v7_system() -> Json {
    json!({
        "system": "longfellow-libzk-v1",
        "id": V7_1ATTR_HASH,
        "circuit_hash": V7_1ATTR_HASH,
        "num_attributes": 1,
        "version": 7,
        "block_enc_hash": 4151,
        "block_enc_sig": 4096,
    })
}

/// ZkServer's kinds, in the table's order: (plain id, ZK id, docType, namespace).
const KINDS: [(&str, &str, &str, &str); 3] = [
    (
        "proof_of_age",
        "proof_of_age_zk",
        "eu.europa.ec.av.1",
        "eu.europa.ec.av.1",
    ),
    (
        "pid",
        "pid_zk",
        "eu.europa.ec.eudi.pid.1",
        "eu.europa.ec.eudi.pid.1",
    ),
    (
        "mdl",
        "mdl_zk",
        "org.iso.18013.5.1.mDL",
        "org.iso.18013.5.1",
    ),
];

fn expected_dcql(required: bool) -> Json {
    let plain = KINDS.iter().map(|(id, _, doc_type, ns)| {
        json!({"id": id, "format": "mso_mdoc", "meta": {"doctype_value": doc_type},
               "claims": [{"path": [ns, "age_over_18"]}]})
    });
    let zk = KINDS.iter().map(|(_, id, doc_type, ns)| {
        json!({"id": id, "format": "mso_mdoc_zk",
               "meta": {"doctype_value": doc_type, "zk_system_type": [v7_system()]},
               "claims": [{"path": [ns, "age_over_18"]}]})
    });
    let mut options: Vec<Json> = KINDS.iter().map(|k| json!([k.1])).collect();
    if !required {
        options.extend(KINDS.iter().map(|k| json!([k.0])));
    }
    json!({
        "credentials": plain.chain(zk).collect::<Vec<_>>(),
        "credential_sets": [{"options": options}],
    })
}

/// Each docRequest's itemsRequest, decoded from inside its tag 24.
fn items_requests(dc: &DcApiPage) -> Vec<Cbor> {
    let request = dc.r2().device_request;
    let doc_requests = get(&request, "docRequests")
        .as_array()
        .expect("docRequests")
        .clone();
    doc_requests
        .iter()
        .map(|d| match get(d, "itemsRequest") {
            Cbor::Tag(24, inner) => decode(inner.as_bytes().expect("tag 24 holds bytes")),
            other => panic!("itemsRequest is not tag 24: {other:?}"),
        })
        .collect()
}

/// `{"zkRequest": {"systemSpecs": [the v7 circuit], "zkRequired": required}}`.
fn expected_request_info(required: bool) -> Cbor {
    let text = |s: &str| Cbor::Text(s.into());
    let uint = |n: u64| Cbor::Integer(n.into());
    let spec = Cbor::Map(vec![
        (text("zkSystemId"), text(V7_1ATTR_HASH)),
        (text("system"), text("longfellow-libzk-v1")),
        (
            text("params"),
            Cbor::Map(vec![
                (text("version"), uint(7)),
                (text("circuit_hash"), text(V7_1ATTR_HASH)),
                (text("num_attributes"), uint(1)),
                (text("block_enc_hash"), uint(4151)),
                (text("block_enc_sig"), uint(4096)),
            ]),
        ),
    ]);
    Cbor::Map(vec![(
        text("zkRequest"),
        Cbor::Map(vec![
            (text("systemSpecs"), Cbor::Array(vec![spec])),
            (text("zkRequired"), Cbor::Bool(required)),
        ]),
    )])
}

fn decode(bytes: &[u8]) -> Cbor {
    ciborium::from_reader(bytes).expect("CBOR")
}

/// `v[key]` of a CBOR map with text keys.
fn get<'a>(v: &'a Cbor, key: &str) -> &'a Cbor {
    v.as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some(key)))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key} in {v:?}"))
}

fn keys(map: &Cbor) -> Vec<String> {
    map.as_map()
        .expect("a map")
        .iter()
        .map(|(k, _)| k.as_text().expect("text keys").to_owned())
        .collect()
}

#[tokio::test]
async fn a_preferring_sites_page_asks_for_a_proof_first_in_r1_and_r2_and_not_by_value() {
    let server = ZkServer::start(1).await;
    let (link, dc) = page_of(&server.app, ZkPolicy::Prefer).await;
    let plain = presentation::dcql_query(zk_server_kinds(), MinAge::DEFAULT, None);
    assert_eq!(
        link.params["dcql_query"], plain,
        "the by-value link offers no proof"
    );
    assert_eq!(dc.r1().params["dcql_query"], expected_dcql(false));
    let items = items_requests(&dc);
    assert_eq!(items.len(), KINDS.len(), "one docRequest per docType");
    for (item, (_, _, doc_type, _)) in items.iter().zip(KINDS) {
        assert_eq!(keys(item), ["docType", "nameSpaces", "requestInfo"]);
        assert_eq!(get(item, "docType").as_text(), Some(doc_type));
        assert_eq!(get(item, "requestInfo"), &expected_request_info(false));
    }
}

#[tokio::test]
async fn a_requiring_sites_page_lists_only_proofs_says_zk_required_and_shows_no_link_by_value() {
    let server = ZkServer::start(1).await;
    let app = &server.app;
    let site = app
        .create_site_with(SiteOptions {
            zk: ZkPolicy::Require,
            ..Default::default()
        })
        .await;
    let invite = app.new_invite(&site, None).await;
    let url = invite["url"].as_str().unwrap();
    let html = crate::helpers::gateway_page(&app.client, url).await;
    assert!(!html.contains("id=\"eu-av-link\""), "no by-value link");
    assert!(!html.contains("id=\"eu-av-qr\""), "nor its QR code");
    let dc = dc_page(app, url).await;
    assert_eq!(dc.r1().params["dcql_query"], expected_dcql(true));
    for item in items_requests(&dc) {
        assert_eq!(get(&item, "requestInfo"), &expected_request_info(true));
    }
}

/// The requests as before ZK: the link's DCQL text exactly, and no requestInfo.
fn assert_plain(link: &AuthorizationRequest, dc: &DcApiPage, kinds: KindSet) {
    let before = presentation::dcql_query(kinds, MinAge::DEFAULT, None);
    assert_eq!(link.params["dcql_query"], before);
    let before: Json = serde_json::from_str(&before).unwrap();
    assert_eq!(dc.r1().params["dcql_query"], before);
    for item in items_requests(dc) {
        assert_eq!(keys(&item), ["docType", "nameSpaces"]);
    }
}

#[tokio::test]
async fn with_the_policy_off_the_requests_are_as_without_circuits() {
    let server = ZkServer::start(1).await;
    let (link, dc) = page_of(&server.app, ZkPolicy::Off).await;
    let kinds: KindSet = [Kind::EU_AV, Kind::EUDI_PID, Kind::MDL]
        .into_iter()
        .collect();
    assert_plain(&link, &dc, kinds);
}

#[tokio::test]
async fn without_circuits_a_preferring_or_requiring_site_asks_as_before() {
    let app = eu_av_app(&TestIssuer::new(T0)).await;
    for policy in [ZkPolicy::Prefer, ZkPolicy::Require] {
        let (link, dc) = page_of(&app, policy).await;
        assert_plain(&link, &dc, KindSet::one(Kind::EU_AV));
    }
}

/// The by-value link of a site preferring proofs, on a server with circuits and every
/// kind on, asks for every kind plainly and its QR code holds it whole (no reduced
/// request): the link offers no proof (docs/zk.md#zero-knowledge-proofs).
#[tokio::test]
async fn the_by_value_link_of_a_zk_prefer_site_fits_its_qr_code_whole() {
    use crate::wallet_link::{qr_modules_of, qr_modules_on_page, qr_text_on_page};
    let server = ZkServer::start(1).await;
    let app = &server.app;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let html = crate::helpers::gateway_page(&app.client, invite["url"].as_str().unwrap()).await;
    let link = AuthorizationRequest::from_gateway_html(&html);
    assert!(!link.params["dcql_query"].contains("mso_mdoc_zk"));
    assert_eq!(qr_text_on_page(&html), link.uri, "the whole link");
    assert_eq!(qr_modules_on_page(&html), qr_modules_of(&link.uri));
    assert!(DcApiPage::from_gateway_html(&html).requests().len() == 2);
}
