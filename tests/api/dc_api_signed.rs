//! Signed Digital Credentials API requests (docs/dc-api.md#signed-and-unsigned-requests, `--dc-api-signing-key` and
//! `--dc-api-signing-cert`): R1 is a JWS request object by the leaf with `x5c`, an
//! `x509_hash` client_id and `expected_origins`; each docRequest of R2 carries
//! `readerAuth` over ReaderAuthenticationBytes. Both are verified here as a wallet would,
//! independently of `agegate::dcapi`. A key and chain that cannot sign stop the server.

use crate::dc_api::DcCase;
use crate::helpers::{
    now, serve_outcome, spawn_signing_app, temp_db, Identity, ServerProcess, SiteOptions, T0,
};
use crate::wallet::{
    cbor, cbor_get, cbor_int_key, dc_annex_c_transcript, sha256, sig_structure, untag24, DcAnswer,
    TestIssuer,
};
use agegate::testkit::DAY;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{json, Value as Json};
use std::path::Path;

mod pycose;

/// A signed-mode server at T0 trusting a fresh issuer, and an invite's page on it.
async fn signed_case(identity: &Identity) -> DcCase {
    let issuer = TestIssuer::new(T0);
    let app = spawn_signing_app(&issuer, identity, |_| {}).await;
    DcCase::on(issuer, app, SiteOptions::default()).await
}

fn leaf_key(der: &[u8]) -> VerifyingKey {
    use x509_cert::der::Decode as _;
    let cert = x509_cert::Certificate::from_der(der).unwrap();
    let spki = &cert.tbs_certificate.subject_public_key_info;
    VerifyingKey::from_sec1_bytes(spki.subject_public_key.raw_bytes()).unwrap()
}

#[tokio::test]
async fn signed_r1_is_a_jws_by_the_leaf_with_x5c_an_x509_hash_client_id_and_expected_origins() {
    let id = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let c = signed_case(&id).await;
    let r1 = &c.page.requests()[0];
    assert_eq!(r1["protocol"], "openid4vp-v1-signed");
    assert_eq!(
        r1["data"].as_object().unwrap().len(),
        1,
        "only the request: {r1}"
    );
    let jws = r1["data"]["request"].as_str().unwrap();
    let parts: Vec<&str> = jws.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Json = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["typ"], "oauth-authz-req+jwt");
    let x5c = crate::helpers::x5c(&header);
    assert_eq!(
        x5c,
        std::slice::from_ref(&id.leaf_der),
        "the chain, leaf first, without its self-signed root (HAIP 1.0)"
    );
    assert!(!x5c.contains(&id.ca_der));
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
    let input = format!("{}.{}", parts[0], parts[1]);
    assert!(leaf_key(&x5c[0])
        .verify(input.as_bytes(), &signature)
        .is_ok());

    let payload = c.page.r1().params;
    let hash = URL_SAFE_NO_PAD.encode(sha256(&id.leaf_der));
    assert_eq!(payload["client_id"], format!("x509_hash:{hash}"));
    assert_eq!(payload["expected_origins"], json!([c.origin()]));
    assert_eq!(payload["response_mode"], "dc_api.jwt");
    assert_eq!(payload["response_type"], "vp_token");
    assert!(payload["client_metadata"]["jwks"]["keys"][0]["kid"].is_string());
    let link = crate::eu_av::request_on_page(&c.app, &c.url).await;
    assert_eq!(payload["nonce"], link.nonce.as_str());
    assert_eq!(payload["dcql_query"], link.dcql_query);
}

#[tokio::test]
async fn signed_r2_carries_reader_auth_by_the_leaf_over_reader_authentication_bytes() {
    let id = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let c = signed_case(&id).await;
    let r2 = c.page.r2();
    // Signing changes nothing else: version 1.1 with its use cases, as unsigned.
    assert_eq!(
        cbor_get(&r2.device_request, "version"),
        &Value::Text("1.1".into())
    );
    let info: Value =
        ciborium::from_reader(untag24(cbor_get(&r2.device_request, "deviceRequestInfo"))).unwrap();
    assert!(matches!(cbor_get(&info, "useCases"), Value::Array(u) if u.len() == 1));
    let doc_requests = cbor_get(&r2.device_request, "docRequests")
        .as_array()
        .unwrap();
    assert_eq!(doc_requests.len(), 1);
    let doc_request = &doc_requests[0];
    let items_request = cbor_get(doc_request, "itemsRequest");
    assert!(!untag24(items_request).is_empty());
    let reader_auth = cbor_get(doc_request, "readerAuth").as_array().unwrap();
    assert_eq!(reader_auth.len(), 4, "COSE_Sign1, untagged");
    let protected = reader_auth[0].as_bytes().unwrap();
    let alg: Value = ciborium::from_reader(&protected[..]).unwrap();
    assert_eq!(cbor_int_key(&alg, 1), &Value::Integer((-7).into()), "ES256");
    let chain = match cbor_int_key(&reader_auth[1], 33) {
        Value::Array(certs) => certs
            .iter()
            .map(|c| c.as_bytes().unwrap().clone())
            .collect(),
        Value::Bytes(one) => vec![one.clone()],
        other => panic!("x5chain {other:?}"),
    };
    assert_eq!(
        chain,
        std::slice::from_ref(&id.leaf_der),
        "no self-signed root in x5chain"
    );
    assert_eq!(reader_auth[2], Value::Null, "detached payload");

    // ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication",
    // SessionTranscript, ItemsRequestBytes]), the transcript Annex C's for this page.
    let transcript = dc_annex_c_transcript(&r2.encryption_info, &c.origin());
    let reader_authentication = Value::Array(vec![
        Value::Text("ReaderAuthentication".into()),
        transcript,
        items_request.clone(),
    ]);
    let payload = cbor(&Value::Tag(
        24,
        Box::new(Value::Bytes(cbor(&reader_authentication))),
    ));
    let signature = Signature::from_slice(reader_auth[3].as_bytes().unwrap()).unwrap();
    assert!(leaf_key(&chain[0])
        .verify(&sig_structure(protected, &payload), &signature)
        .is_ok());
}

#[tokio::test]
async fn signed_requests_are_answered_and_checked_as_unsigned_ones() {
    let id = Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
    let c = signed_case(&id).await;
    let other_origin = DcAnswer {
        origin: Some("https://evil.example".into()),
        ..Default::default()
    };
    let refused = crate::helpers::assert_error(
        c.post(&c.r1_body(&c.valid(), &other_origin)).await,
        400,
        40010,
    )
    .await;
    assert!(refused["message"]
        .as_str()
        .unwrap()
        .contains("device signature"));
    let body = c.r1_body(&c.valid(), &DcAnswer::default());
    assert_eq!(body["protocol"], "openid4vp-v1-signed");
    assert_eq!(c.post(&body).await.status(), 200);
    assert_eq!(c.status().await, "verified");

    let c = signed_case(&id).await;
    assert_eq!(
        c.post(&c.r2_body(&c.valid(), &DcAnswer::default()))
            .await
            .status(),
        200
    );
    assert_eq!(c.status().await, "verified");
}

/// `agegate serve` with these extra arguments and EU AV anchors, for a start it must
/// refuse: (started, stderr).
fn serve(extra: &[&std::ffi::OsStr]) -> (bool, String) {
    let issuer = TestIssuer::new(now());
    let anchors = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(anchors.path(), &issuer.ca_pem).unwrap();
    let extra: Vec<std::ffi::OsString> = extra.iter().map(|a| a.to_os_string()).collect();
    serve_outcome(&extra, &[("AGEGATE_EU_AV_TRUST_ANCHORS", anchors.path())])
}

#[test]
fn a_key_and_chain_that_cannot_sign_stop_the_server_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let t = now();
    let good = Identity::ca_issued(t - 30 * DAY, t + 365 * DAY);
    let (key, chain) = (good.key.clone(), good.cert.clone());
    // Each identity's files live as long as it does.
    let other_identity = Identity::ca_issued(t - DAY, t + DAY);
    let other = other_identity.key.clone();
    let expired = Identity::ca_issued(t - 30 * DAY, t - DAY);
    let (expired_key, expired_chain) = (expired.key.clone(), expired.cert.clone());
    let future = Identity::ca_issued(t + DAY, t + 30 * DAY);
    let (future_key, future_chain) = (future.key.clone(), future.cert.clone());
    let garbage = write("garbage.pem", "not a PEM file");
    let missing = dir.path().join("missing.pem");

    let flag_key = std::ffi::OsStr::new("--dc-api-signing-key");
    let flag_cert = std::ffi::OsStr::new("--dc-api-signing-cert");
    let cases: Vec<(&Path, &Path, &Path, &str)> = vec![
        (&other, &chain, &other, "does not match"),
        (
            &expired_key,
            &expired_chain,
            &expired_chain,
            "not valid now",
        ),
        (&future_key, &future_chain, &future_chain, "not valid now"),
        (&garbage, &chain, &garbage, "no PRIVATE KEY"),
        (&key, &garbage, &garbage, "no CERTIFICATE"),
        (&missing, &chain, &missing, "cannot read"),
        (&key, &missing, &missing, "cannot read"),
    ];
    for (key_path, cert_path, at_fault, says) in cases {
        let (ok, stderr) = serve(&[
            flag_key,
            key_path.as_os_str(),
            flag_cert,
            cert_path.as_os_str(),
        ]);
        assert!(
            !ok,
            "{} / {} must stop the server",
            key_path.display(),
            cert_path.display()
        );
        let lines: Vec<_> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(
            lines[0].contains(&at_fault.display().to_string()),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(says), "{} says {says}", lines[0]);
    }
    // One flag without the other.
    for (flag, path) in [(flag_key, &key), (flag_cert, &chain)] {
        let (ok, stderr) = serve(&[flag, path.as_os_str()]);
        assert!(!ok);
        let lines: Vec<_> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {stderr}");
        assert!(lines[0].contains("--dc-api-signing-"), "{}", lines[0]);
    }
}

#[tokio::test]
async fn with_a_valid_signing_identity_the_server_starts_and_says_requests_are_signed() {
    let dir = tempfile::tempdir().unwrap();
    let t = now();
    let identity = Identity::ca_issued(t - DAY, t + 90 * DAY);
    let (key, cert) = (&identity.key, &identity.cert);
    let (_db_dir, db) = temp_db();
    let issuer = TestIssuer::new(t);
    let anchors = dir.path().join("anchors.pem");
    std::fs::write(&anchors, &issuer.ca_pem).unwrap();
    let server = ServerProcess::start_with_env(
        &db,
        &[],
        &[
            ("AGEGATE_LISTEN", "127.0.0.1:0"),
            ("AGEGATE_EU_AV_TRUST_ANCHORS", anchors.to_str().unwrap()),
            ("AGEGATE_DC_API_SIGNING_KEY", key.to_str().unwrap()),
            ("AGEGATE_DC_API_SIGNING_CERT", cert.to_str().unwrap()),
        ],
    );
    server.logged("Digital Credentials API").await;
    let said = server
        .log_lines("Digital Credentials API")
        .into_iter()
        .next();
    let said = said.expect("a start-up line about the DC API");
    assert!(
        said.contains("signed requests, client_id x509_hash:"),
        "{said}"
    );
}
