//! The issuer-side checks on an mdoc made elsewhere: the example DeviceResponse of
//! ISO/IEC 18013-5 Annex D (an mDL of the "utopia" issuer), as published in the
//! standard and reproduced in several open-source wallets' test data (here from
//! openwallet-foundation-labs/identity-credential, TestVectors.kt,
//! `ISO_18013_5_ANNEX_D_DEVICE_RESPONSE`). Its issuerAuth, x5chain certificate, MSO and
//! digests are checked with the same code that checks a Proof of Age. Its device
//! authentication is a MAC over a proximity SessionTranscript, which OpenID4VP never
//! uses, so it is not checked here.

use base64::Engine;
use ciborium::Value;

use super::cbor;
use super::cose::Sign1;
use super::mso::{check_disclosures, parse_mso};
use super::raw::Raw;
use super::{CertRole, PresentationError as E, TrustAnchors};
use crate::pki::{Cert, PublicKey};

const DEVICE_RESPONSE_HEX: &str = include_str!("testdata/iso18013_5_annex_d_device_response.hex");
const MDL: &str = "org.iso.18013.5.1.mDL";
/// The MSO's `validFrom` and `validUntil`: 2020-10-01T13:30:02Z and a year later; the
/// document signer certificate runs from 2020-10-01 to 2021-10-01, midnight UTC.
const VALID_FROM: i64 = 1_601_559_002;
const VALID_UNTIL: i64 = 1_633_095_002;
const CERT_NOT_AFTER: i64 = 1_633_046_400;
/// A moment when everything above is valid.
const NOW: i64 = VALID_FROM + 86_400;

fn device_response() -> Vec<u8> {
    let hex = DEVICE_RESPONSE_HEX.trim();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn field<'a>(map: &'a Value, name: &str) -> &'a Value {
    cbor::get(cbor::as_map(map).unwrap(), name).unwrap()
}

/// The first document and its received bytes.
fn document(bytes: &[u8]) -> (Value, Raw<'_>) {
    let response = cbor::decode(bytes).unwrap();
    let doc = field(&response, "documents").as_array().unwrap()[0].clone();
    let raw = Raw::new(bytes)
        .and_then(|r| r.get("documents"))
        .and_then(Raw::array_items)
        .unwrap()[0];
    (doc, raw)
}

fn issuer_auth(doc: &Value) -> Sign1 {
    Sign1::parse(field(field(doc, "issuerSigned"), "issuerAuth")).expect("an ES256 COSE_Sign1")
}

fn signer(doc: &Value) -> Cert {
    Cert::from_der_ec(issuer_auth(doc).x5chain_leaf().unwrap()).unwrap()
}

#[test]
fn annex_d_issuer_signature_verifies_with_its_x5chain_certificate() {
    let bytes = device_response();
    let (doc, _) = document(&bytes);
    assert_eq!(field(&doc, "docType"), &Value::Text(MDL.into()));
    let auth = issuer_auth(&doc);
    let PublicKey::P256(key) = &signer(&doc).key else {
        panic!("the Annex D document signer has a P-256 key");
    };
    assert!(auth.verify(key, None), "issuerAuth verifies");

    // The MSO's `signed` time one second later, and it no longer does.
    let mut tampered = bytes.clone();
    replace_first(
        &mut tampered,
        b"2020-10-01T13:30:02Z",
        b"2020-10-01T13:30:03Z",
    );
    let (doc, _) = document(&tampered);
    assert!(!issuer_auth(&doc).verify(key, None));
}

#[test]
fn annex_d_certificate_validity_is_read_from_the_certificate() {
    let bytes = device_response();
    let (doc, _) = document(&bytes);
    let der = issuer_auth(&doc).x5chain_leaf().unwrap().to_vec();
    // As its own anchor (no IACA certificate is published with the vector).
    let pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        base64::engine::general_purpose::STANDARD.encode(&der)
    );
    let anchors = TrustAnchors::from_pem(&pem).unwrap();
    let signer = signer(&doc);
    let fingerprint: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&der).into();
    assert_eq!(anchors.check_signer(&signer, NOW), Ok(fingerprint));
    assert_eq!(
        anchors.check_signer(&signer, CERT_NOT_AFTER),
        Ok(fingerprint)
    );
    assert_eq!(
        anchors.check_signer(&signer, CERT_NOT_AFTER + 1),
        Err(E::CertificateExpired(CertRole::DocumentSigner))
    );
}

#[test]
fn annex_d_mso_parses_with_its_tag_0_validity_and_device_key() {
    let bytes = device_response();
    let (doc, _) = document(&bytes);
    let issuer_auth = issuer_auth(&doc);
    let payload = issuer_auth.payload().unwrap();
    let mso = parse_mso(payload, MDL, NOW).expect("the MSO parses");
    // The static device key of Annex D.
    let point = mso.device_key.to_encoded_point(false);
    assert_eq!(
        hex(point.x().unwrap()),
        "96313d6c63e24e3372742bfdb1a33ba2c897dcd68ab8c753e4fbd48dca6b7f9a"
    );
    assert_eq!(
        hex(point.y().unwrap()),
        "1fb3269edd418857de1b39a4e4a44b92fa484caa722c228288f01d0c03a2c3d6"
    );
    // validFrom and validUntil are exact to the second.
    assert!(parse_mso(payload, MDL, VALID_FROM).is_ok());
    assert!(parse_mso(payload, MDL, VALID_UNTIL).is_ok());
    assert_eq!(
        parse_mso(payload, MDL, VALID_FROM - 1).err(),
        Some(E::MsoNotYetValid)
    );
    assert_eq!(
        parse_mso(payload, MDL, VALID_UNTIL + 1).err(),
        Some(E::MsoExpired)
    );
    assert_eq!(
        parse_mso(payload, "eu.europa.ec.av.1", NOW).err(),
        Some(E::WrongMsoDocType)
    );
}

#[test]
fn annex_d_value_digests_match_every_disclosed_item() {
    let bytes = device_response();
    let (doc, raw_doc) = document(&bytes);
    let mso = parse_mso(issuer_auth(&doc).payload().unwrap(), MDL, NOW).unwrap();
    let namespaces = field(field(&doc, "issuerSigned"), "nameSpaces");
    let raw_namespaces = raw_doc
        .get("issuerSigned")
        .and_then(|r| r.get("nameSpaces"))
        .unwrap();
    let disclosed = check_disclosures(namespaces, raw_namespaces, &mso).expect("digests match");
    let names: Vec<(&str, &str)> = disclosed
        .iter()
        .map(|d| (d.namespace.as_str(), d.identifier.as_str()))
        .collect();
    let ns = "org.iso.18013.5.1";
    assert_eq!(
        names,
        [
            (ns, "family_name"),
            (ns, "issue_date"),
            (ns, "expiry_date"),
            (ns, "document_number"),
            (ns, "portrait"),
            (ns, "driving_privileges"),
        ]
    );
    assert_eq!(disclosed[0].value, Value::Text("Doe".into()));

    // The family name changed in transit ("Doe" → "Roe"): its digest no longer matches.
    let mut tampered = bytes.clone();
    replace_first(&mut tampered, b"cDoe", b"cRoe");
    let (doc, raw_doc) = document(&tampered);
    let namespaces = field(field(&doc, "issuerSigned"), "nameSpaces");
    let raw_namespaces = raw_doc
        .get("issuerSigned")
        .and_then(|r| r.get("nameSpaces"))
        .unwrap();
    assert_eq!(
        check_disclosures(namespaces, raw_namespaces, &mso).err(),
        Some(E::DigestMismatch)
    );
}

/// Replaces the first `from` in `bytes` with `to`, of the same length.
fn replace_first(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    bytes[at..at + to.len()].copy_from_slice(to);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
