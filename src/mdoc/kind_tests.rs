//! docs/kinds.md#credential-kinds: each kind under its own anchors. A credential is chosen by its docType
//! among the kinds asked for, checked against that kind's docType, namespace and
//! anchors only, and the proof names its kind.

use base64::Engine;

use super::testkit::{expected, vp_token_with_id, Mint, Pki};
use super::tests::pki;
use super::*;
use crate::kind::Kind;

fn other_pki() -> &'static Pki {
    static PKI: std::sync::OnceLock<Pki> = std::sync::OnceLock::new();
    PKI.get_or_init(Pki::fixed)
}

#[test]
fn each_kind_verifies_under_its_own_anchors_and_is_named_in_the_proof() {
    for kind in Kind::all() {
        let token = Mint::of_kind(kind).vp_token(pki());
        let proof = verify_vp_token(&token, &expected(18), &pki().anchors_for(kind))
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!((proof.kind, proof.age_over), (kind, 18));
    }
}

#[test]
fn a_driving_licence_under_a_pid_anchor_is_refused() {
    let licence = Mint::of_kind(Kind::MDL).device_response(pki());
    // Only PID anchors: the licence's kind is not asked for at all.
    let pid_only = pki().anchors_for(Kind::EUDI_PID);
    assert_eq!(
        verify_device_response(&licence, &expected(18), &pid_only),
        Err(PresentationError::WrongDocType(
            "org.iso.18013.5.1.mDL".into()
        ))
    );
    // Both kinds on, the licence's issuer under the PID anchor only: untrusted.
    let both = KindAnchors::none()
        .with(Kind::EUDI_PID, std::sync::Arc::new(pki().ca_anchors()))
        .with(Kind::MDL, std::sync::Arc::new(other_pki().ca_anchors()));
    assert_eq!(
        verify_device_response(&licence, &expected(18), &both),
        Err(PresentationError::UntrustedIssuer)
    );
    // And a PID issued under the same CA still verifies as a PID.
    let pid = Mint::of_kind(Kind::EUDI_PID).device_response(pki());
    let proof = verify_device_response(&pid, &expected(18), &both).unwrap();
    assert_eq!(proof.kind, Kind::EUDI_PID);
}

#[test]
fn the_vp_token_id_decides_the_kind_and_the_document_must_be_of_it() {
    let all = KindAnchors::none()
        .with(Kind::EU_AV, std::sync::Arc::new(pki().ca_anchors()))
        .with(Kind::MDL, std::sync::Arc::new(pki().ca_anchors()));
    let proof_of_age = Mint::default().device_response(pki());
    // A proof of age sent as the answer for `mdl`.
    assert_eq!(
        verify_vp_token(&vp_token_with_id("mdl", &proof_of_age), &expected(18), &all),
        Err(PresentationError::WrongDocType("eu.europa.ec.av.1".into()))
    );
    // The id of a kind not asked for.
    assert_eq!(
        verify_vp_token(&vp_token_with_id("pid", &proof_of_age), &expected(18), &all),
        Err(PresentationError::UnrequestedCredential("pid".into()))
    );
    let ok = verify_vp_token(
        &vp_token_with_id("proof_of_age", &proof_of_age),
        &expected(18),
        &all,
    );
    assert_eq!(ok.map(|p| p.kind), Ok(Kind::EU_AV));
}

#[test]
fn the_age_claim_counts_only_in_the_kinds_namespace() {
    // An mDL whose age_over_18 sits in the EU AV namespace proves nothing.
    let mint = Mint {
        namespace: "eu.europa.ec.av.1".into(),
        ..Mint::of_kind(Kind::MDL)
    };
    let token = mint.vp_token(pki());
    assert_eq!(
        verify_vp_token(&token, &expected(18), &pki().anchors_for(Kind::MDL)),
        Err(PresentationError::AgeClaimMissing(18))
    );
}

#[test]
fn an_mso_for_another_kind_is_refused() {
    let mint = Mint {
        mso_doc_type: "eu.europa.ec.eudi.pid.1".into(),
        ..Mint::of_kind(Kind::MDL)
    };
    let token = mint.vp_token(pki());
    assert_eq!(
        verify_vp_token(&token, &expected(18), &pki().anchors_for(Kind::MDL)),
        Err(PresentationError::WrongMsoDocType)
    );
}

/// ISO/IEC 18013-5 Annex D's published mDL goes through the mdl kind's issuer checks
/// (trust, signature, MSO docType, digests) and stops only at its device MAC, which
/// OpenID4VP never uses; under another kind's anchors it is not even picked.
#[test]
fn the_published_annex_d_licence_passes_the_mdl_issuer_checks() {
    let hex = include_str!("testdata/iso18013_5_annex_d_device_response.hex").trim();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let response = cbor::decode(&bytes).unwrap();
    let doc = &cbor::get(cbor::as_map(&response).unwrap(), "documents")
        .unwrap()
        .as_array()
        .unwrap()[0];
    let issuer_signed = cbor::get(cbor::as_map(doc).unwrap(), "issuerSigned").unwrap();
    let auth =
        cose::Sign1::parse(cbor::get(cbor::as_map(issuer_signed).unwrap(), "issuerAuth").unwrap())
            .unwrap();
    let der = auth.x5chain_leaf().unwrap();
    let pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        base64::engine::general_purpose::STANDARD.encode(der)
    );
    let anchors = TrustAnchors::from_pem(&pem).unwrap();
    let at = Expected {
        // 2020-10-02: the MSO and its signer are valid.
        now: 1_601_559_002 + 86_400,
        ..expected(18)
    };
    assert_eq!(
        verify_device_response(
            &bytes,
            &at,
            &KindAnchors::single(Kind::MDL, anchors.clone())
        ),
        Err(PresentationError::DeviceMacUnsupported)
    );
    assert_eq!(
        verify_device_response(&bytes, &at, &KindAnchors::single(Kind::EUDI_PID, anchors)),
        Err(PresentationError::WrongDocType(
            "org.iso.18013.5.1.mDL".into()
        ))
    );
}
