//! R2's DeviceRequest as the gateway page sends it, read by cbor2 (Python), a CBOR decoder
//! independent of the server's and the test wallet's: version "1.1", one docRequest per
//! docType asking for the one age claim with intentToRetain false, and
//! `deviceRequestInfo` with one mandatory use case whose document sets are the
//! docRequests, each alone (docs/dc-api.md#annex-c-on-ios).

use crate::dc_api::dc_page;
use crate::helpers::{spawn_app_with, TestApp, T0};
use crate::wallet::{TestIssuer, AV_DOCTYPE, AV_NAMESPACE, MDL_DOCTYPE, MDL_NAMESPACE};
use agegate::domain::Kind;
use agegate::mdoc::TrustAnchors;
use agegate::trust::{AnchorSource, Trust, TrustHandle};
use serde_json::{json, Value};
use std::sync::Arc;

/// Decodes argv[1] (base64url CBOR) with cbor2 and prints it as JSON: a byte string as
/// `{"bstr": hex}`, tag 24 (encoded CBOR) as `{"tag24": <its content decoded>}`, any other
/// tag as `{"tag": n, "value": …}`, a map with a key that is not text as `{"map": [[k,
/// v], …]}`. Refuses trailing bytes.
const SCRIPT: &str = r#"
import base64, io, json, sys, cbor2

def loads(data):
    fp = io.BytesIO(data)
    item = cbor2.CBORDecoder(fp).decode()
    if fp.tell() != len(data):
        raise SystemExit("trailing bytes")
    return item

def show(v):
    if isinstance(v, bytes):
        return {"bstr": v.hex()}
    if isinstance(v, cbor2.CBORTag):
        if v.tag == 24:
            if not isinstance(v.value, bytes):
                raise SystemExit("tag 24 over a non-bstr")
            return {"tag24": show(loads(v.value))}
        return {"tag": v.tag, "value": show(v.value)}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: show(x) for k, x in v.items()}
        return {"map": [[show(k), show(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return [show(x) for x in v]
    return v

data = base64.urlsafe_b64decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 4))
print(json.dumps(show(loads(data))))
"#;

/// cbor2's reading of the base64url CBOR `b64`.
fn cbor2_json(b64: &str) -> Value {
    let python = crate::schemathesis::venv().join("bin/python");
    let out = std::process::Command::new(&python)
        .args(["-c", SCRIPT, b64])
        .output()
        .expect("the test venv's python (bash scripts/setup.sh)");
    assert!(
        out.status.success(),
        "cbor2: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A server with `eu-av` and `mdl` on, each under `issuer`'s CA.
async fn two_kinds(issuer: &TestIssuer) -> TestApp {
    let anchors = Arc::new(TrustAnchors::from_pem(&issuer.ca_pem).unwrap());
    let sources = [Kind::EU_AV, Kind::MDL]
        .into_iter()
        .map(|kind| AnchorSource {
            kind,
            origin: "(test)".into(),
            anchors: anchors.clone(),
        })
        .collect();
    let trust = TrustHandle::fixed(Trust::from_sources(sources));
    spawn_app_with(move |s| s.trust = trust).await
}

fn doc_request(doc_type: &str, namespace: &str) -> Value {
    json!({"itemsRequest": {"tag24": {
        "docType": doc_type,
        "nameSpaces": {namespace: {"age_over_18": false}},
    }}})
}

#[tokio::test]
async fn r2_is_device_request_1_1_with_one_mandatory_use_case_of_each_doc_request_alone() {
    let issuer = TestIssuer::new(T0);
    let app = two_kinds(&issuer).await;
    let site = app.create_site().await;
    let invite = app.new_invite(&site, None).await;
    let page = dc_page(&app, invite["url"].as_str().unwrap()).await;
    let r2 = &page.requests()[1];
    assert_eq!(r2["protocol"], "org-iso-mdoc");
    let device_request = cbor2_json(r2["data"]["deviceRequest"].as_str().unwrap());
    assert_eq!(
        device_request,
        json!({
            "version": "1.1",
            "docRequests": [
                doc_request(AV_DOCTYPE, AV_NAMESPACE),
                doc_request(MDL_DOCTYPE, MDL_NAMESPACE),
            ],
            "deviceRequestInfo": {"tag24": {"useCases": [{
                "mandatory": true,
                "documentSets": [[0], [1]],
            }]}},
        }),
        "nothing more, nothing less"
    );
    // The document sets are R1's credential_sets options, in the same order.
    let dcql = &page.requests()[0]["data"]["dcql_query"];
    assert_eq!(
        dcql["credential_sets"],
        json!([{"options": [["proof_of_age"], ["mdl"]]}])
    );
    let doc_types: Vec<&Value> = dcql["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["meta"]["doctype_value"])
        .collect();
    assert_eq!(doc_types, [AV_DOCTYPE, MDL_DOCTYPE]);

    // One kind on: one docRequest, one document set.
    let one = crate::eu_av::eu_av_app(&issuer).await;
    let site = one.create_site().await;
    let invite = one.new_invite(&site, None).await;
    let page = dc_page(&one, invite["url"].as_str().unwrap()).await;
    let device_request = cbor2_json(
        page.requests()[1]["data"]["deviceRequest"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(device_request["version"], "1.1");
    assert_eq!(
        device_request["docRequests"],
        json!([doc_request(AV_DOCTYPE, AV_NAMESPACE)])
    );
    assert_eq!(
        device_request["deviceRequestInfo"],
        json!({"tag24": {"useCases": [{"mandatory": true, "documentSets": [[0]]}]}})
    );
}

#[test]
fn the_cbor2_reader_shows_tags_bytes_and_integer_keys() {
    // {"a": 24(<<{1: h'ff'}>>)} written by hand: a1 61 61 d8 18 44 a1 01 41 ff
    let bytes = [0xa1, 0x61, 0x61, 0xd8, 0x18, 0x44, 0xa1, 0x01, 0x41, 0xff];
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    assert_eq!(
        cbor2_json(&b64),
        json!({"a": {"tag24": {"map": [[1, {"bstr": "ff"}]]}}})
    );
}
