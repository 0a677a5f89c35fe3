use ciborium::Value as Cbor;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::Signature;
use p256::elliptic_curve::sec1::ToEncodedPoint;

use super::super::signer::tests::test_signer;
use super::super::test_util::b64;
use super::*;
use crate::mdoc::cbor::{self, tag24_content};

const AV: &str = "eu.europa.ec.av.1";
const MDL: &str = "org.iso.18013.5.1.mDL";

fn key() -> ResponseKey {
    ResponseKey::from_bytes(&[9; 32]).expect("key")
}

fn items() -> Vec<ItemRequest<'static>> {
    vec![
        ItemRequest {
            doc_type: AV,
            namespace: AV,
            claim: "age_over_18",
        },
        ItemRequest {
            doc_type: MDL,
            namespace: "org.iso.18013.5.1",
            claim: "age_over_18",
        },
        // A repeat is dropped rather than written as a duplicate map key.
        ItemRequest {
            doc_type: AV,
            namespace: AV,
            claim: "age_over_18",
        },
    ]
}

fn with<T>(signer: Option<&RequestSigner>, f: impl FnOnce(DcApiRequests) -> T) -> T {
    let dcql = json!({"credentials": [{"id": "proof_of_age", "format": "mso_mdoc"}]});
    let metadata = json!({"vp_formats_supported": {"mso_mdoc": {"issuerauth_alg_values": [-7]}}});
    let key = key();
    let items = items();
    let inputs = RequestInputs {
        origin: "https://gate.example",
        nonce: "n-0S6_WzA2Mj",
        dcql_query: &dcql,
        client_metadata: &metadata,
        items: &items,
        key: &key,
        encryption_nonce: &[5; 16],
        zk: None,
    };
    f(build(&inputs, signer))
}

fn ciborium_bytes(v: &Cbor) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::ser::into_writer(v, &mut out).expect("encode");
    out
}

fn text(s: &str) -> Cbor {
    Cbor::Text(s.into())
}

#[test]
fn r1_unsigned_is_the_interface_shape() {
    with(None, |r| {
        assert_eq!(r.openid4vp["protocol"], "openid4vp-v1-unsigned");
        let data = r.openid4vp["data"].as_object().expect("data");
        let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "client_metadata",
                "dcql_query",
                "nonce",
                "response_mode",
                "response_type"
            ]
        );
        assert_eq!(data["response_type"], "vp_token");
        assert_eq!(data["response_mode"], "dc_api.jwt");
        assert_eq!(data["nonce"], "n-0S6_WzA2Mj");
        assert_eq!(data["dcql_query"]["credentials"][0]["id"], "proof_of_age");
        let metadata = &data["client_metadata"];
        assert_eq!(
            metadata["vp_formats_supported"]["mso_mdoc"]["issuerauth_alg_values"],
            json!([-7])
        );
        assert_eq!(metadata["jwks"], json!({"keys": [key().public_jwk()]}));
        assert_eq!(
            metadata["encrypted_response_enc_values_supported"],
            json!(["A128GCM"])
        );
        assert_eq!(r.digital(), json!({"requests": [r.openid4vp, r.annex_c]}));
    });
}

#[test]
fn r2_encryption_info_is_dcapi_nonce_and_cose_key() {
    with(None, |r| {
        assert_eq!(r.annex_c["protocol"], "org-iso-mdoc");
        assert_eq!(
            r.annex_c["data"]["encryptionInfo"],
            json!(r.encryption_info)
        );
        assert_eq!(r.encryption_info, encryption_info(&key(), &[5; 16]));
        assert!(!r.encryption_info.contains('='));
        let expected = Cbor::Array(vec![
            text("dcapi"),
            Cbor::Map(vec![
                (text("nonce"), Cbor::Bytes(vec![5; 16])),
                (
                    text("recipientPublicKey"),
                    cbor::decode(&key().cose_key()).expect("key"),
                ),
            ]),
        ]);
        assert_eq!(b64(&r.encryption_info), ciborium_bytes(&expected));
    });
}

/// The DeviceRequest, byte for byte against the same structure written by ciborium.
#[test]
fn r2_device_request_is_1_1_with_one_doc_request_per_doc_type_and_one_use_case() {
    let items_request = |doc_type: &str, ns: &str| {
        let inner = Cbor::Map(vec![
            (text("docType"), text(doc_type)),
            (
                text("nameSpaces"),
                Cbor::Map(vec![(
                    text(ns),
                    Cbor::Map(vec![(text("age_over_18"), Cbor::Bool(false))]),
                )]),
            ),
        ]);
        Cbor::Tag(24, Box::new(Cbor::Bytes(ciborium_bytes(&inner))))
    };
    // One mandatory use case, each docRequest alone a document set.
    let info = Cbor::Map(vec![(
        text("useCases"),
        Cbor::Array(vec![Cbor::Map(vec![
            (text("mandatory"), Cbor::Bool(true)),
            (
                text("documentSets"),
                Cbor::Array(vec![
                    Cbor::Array(vec![Cbor::Integer(0.into())]),
                    Cbor::Array(vec![Cbor::Integer(1.into())]),
                ]),
            ),
        ])]),
    )]);
    let expected = Cbor::Map(vec![
        (text("version"), text("1.1")),
        (
            text("docRequests"),
            Cbor::Array(vec![
                Cbor::Map(vec![(text("itemsRequest"), items_request(AV, AV))]),
                Cbor::Map(vec![(
                    text("itemsRequest"),
                    items_request(MDL, "org.iso.18013.5.1"),
                )]),
            ]),
        ),
        (
            text("deviceRequestInfo"),
            Cbor::Tag(24, Box::new(Cbor::Bytes(ciborium_bytes(&info)))),
        ),
    ]);
    with(None, |r| {
        let sent = r.annex_c["data"]["deviceRequest"].as_str().expect("text");
        assert_eq!(b64(sent), ciborium_bytes(&expected));
    });
    assert_eq!(
        device_request(&items(), None, None),
        ciborium_bytes(&expected)
    );
}

#[test]
fn building_is_deterministic() {
    let signer = test_signer();
    assert_eq!(with(None, |r| r), with(None, |r| r));
    assert_eq!(with(Some(&signer), |r| r), with(Some(&signer), |r| r));
}

#[test]
fn r1_signed_is_a_jws_over_data_client_id_and_expected_origins() {
    let signer = test_signer();
    let unsigned = with(None, |r| r.openid4vp);
    with(Some(&signer), |r| {
        assert_eq!(r.openid4vp["protocol"], "openid4vp-v1-signed");
        let data = r.openid4vp["data"].as_object().expect("data");
        assert_eq!(data.len(), 1);
        let jws = data["request"].as_str().expect("jws");
        let (input, sig) = jws.rsplit_once('.').expect("jws");
        let (header, payload) = input.split_once('.').expect("jws");
        let header: Value = serde_json::from_slice(&b64(header)).expect("header");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["typ"], "oauth-authz-req+jwt");
        assert_eq!(header["x5c"].as_array().map(Vec::len), Some(1));
        let leaf = crate::pki::Cert::from_der_ec(&signer.chain()[0]).expect("leaf");
        let crate::pki::PublicKey::P256(leaf_key) = leaf.key else {
            panic!("P-256 leaf")
        };
        let sig = Signature::from_slice(&b64(sig)).expect("r||s");
        assert!(leaf_key.verify(input.as_bytes(), &sig).is_ok());

        let mut expected = unsigned["data"].as_object().expect("data").clone();
        expected.insert("client_id".into(), json!(signer.client_id()));
        expected.insert("expected_origins".into(), json!(["https://gate.example"]));
        let payload: Value = serde_json::from_slice(&b64(payload)).expect("payload");
        assert_eq!(payload, Value::Object(expected));
    });
}

/// Each docRequest's readerAuth verifies (with the project's COSE verifier) over
/// ReaderAuthenticationBytes built from the Annex C SessionTranscript of this request's
/// encryptionInfo and origin, and that docRequest's ItemsRequestBytes as sent.
#[test]
fn r2_signed_reader_auth_covers_transcript_and_items_request() {
    let signer = test_signer();
    let leaf = crate::pki::Cert::from_der_ec(&signer.chain()[0]).expect("leaf");
    let crate::pki::PublicKey::P256(leaf_key) = leaf.key else {
        panic!("P-256 leaf")
    };
    with(Some(&signer), |r| {
        let transcript = transcript::annex_c(&r.encryption_info, "https://gate.example");
        let sent = b64(r.annex_c["data"]["deviceRequest"].as_str().expect("text"));
        let request = cbor::decode(&sent).expect("cbor");
        let map = cbor::as_map(&request).expect("map");
        let docs = cbor::get(map, "docRequests")
            .expect("docs")
            .as_array()
            .expect("array");
        assert_eq!(docs.len(), 2);
        for doc in docs {
            let doc = cbor::as_map(doc).expect("doc");
            let items = cbor::get(doc, "itemsRequest").expect("items");
            let items_bytes = tag24_encoded(tag24_content(items).expect("tag 24"));
            let payload = reader_authentication_bytes(&transcript, &items_bytes);
            let sign1 =
                crate::mdoc::cose::Sign1::parse(cbor::get(doc, "readerAuth").expect("auth"))
                    .expect("es256");
            assert_eq!(sign1.payload(), None);
            assert!(sign1.verify(&leaf_key, Some(&payload)));
            let other = transcript::annex_c(&r.encryption_info, "https://evil.example");
            assert!(!sign1.verify(
                &leaf_key,
                Some(&reader_authentication_bytes(&other, &items_bytes))
            ));
        }
    });
}

/// ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", ST, IRB]).
#[test]
fn reader_authentication_bytes_shape() {
    let st = transcript::annex_c("e", "https://o");
    let irb = tag24_encoded(&[0xa0]);
    let expected = Cbor::Tag(
        24,
        Box::new(Cbor::Bytes(ciborium_bytes(&Cbor::Array(vec![
            text("ReaderAuthentication"),
            cbor::decode(&st).expect("st"),
            Cbor::Tag(24, Box::new(Cbor::Bytes(vec![0xa0]))),
        ])))),
    );
    assert_eq!(
        reader_authentication_bytes(&st, &irb),
        ciborium_bytes(&expected)
    );
}

#[test]
fn non_object_client_metadata_still_gets_the_key() {
    let data = openid4vp_data("n", &json!({}), &json!("oops"), &key());
    assert_eq!(
        data["client_metadata"]["jwks"]["keys"][0]["kid"],
        json!(key().kid())
    );
    let x = key().public_key().to_encoded_point(false);
    assert_eq!(
        b64(data["client_metadata"]["jwks"]["keys"][0]["x"]
            .as_str()
            .expect("x")),
        x.x().expect("x").to_vec()
    );
}

/// docs/zk.md#zero-knowledge-proofs: with proofs offered, each itemsRequest (inside
/// its tag 24) carries `requestInfo.zkRequest`, newest circuit first, the numbers as
/// unsigned integers; `zkRequired` says whether only a proof answers.
#[test]
fn a_zk_offer_puts_a_zk_request_inside_each_items_request() {
    let circuits: Vec<_> = agegate_zk::CIRCUITS
        .iter()
        .filter(|c| c.num_attributes == 1)
        .collect();
    let text = |s: &str| Cbor::Text(s.into());
    let uint = |n: u64| Cbor::Integer(n.into());
    let spec = |hash: &str, version: u64, hash_enc: u64, sig_enc: u64| {
        Cbor::Map(vec![
            (text("zkSystemId"), text(hash)),
            (text("system"), text("longfellow-libzk-v1")),
            (
                text("params"),
                Cbor::Map(vec![
                    (text("version"), uint(version)),
                    (text("circuit_hash"), text(hash)),
                    (text("num_attributes"), uint(1)),
                    (text("block_enc_hash"), uint(hash_enc)),
                    (text("block_enc_sig"), uint(sig_enc)),
                ]),
            ),
        ])
    };
    for required in [false, true] {
        let zk = ZkAsk {
            circuits: &circuits,
            required,
        };
        let sent = device_request(&items()[..1], Some(zk), None);
        let request = cbor::decode(&sent).expect("CBOR");
        let field = |v: &'_ Cbor, key: &str| -> Cbor {
            match cbor::get(cbor::as_map(v).expect("map"), key) {
                Ok(found) => found.clone(),
                Err(_) => panic!("no {key}"),
            }
        };
        let Cbor::Array(doc_requests) = field(&request, "docRequests") else {
            panic!("docRequests")
        };
        let tagged = field(&doc_requests[0], "itemsRequest");
        let items_request = cbor::decode(tag24_content(&tagged).expect("tag 24")).expect("CBOR");
        let expected = Cbor::Map(vec![
            (text("docType"), text(AV)),
            (
                text("nameSpaces"),
                Cbor::Map(vec![(
                    text(AV),
                    Cbor::Map(vec![(text("age_over_18"), Cbor::Bool(false))]),
                )]),
            ),
            (
                text("requestInfo"),
                Cbor::Map(vec![(
                    text("zkRequest"),
                    Cbor::Map(vec![
                        (
                            text("systemSpecs"),
                            Cbor::Array(vec![
                                spec(
                                    "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121",
                                    7,
                                    4151,
                                    4096,
                                ),
                                spec(
                                    "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6",
                                    6,
                                    4096,
                                    2945,
                                ),
                            ]),
                        ),
                        (text("zkRequired"), Cbor::Bool(required)),
                    ]),
                )]),
            ),
        ]);
        assert_eq!(items_request, expected);
    }
}
