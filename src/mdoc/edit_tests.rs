//! Rules checked by editing a valid minted presentation at the CBOR level: structure
//! faults the minting knobs cannot express, and the envelope and message rules.

use ciborium::Value;

use super::testkit::{expected, tag24, vp_token_of, Mint};
use super::tests::pki;
use super::*;

/// Rewrites the minted DeviceResponse as a Value and re-encodes it.
fn edit(f: impl FnOnce(&mut Vec<(Value, Value)>)) -> String {
    let bytes = Mint::default().device_response(pki());
    let mut value: Value = ciborium::de::from_reader(bytes.as_slice()).expect("cbor");
    let Value::Map(map) = &mut value else {
        panic!("map")
    };
    f(map);
    vp_token_of(&super::testkit::enc(&value))
}

fn check(token: &str) -> Result<u8, PresentationError> {
    verify_vp_token(token, &expected(18), &pki().anchors()).map(|p| p.age_over)
}

fn field<'a>(map: &'a mut [(Value, Value)], key: &str) -> &'a mut Value {
    &mut map
        .iter_mut()
        .find(|(k, _)| k.as_text() == Some(key))
        .expect(key)
        .1
}

/// Like `edit`, on the map at `path` (text keys) inside the first document.
fn edit_in_doc(path: &[&str], f: impl FnOnce(&mut Vec<(Value, Value)>)) -> String {
    edit(|m| {
        let Value::Array(docs) = field(m, "documents") else {
            panic!()
        };
        let mut at = &mut docs[0];
        for key in path {
            let Value::Map(map) = at else { panic!("{key}") };
            at = field(map, key);
        }
        let Value::Map(map) = at else { panic!("map") };
        f(map);
    })
}

#[test]
fn issuer_auth_without_es256_or_x5chain_is_refused() {
    let token = edit_in_doc(&["issuerSigned"], |m| {
        let Value::Array(auth) = field(m, "issuerAuth") else {
            panic!()
        };
        auth[0] = Value::Bytes(vec![0xa1, 0x01, 0x38, 0x22]); // {1: -35} (ES384)
    });
    assert_eq!(check(&token), Err(PresentationError::UnsupportedAlgorithm));
    let token = edit_in_doc(&["issuerSigned"], |m| {
        let Value::Array(auth) = field(m, "issuerAuth") else {
            panic!()
        };
        auth[1] = Value::Map(vec![]);
    });
    assert_eq!(check(&token), Err(PresentationError::MissingCertificate));
    let token = edit_in_doc(&["issuerSigned"], |m| {
        let Value::Array(auth) = field(m, "issuerAuth") else {
            panic!()
        };
        auth[1] = Value::Map(vec![(Value::from(33), Value::Bytes(vec![0x30, 0x00]))]);
    });
    assert_eq!(check(&token), Err(PresentationError::MalformedCertificate));
}

#[test]
fn device_auth_without_a_detached_device_signature_is_refused() {
    let token = edit_in_doc(&["deviceSigned"], |m| {
        *field(m, "deviceAuth") = Value::Map(vec![]);
    });
    assert_eq!(
        check(&token),
        Err(PresentationError::MissingDeviceSignature)
    );
    let token = edit_in_doc(&["deviceSigned", "deviceAuth"], |m| {
        let Value::Array(sig) = field(m, "deviceSignature") else {
            panic!()
        };
        sig[2] = Value::Bytes(b"attached".to_vec());
    });
    assert_eq!(
        check(&token),
        Err(PresentationError::MalformedDeviceSignature(
            "payload is not detached"
        ))
    );
    let token = edit_in_doc(&["deviceSigned"], |m| {
        *field(m, "nameSpaces") = Value::Map(vec![]);
    });
    assert_eq!(
        check(&token),
        Err(PresentationError::MalformedDeviceResponse(
            "deviceSigned.nameSpaces"
        ))
    );
}

#[test]
fn documents_other_than_proof_of_age_are_skipped_and_empty_lists_refused() {
    let token = edit(|m| {
        let Value::Array(docs) = field(m, "documents") else {
            panic!()
        };
        let mut other = docs[0].clone();
        let Value::Map(o) = &mut other else { panic!() };
        *field(o, "docType") = Value::Text("org.iso.18013.5.1.mDL".into());
        docs.insert(0, other);
    });
    assert_eq!(check(&token), Ok(18));
    let token = edit(|m| *field(m, "documents") = Value::Array(vec![]));
    assert_eq!(check(&token), Err(PresentationError::NoDocument));
}

#[test]
fn an_undisclosed_digest_id_is_a_missing_digest() {
    let token = edit(|m| {
        let Value::Array(docs) = field(m, "documents") else {
            panic!()
        };
        let Value::Map(doc) = &mut docs[0] else {
            panic!()
        };
        let Value::Map(issuer_signed) = field(doc, "issuerSigned") else {
            panic!()
        };
        let Value::Map(ns) = field(issuer_signed, "nameSpaces") else {
            panic!()
        };
        let Value::Array(items) = &mut ns[0].1 else {
            panic!()
        };
        let forged = super::testkit::enc(&Value::Map(vec![
            (Value::Text("digestID".into()), Value::from(999)),
            (Value::Text("random".into()), Value::Bytes(vec![0; 16])),
            (
                Value::Text("elementIdentifier".into()),
                Value::Text("age_over_18".into()),
            ),
            (Value::Text("elementValue".into()), Value::Bool(true)),
        ]));
        items.push(tag24(forged));
    });
    assert_eq!(check(&token), Err(PresentationError::DigestMissing));
}

#[test]
fn a_tampered_issuer_signature_is_refused() {
    let token = edit(|m| {
        let Value::Array(docs) = field(m, "documents") else {
            panic!()
        };
        let Value::Map(doc) = &mut docs[0] else {
            panic!()
        };
        let Value::Map(issuer_signed) = field(doc, "issuerSigned") else {
            panic!()
        };
        let Value::Array(auth) = field(issuer_signed, "issuerAuth") else {
            panic!()
        };
        let Value::Bytes(sig) = &mut auth[3] else {
            panic!()
        };
        sig[10] ^= 1;
    });
    assert_eq!(
        check(&token),
        Err(PresentationError::IssuerSignatureInvalid)
    );
}

#[test]
fn envelope_errors_are_named() {
    let anchors = pki().anchors();
    let e = |t: &str| verify_vp_token(t, &expected(18), &anchors).expect_err(t);
    assert_eq!(e("not json"), PresentationError::VpTokenNotJson);
    assert_eq!(
        e(r#"{"proof_of_age": []}"#),
        PresentationError::VpTokenShape
    );
    assert_eq!(
        e(r#"{"proof_of_age": [1]}"#),
        PresentationError::VpTokenShape
    );
    assert_eq!(
        e(r#"{"proof_of_age": ["oQ", "oQ"]}"#),
        PresentationError::VpTokenShape
    );
    assert_eq!(
        e(r#"{"other": ["oQ"]}"#),
        PresentationError::UnrequestedCredential("other".into())
    );
    // A kind the request did not ask for (only eu-av's anchors are given here).
    assert_eq!(
        e(r#"{"mdl": ["oQ"]}"#),
        PresentationError::UnrequestedCredential("mdl".into())
    );
    assert_eq!(
        e(r#"{"proof_of_age": ["oQ"], "mdl": ["oQ"]}"#),
        PresentationError::VpTokenShape
    );
    assert_eq!(e(r#"["oQ"]"#), PresentationError::VpTokenShape);
    assert_eq!(
        e(r#"{"proof_of_age": ["a+b/"]}"#),
        PresentationError::NotBase64Url
    );
    assert_eq!(
        e(r#"{"proof_of_age": ["oA"]}"#),
        PresentationError::MalformedDeviceResponse("status")
    );
    assert_eq!(
        e(r#"{"proof_of_age": ["oQE"]}"#),
        PresentationError::MalformedDeviceResponse("not a single cbor data item")
    );
    // Nesting far beyond the recursion limit is refused, not a stack overflow.
    for nested in [
        vec![0xc6u8; 40_000],
        vec![0x81u8; 40_000],
        vec![0xa1u8; 40_000],
    ] {
        let mut bytes = nested;
        bytes.push(0);
        assert_eq!(
            check(&vp_token_of(&bytes)),
            Err(PresentationError::MalformedDeviceResponse(
                "not a single cbor data item"
            ))
        );
    }
    let huge = format!(r#"{{"proof_of_age": ["{}"]}}"#, "A".repeat(70_000));
    assert_eq!(e(&huge), PresentationError::TooLarge);
}

#[test]
fn every_error_message_is_distinct_short_and_lowercase() {
    // Prose is lowercase; a named field keeps its ISO spelling (e.g. `docType`), and a
    // wrong docType is quoted as received, so the parameters here are lowercase.
    use PresentationError as P;
    let all = [
        P::VpTokenNotJson,
        P::VpTokenShape,
        P::TooLarge,
        P::NotBase64Url,
        P::MalformedDeviceResponse("status"),
        P::StatusNotZero(1),
        P::NoDocument,
        P::WrongDocType("x".into()),
        P::MalformedIssuerAuth("x"),
        P::UnsupportedAlgorithm,
        P::MissingCertificate,
        P::MalformedCertificate,
        P::UnsupportedIssuerKey,
        P::UntrustedIssuer,
        P::CertificateNotYetValid(CertRole::DocumentSigner),
        P::CertificateExpired(CertRole::DocumentSigner),
        P::IssuerSignatureInvalid,
        P::MalformedMso("x"),
        P::WrongMsoDocType,
        P::UnsupportedDigestAlgorithm,
        P::MsoNotYetValid,
        P::MsoExpired,
        P::DigestMissing,
        P::DigestMismatch,
        P::MalformedDeviceKey,
        P::MissingDeviceSignature,
        P::DeviceMacUnsupported,
        P::MalformedDeviceSignature("x"),
        P::UnsupportedDeviceAlgorithm,
        P::DeviceSignatureInvalid,
        P::AgeClaimMissing(18),
        P::AgeClaimFalse,
        P::MalformedZkDocument("x"),
        P::ZkNotOffered,
        P::ZkCircuitNotOffered("x".into()),
        P::ZkRequired,
        P::ZkTimestamp,
        P::ZkClaimNotListed("age_over_18".into()),
        P::ZkDeviceSigned,
        P::ZkProofInvalid,
    ];
    let messages: Vec<String> = all.iter().map(ToString::to_string).collect();
    for (i, m) in messages.iter().enumerate() {
        assert!(m.len() < 100, "{m}");
        assert_eq!(m, &m.to_lowercase(), "{m}");
        assert!(!messages[..i].contains(m), "duplicate: {m}");
    }
}
