//! The cost of one Digital Credentials API verification (docs/dc-api.md) beside the
//! link's (docs/wallets.md#the-wallet-link), single-threaded: for each transport, what the server computes for an
//! answer once it has the request from the database — the response key from its stored
//! bytes, the envelope opened (JWE ECDH-ES + A128GCM, or HPKE), the SessionTranscript,
//! and every check of the DeviceResponse. The database work (one read, one transaction)
//! is the same for all three. Not part of the suite's assertions: run it on purpose,
//! pinned to one core, with the release profile:
//!
//!   taskset -c 1 cargo test --release --test api dc_api_bench -- --ignored --nocapture

use crate::helpers::T0;
use crate::wallet::{
    AuthorizationRequest, DcAnswer, DcApiPage, DcWallet as _, Presentation, TestIssuer,
};
use agegate::dcapi::{request, response, transcript, ItemRequest, RequestInputs, ResponseKey};
use agegate::domain::presentation::{client_metadata_value, dcql_query_value, CLIENT_METADATA};
use agegate::domain::{EncryptionNonce, MinAge};
use agegate::mdoc::{self, Expected, TrustAnchors};
use serde_json::json;
use std::time::Instant;

const ORIGIN: &str = "https://age.example";
const NONCE: &str = "bm9uY2Utbm9uY2Utbm9uY2U";

/// Runs `verify` for about two seconds after a warm-up; prints and returns the rate.
fn rate(name: &str, mut verify: impl FnMut()) -> f64 {
    for _ in 0..50 {
        verify();
    }
    let started = Instant::now();
    let mut n = 0u32;
    while started.elapsed().as_secs_f64() < 2.0 {
        verify();
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let per_second = f64::from(n) / secs;
    println!(
        "{name}: {n} in {secs:.2} s = {per_second:.0}/s on one core ({:.0} µs each)",
        secs * 1e6 / f64::from(n)
    );
    per_second
}

#[test]
#[ignore = "a benchmark; run on purpose (see the module's comment)"]
fn dc_api_verifications_per_second_on_one_core() {
    let issuer = TestIssuer::new(T0);
    let anchors = agegate::mdoc::KindAnchors::single(
        agegate::domain::Kind::EU_AV,
        TrustAnchors::from_pem(&issuer.ca_pem).unwrap(),
    );
    let min_age = MinAge::DEFAULT;

    // The link (docs/wallets.md#the-wallet-link): vp_token in a form field, the redirect SessionTranscript.
    let response_uri = "https://age.example/gateway/AAAAAAAAAAAAAAAAAAAAAA/openid4vp";
    let uri = url::form_urlencoded::Serializer::new("av://authorize?".to_owned())
        .append_pair("response_type", "vp_token")
        .append_pair("response_mode", "direct_post")
        .append_pair("response_uri", response_uri)
        .append_pair("client_id", &format!("redirect_uri:{response_uri}"))
        .append_pair("nonce", NONCE)
        .append_pair("state", "c3RhdGUtc3RhdGUtc3RhdGU")
        .append_pair(
            "dcql_query",
            &agegate::domain::presentation::dcql_query(
                agegate::domain::KindSet::one(agegate::domain::Kind::EU_AV),
                min_age,
                None,
            ),
        )
        .append_pair("client_metadata", CLIENT_METADATA)
        .finish();
    let link = AuthorizationRequest::parse(&uri);
    let vp_token = issuer.vp_token(&link, &Presentation::for_request(&link, T0));
    let link_rate = rate("verifications, link (openid4vp direct_post)", || {
        let transcript = mdoc::session_transcript(&link.client_id, &link.nonce, &link.response_uri);
        let expected = Expected {
            session_transcript: &transcript,
            min_age: 18,
            now: T0,
        };
        mdoc::verify_vp_token(&vp_token, &expected, &anchors).unwrap();
    });

    // The DC API: R1 and R2 of one stored request, as the page carries them.
    let key = ResponseKey::generate(&mut rand::rngs::OsRng);
    let stored_key = key.to_bytes();
    let encryption_nonce = EncryptionNonce::generate();
    let claim = min_age.claim();
    let items = [ItemRequest {
        doc_type: "eu.europa.ec.av.1",
        namespace: "eu.europa.ec.av.1",
        claim: &claim,
    }];
    let requests = request::build(
        &RequestInputs {
            origin: ORIGIN,
            nonce: NONCE,
            dcql_query: &dcql_query_value(
                agegate::domain::KindSet::one(agegate::domain::Kind::EU_AV),
                min_age,
                None,
            ),
            client_metadata: &client_metadata_value(),
            items: &items,
            key: &key,
            encryption_nonce: encryption_nonce.as_bytes(),
            zk: None,
        },
        None,
    );
    let page = DcApiPage::from_json(json!({"state": "s", "digital": requests.digital()}));
    let p = Presentation::for_claim(&claim, T0);
    let r1_data = issuer.dc_openid4vp_data(&page.r1(), ORIGIN, &p, &DcAnswer::default());
    let r2_data = issuer.dc_annex_c_data(&page.r2(), ORIGIN, &p, &DcAnswer::default());
    fn expected(transcript: &[u8]) -> Expected<'_> {
        Expected {
            session_transcript: transcript,
            min_age: 18,
            now: T0,
        }
    }

    let r1_rate = rate("verifications, dc api openid4vp (JWE ECDH-ES)", || {
        let key = ResponseKey::from_bytes(&stored_key[..]).unwrap();
        let opened = response::openid4vp(&r1_data, &key).unwrap();
        let transcript = transcript::openid4vp(ORIGIN, NONCE, &key.thumbprint());
        mdoc::verify_device_response(&opened.device_response, &expected(&transcript), &anchors)
            .unwrap();
    });
    let r2_rate = rate("verifications, dc api org-iso-mdoc (HPKE)", || {
        let key = ResponseKey::from_bytes(&stored_key[..]).unwrap();
        let info = request::encryption_info(&key, encryption_nonce.as_bytes());
        let transcript = transcript::annex_c(&info, ORIGIN);
        let device_response = response::annex_c(&r2_data, &key, &transcript).unwrap();
        mdoc::verify_device_response(&device_response, &expected(&transcript), &anchors).unwrap();
    });
    // The page's side: rebuilding R1 and R2 from what is stored, on every reload.
    let build_rate = rate(
        "dc api requests rebuilt for a page (R1 + R2, unsigned)",
        || {
            let key = ResponseKey::from_bytes(&stored_key[..]).unwrap();
            let built = request::build(
                &RequestInputs {
                    origin: ORIGIN,
                    nonce: NONCE,
                    dcql_query: &dcql_query_value(
                        agegate::domain::KindSet::one(agegate::domain::Kind::EU_AV),
                        min_age,
                        None,
                    ),
                    client_metadata: &client_metadata_value(),
                    items: &items,
                    key: &key,
                    encryption_nonce: encryption_nonce.as_bytes(),
                    zk: None,
                },
                None,
            );
            assert!(!built.encryption_info.is_empty());
        },
    );
    println!(
        "relative to the link: openid4vp {:.2}x, org-iso-mdoc {:.2}x the time; a page's requests {:.0} µs",
        link_rate / r1_rate,
        link_rate / r2_rate,
        1e6 / build_rate
    );
}
