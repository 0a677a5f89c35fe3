//! The zero-knowledge answer's parser and cheap checks, each refusal for its own reason,
//! and the public inputs it builds, checked against a published proof.

use ciborium::Value;

use super::*;
use crate::mdoc::testkit::{enc, Pki};
use crate::mdoc::TrustAnchors;
use crate::testkit::{map, tag24, text, DAY};

/// 2025-06-01T00:00:00Z, inside [`Pki::fixed`]'s validity.
pub(super) const NOW: i64 = 1_748_736_000;
pub(super) const V7_1: &str = "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121";
pub(super) const V6_1: &str = "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6";
const AV: &str = "eu.europa.ec.av.1";
pub(super) const MDL: &str = "org.iso.18013.5.1.mDL";

/// A zero-knowledge DeviceResponse; every field can be spoiled by a test.
pub(super) struct ZkMint {
    pub(super) status: u64,
    pub(super) system_id: String,
    pub(super) doc_type: String,
    pub(super) timestamp: Value,
    pub(super) listing: Value,
    pub(super) device_signed: Option<Value>,
    pub(super) x5chain: Value,
    pub(super) proof: Vec<u8>,
}

impl ZkMint {
    pub(super) fn new(pki: &Pki) -> Self {
        ZkMint {
            status: 0,
            system_id: V7_1.into(),
            doc_type: AV.into(),
            timestamp: stamp("2025-06-01T00:01:00Z"),
            listing: listing(AV, "age_over_18", Value::Bool(true)),
            device_signed: Some(Value::Map(vec![])),
            x5chain: Value::Bytes(pki.ds_cert_der.clone()),
            proof: vec![7; 100],
        }
    }

    pub(super) fn bytes(&self) -> Vec<u8> {
        let mut data = vec![
            ("zkSystemId", text(&self.system_id)),
            ("docType", text(&self.doc_type)),
            ("timestamp", self.timestamp.clone()),
            ("issuerSigned", self.listing.clone()),
            ("msoX5chain", self.x5chain.clone()),
        ];
        if let Some(d) = &self.device_signed {
            data.push(("deviceSigned", d.clone()));
        }
        let doc = map(vec![
            ("proof", Value::Bytes(self.proof.clone())),
            ("documentData", tag24(&map(data))),
        ]);
        enc(&map(vec![
            ("version", text("1.0")),
            ("status", Value::Integer(self.status.into())),
            ("zkDocuments", Value::Array(vec![doc])),
        ]))
    }
}

pub(super) fn stamp(t: &str) -> Value {
    Value::Tag(0, Box::new(text(t)))
}

pub(super) fn listing(ns: &str, id: &str, value: Value) -> Value {
    map(vec![(
        ns,
        Value::Array(vec![map(vec![
            ("elementIdentifier", text(id)),
            ("elementValue", value),
        ])]),
    )])
}

pub(super) fn offered() -> Vec<String> {
    vec![V7_1.to_owned(), V6_1.to_owned()]
}

fn check(bytes: &[u8], anchors: &KindAnchors) -> Result<ZkChecked, E> {
    let offered = offered();
    let expected = ZkExpected {
        offered: &offered,
        min_age: 18,
        now: NOW,
    };
    check_zk_response(bytes, &expected, anchors)
}

fn refused(pki: &Pki, spoil: impl FnOnce(&mut ZkMint)) -> E {
    let mut mint = ZkMint::new(pki);
    spoil(&mut mint);
    check(&mint.bytes(), &pki.anchors()).unwrap_err()
}

#[test]
fn a_well_formed_answer_passes_the_cheap_checks_with_the_leaf_key_and_its_anchor() {
    let pki = Pki::fixed();
    let mint = ZkMint::new(&pki);
    assert!(is_zk_response(&mint.bytes()));
    let checked = check(&mint.bytes(), &pki.anchors()).unwrap();
    assert_eq!(checked.kind, Kind::EU_AV);
    assert_eq!(checked.doc_type, AV);
    assert_eq!(checked.circuit_hash, V7_1);
    assert_eq!(
        checked.issuer_anchor,
        crate::testkit::sha256(&pki.ca_der),
        "the anchor's fingerprint"
    );
    let point = pki.ds_key.verifying_key().to_encoded_point(false);
    let inputs = checked.public_inputs(b"transcript", &[]);
    assert_eq!(inputs.issuer_x.as_slice(), point.x().unwrap().as_slice());
    assert_eq!(inputs.issuer_y.as_slice(), point.y().unwrap().as_slice());
    assert_eq!(inputs.timestamp, "2025-06-01T00:01:00Z");
    assert_eq!(inputs.doc_type, AV);
    assert_eq!(inputs.session_transcript, b"transcript");
}

#[test]
fn a_plain_device_response_is_not_a_zk_one() {
    let pki = Pki::fixed();
    let plain = crate::mdoc::testkit::Mint::default().device_response(&pki);
    assert!(!is_zk_response(&plain));
    assert!(!is_zk_response(b"\xff"));
}

#[test]
fn multipaz_system_ids_name_the_circuit_at_their_end() {
    let pki = Pki::fixed();
    let mut mint = ZkMint::new(&pki);
    mint.system_id = format!("longfellow-libzk-v1_7_1_4151_4096_{}", V7_1.to_uppercase());
    assert_eq!(
        check(&mint.bytes(), &pki.anchors()).unwrap().circuit_hash,
        V7_1
    );
    assert_eq!(circuit_hash_of(V6_1).as_deref(), Some(V6_1));
    assert_eq!(circuit_hash_of(&V6_1[1..]), None);
    assert_eq!(circuit_hash_of(&format!("{V6_1}0")), None);
    assert_eq!(circuit_hash_of(&format!("other_{V6_1}")), None);
}

#[test]
fn a_circuit_the_request_did_not_offer_is_refused_by_name() {
    let pki = Pki::fixed();
    // Version 5, 1 attribute: never offered.
    let v5 = "bd3168ea0a9096b4f7b9b61d1c210dac1b7126a9ec40b8bc770d4d485efce4e9";
    let e = refused(&pki, |m| m.system_id = v5.into());
    assert_eq!(e, E::ZkCircuitNotOffered(v5.into()));
    assert_eq!(e.outcome(), "zk_circuit");
    let e = refused(&pki, |m| m.system_id = "longfellow-libzk-v1".into());
    assert!(matches!(e, E::ZkCircuitNotOffered(_)));
}

#[test]
fn a_doc_type_not_asked_for_is_refused() {
    let pki = Pki::fixed();
    let e = refused(&pki, |m| m.doc_type = MDL.into());
    assert_eq!(e, E::WrongDocType(MDL.into()));
    let e = refused(&pki, |m| m.doc_type = "x.y".into());
    assert_eq!(e, E::WrongDocType("x.y".into()));
}

#[test]
fn timestamps_more_than_five_minutes_off_are_refused() {
    let pki = Pki::fixed();
    for t in ["2025-06-01T00:05:00Z", "2025-05-31T23:55:00Z"] {
        let mut mint = ZkMint::new(&pki);
        mint.timestamp = stamp(t);
        assert!(check(&mint.bytes(), &pki.anchors()).is_ok(), "{t}");
    }
    for t in ["2025-06-01T00:06:00Z", "2025-05-31T23:54:00Z"] {
        assert_eq!(refused(&pki, |m| m.timestamp = stamp(t)), E::ZkTimestamp);
    }
}

#[test]
fn timestamps_must_be_tagged_whole_utc_seconds() {
    let pki = Pki::fixed();
    for bad in [
        text("2025-06-01T00:01:00Z"),
        stamp("2025-06-01T00:01:00.5Z"),
        stamp("2025-06-01T00:01:00+00:00"),
        stamp("2025-06-01t00:01:00Z"),
        stamp("2025-13-01T00:01:00Z"),
        Value::Tag(1, Box::new(Value::Integer(NOW.into()))),
    ] {
        assert_eq!(
            refused(&pki, |m| m.timestamp = bad.clone()),
            E::MalformedZkDocument("timestamp"),
            "{bad:?}"
        );
    }
}

#[test]
fn the_claim_must_be_listed_true_in_the_kinds_namespace() {
    let pki = Pki::fixed();
    let missing = E::ZkClaimNotListed("age_over_18".into());
    for listed in [
        listing(AV, "age_over_18", Value::Bool(false)),
        listing(AV, "age_over_21", Value::Bool(true)),
        listing("org.iso.18013.5.1", "age_over_18", Value::Bool(true)),
        listing(AV, "age_over_18", text("true")),
        map(vec![]),
    ] {
        assert_eq!(refused(&pki, |m| m.listing = listed.clone()), missing);
    }
    assert_eq!(missing.outcome(), "age_claim_missing");
    let e = refused(&pki, |m| m.listing = Value::Array(vec![]));
    assert_eq!(e, E::MalformedZkDocument("issuerSigned"));
}

#[test]
fn device_signed_must_be_absent_or_empty() {
    let pki = Pki::fixed();
    let mut mint = ZkMint::new(&pki);
    mint.device_signed = None;
    assert!(check(&mint.bytes(), &pki.anchors()).is_ok());
    let e = refused(&pki, |m| {
        m.device_signed = Some(map(vec![("nameSpaces", tag24(&map(vec![])))]))
    });
    assert_eq!(e, E::ZkDeviceSigned);
    let e = refused(&pki, |m| m.device_signed = Some(Value::Bytes(vec![])));
    assert_eq!(e, E::MalformedZkDocument("deviceSigned"));
}

#[test]
fn the_leaf_must_chain_to_an_anchor_of_the_documents_kind() {
    let pki = Pki::fixed();
    let other = Pki::with(&rcgen::PKCS_ECDSA_P256_SHA256, (2020, 2040), (2024, 2027));
    let e = refused(&pki, |m| {
        m.x5chain = Value::Bytes(other.ds_cert_der.clone())
    });
    assert_eq!(e, E::UntrustedIssuer);
    // The same CA, but as another kind's anchor: a PID signer is no Proof of Age issuer.
    let anchors = pki
        .anchors_for(Kind::EUDI_PID)
        .with(Kind::EU_AV, std::sync::Arc::new(other.ca_anchors()));
    let e = check(&ZkMint::new(&pki).bytes(), &anchors).unwrap_err();
    assert_eq!(e, E::UntrustedIssuer);
    // An expired document signer.
    let old = pki.with_signer_validity(NOW - 400 * DAY, NOW - DAY);
    let e = refused(&pki, |m| m.x5chain = Value::Bytes(old.ds_cert_der.clone()));
    assert_eq!(
        e,
        E::CertificateExpired(crate::mdoc::CertRole::DocumentSigner)
    );
    for bad in [
        Value::Array(vec![]),
        Value::Array(vec![Value::Bytes(pki.ds_cert_der.clone()); 5]),
        text("cert"),
    ] {
        let e = refused(&pki, |m| m.x5chain = bad.clone());
        assert_eq!(e, E::MalformedZkDocument("msoX5chain"));
    }
    let e = refused(&pki, |m| m.x5chain = Value::Bytes(vec![0x30, 0x00]));
    assert_eq!(e, E::MalformedCertificate);
}

#[test]
fn a_chain_through_a_ca_intermediate_is_followed_and_a_non_ca_one_is_not() {
    let (anchor, inter, leaf) = three_level_chain(true);
    let anchors = KindAnchors::single(Kind::EU_AV, TrustAnchors::from_pem(&anchor).unwrap());
    let pki = Pki::fixed();
    let mut mint = ZkMint::new(&pki);
    mint.x5chain = Value::Array(vec![Value::Bytes(leaf.clone()), Value::Bytes(inter)]);
    assert!(check(&mint.bytes(), &anchors).is_ok());
    // Without its intermediate the leaf chains to nothing.
    mint.x5chain = Value::Array(vec![Value::Bytes(leaf)]);
    assert_eq!(check(&mint.bytes(), &anchors), Err(E::UntrustedIssuer));

    let (anchor, inter, leaf) = three_level_chain(false);
    let anchors = KindAnchors::single(Kind::EU_AV, TrustAnchors::from_pem(&anchor).unwrap());
    mint.x5chain = Value::Array(vec![Value::Bytes(leaf), Value::Bytes(inter)]);
    assert_eq!(check(&mint.bytes(), &anchors), Err(E::UntrustedIssuer));
}

/// An anchor (PEM), an intermediate whose basicConstraints say `cA` or not, and a P-256
/// leaf it signed (DER), all valid 2020–2040.
fn three_level_chain(intermediate_is_ca: bool) -> (String, Vec<u8>, Vec<u8>) {
    let params = |cn: &str, ca: bool| {
        let mut p = rcgen::CertificateParams::default();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        p.is_ca = if ca {
            rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained)
        } else {
            rcgen::IsCa::ExplicitNoCa
        };
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2040, 1, 1);
        p
    };
    let key = || rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let (root_key, inter_key, leaf_key) = (key(), key(), key());
    let root = params("zk root", true).self_signed(&root_key).unwrap();
    let inter = params("zk intermediate", intermediate_is_ca)
        .signed_by(&inter_key, &root, &root_key)
        .unwrap();
    let leaf = params("zk signer", false)
        .signed_by(&leaf_key, &inter, &inter_key)
        .unwrap();
    (root.pem(), inter.der().to_vec(), leaf.der().to_vec())
}

#[test]
fn ill_formed_responses_are_refused_by_field() {
    let pki = Pki::fixed();
    assert_eq!(
        refused(&pki, |m| m.status = 10),
        E::StatusNotZero(10),
        "a wallet's error status"
    );
    let anchors = pki.anchors();
    let bare = |entries| enc(&map(entries));
    let cases: Vec<(Vec<u8>, E)> = vec![
        (
            vec![0xa1],
            E::MalformedDeviceResponse("not a single cbor data item"),
        ),
        (
            bare(vec![("status", Value::Integer(0.into()))]),
            E::MalformedDeviceResponse("zkDocuments"),
        ),
        (
            bare(vec![
                ("status", Value::Integer(0.into())),
                ("zkDocuments", Value::Array(vec![])),
            ]),
            E::NoDocument,
        ),
        (
            bare(vec![
                ("status", Value::Integer(0.into())),
                ("zkDocuments", Value::Array(vec![map(vec![])])),
            ]),
            E::MalformedZkDocument("proof"),
        ),
        (
            bare(vec![
                ("status", Value::Integer(0.into())),
                (
                    "zkDocuments",
                    Value::Array(vec![map(vec![
                        ("proof", Value::Bytes(vec![1])),
                        ("documentData", map(vec![])),
                    ])]),
                ),
            ]),
            E::MalformedZkDocument("documentData"),
        ),
    ];
    for (bytes, e) in cases {
        assert_eq!(check(&bytes, &anchors), Err(e));
    }
    let big = vec![0; MAX_ZK_DEVICE_RESPONSE + 1];
    assert_eq!(check(&big, &anchors), Err(E::TooLarge));
}
