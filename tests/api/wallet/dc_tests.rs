//! Self-tests of the wallet's Digital Credentials API side: its transcripts against the
//! published vector and against `agegate::dcapi` (two implementations that agree), and
//! its answers against agegate's parsers.

use super::testkit::{hex, T};
use super::{
    cbor, dc_annex_c_transcript, dc_openid4vp_transcript, jwk_thumbprint, DcAnswer, DcApiPage,
    DcWallet as _, Presentation, TestIssuer,
};
use agegate::dcapi::{request, response, transcript, ItemRequest, RequestInputs, ResponseKey};
use serde_json::json;

/// OpenID4VP 1.0 Appendix B.2.6.2: the example JWK's thumbprint and the DC API
/// SessionTranscript for origin `https://example.com`.
#[test]
fn wallet_dc_api_transcript_matches_the_openid4vp_test_vector() {
    let jwk = json!({"kty": "EC", "crv": "P-256",
        "x": "DxiH5Q4Yx3UrukE2lWCErq8N8bqC9CHLLrAwLz5BmE0",
        "y": "XtLM4-3h5o3HUH0MHVJV0kyq0iBlrBwlh8qEDMZ4-Pc"});
    let thumbprint = jwk_thumbprint(&jwk);
    assert_eq!(
        thumbprint.to_vec(),
        hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047")
    );
    let transcript = dc_openid4vp_transcript(
        "https://example.com",
        "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA",
        &thumbprint,
    );
    assert_eq!(
        cbor(&transcript),
        hex(
            "83f6f682764f70656e4944345650444341504948616e646f7665725820fbece366f4
             212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a"
        )
    );
}

/// A page's request as agegate builds it, read by the wallet, answered, and opened again
/// by agegate's parsers to the wallet's DeviceResponse; the Annex C transcripts agree.
#[test]
fn wallet_dc_answers_open_with_agegates_parsers() {
    let origin = "https://age.example:8443";
    let key = ResponseKey::generate(&mut rand::rngs::OsRng);
    let items = [ItemRequest {
        doc_type: "eu.europa.ec.av.1",
        namespace: "eu.europa.ec.av.1",
        claim: "age_over_18",
    }];
    let dcql = agegate::domain::presentation::dcql_query_value(
        agegate::domain::KindSet::one(agegate::domain::Kind::EU_AV),
        agegate::domain::MinAge::DEFAULT,
        None,
    );
    let metadata = agegate::domain::presentation::client_metadata_value();
    let built = request::build(
        &RequestInputs {
            origin,
            nonce: "n0nce",
            dcql_query: &dcql,
            client_metadata: &metadata,
            items: &items,
            key: &key,
            encryption_nonce: &[7; 16],
            zk: None,
        },
        None,
    );
    let page = DcApiPage::from_json(json!({"state": "s", "digital": built.digital()}));
    let (r1, r2) = (page.r1(), page.r2());
    assert_eq!(jwk_thumbprint(&r1.jwk), key.thumbprint());
    assert_eq!(r2.encryption_info, built.encryption_info);
    let ours = cbor(&dc_annex_c_transcript(&r2.encryption_info, origin));
    assert_eq!(ours, transcript::annex_c(&built.encryption_info, origin));

    let issuer = TestIssuer::new(T);
    let p = Presentation::for_claim("age_over_18", T);
    let data = issuer.dc_openid4vp_data(&r1, origin, &p, &DcAnswer::default());
    let opened = response::openid4vp(&data, &key).expect("R1 answer opens");
    assert_eq!(opened.credential_id, "proof_of_age");
    let data = issuer.dc_annex_c_data(&r2, origin, &p, &DcAnswer::default());
    let device_response = response::annex_c(&data, &key, &ours).expect("R2 answer opens");
    assert_eq!(
        device_response.first(),
        Some(&0xa3),
        "a DeviceResponse map of 3"
    );
}
