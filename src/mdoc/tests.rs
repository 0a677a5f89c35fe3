//! End-to-end rules of docs/presentations.md#what-is-checked on presentations minted by `testkit`, one test per
//! rule.

use std::sync::OnceLock;

use ciborium::Value;

use super::testkit::{self, expected, Mint, Pki, RESPONSE_URI};
use super::*;

pub(super) fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(Pki::fixed)
}

/// The age the presentation proved, or why it is refused.
fn verify(mint: &Mint, min_age: u8) -> Result<u8, PresentationError> {
    verify_vp_token(&mint.vp_token(pki()), &expected(min_age), &pki().anchors()).map(|p| p.age_over)
}

#[test]
fn a_valid_presentation_is_accepted_and_names_its_trust_anchor() {
    assert_eq!(verify(&Mint::default(), 18), Ok(18));
    let proof = verify_vp_token(
        &Mint::default().vp_token(pki()),
        &expected(18),
        &pki().anchors(),
    )
    .unwrap();
    let ca: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&pki().ca_der).into();
    assert_eq!(proof.issuer_anchor, ca, "the SHA-256 of the CA's DER");
}

#[test]
fn x5chain_may_be_an_array_whose_first_element_is_the_signer() {
    let mint = Mint {
        x5chain_as_array: true,
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Ok(18));
}

#[test]
fn padded_base64url_is_accepted() {
    // A text item one byte longer each time makes the response length take every
    // residue mod 3, so some encodings end in padding.
    let mut padded_seen = false;
    for len in 0..3 {
        let mut mint = Mint::default();
        mint.items
            .push(("pad".into(), Value::Text("x".repeat(len))));
        use base64::Engine;
        let padded = base64::engine::general_purpose::URL_SAFE.encode(mint.device_response(pki()));
        padded_seen |= padded.ends_with('=');
        let token = serde_json::json!({ "proof_of_age": [padded] }).to_string();
        assert_eq!(
            verify_vp_token(&token, &expected(18), &pki().anchors()).map(|p| p.age_over),
            Ok(18)
        );
    }
    assert!(padded_seen);
}

#[test]
fn nearest_higher_age_claim_proves_a_lower_minimum() {
    let mint = Mint {
        items: vec![("age_over_21".into(), Value::Bool(true))],
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Ok(21));
    assert_eq!(
        verify(&mint, 25),
        Err(PresentationError::AgeClaimMissing(25))
    );
}

#[test]
fn age_claim_false_is_refused() {
    let mint = Mint {
        items: vec![("age_over_18".into(), Value::Bool(false))],
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::AgeClaimFalse));
}

#[test]
fn age_claim_missing_is_refused() {
    let mint = Mint {
        items: vec![("age_over_16".into(), Value::Bool(true))],
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::AgeClaimMissing(18))
    );
}

#[test]
fn tampered_value_is_a_digest_mismatch() {
    let mint = Mint {
        items: vec![("age_over_18".into(), Value::Bool(false))],
        disclosed_values: Some(vec![Value::Bool(true)]),
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::DigestMismatch));
}

#[test]
fn wrong_nonce_is_an_invalid_device_signature() {
    let mint = Mint {
        nonce: "another-nonce".into(),
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::DeviceSignatureInvalid)
    );
}

#[test]
fn wrong_client_id_or_response_uri_is_an_invalid_device_signature() {
    // The response_uri without the "redirect_uri:" prefix is not the client_id.
    let mint = Mint {
        client_id: RESPONSE_URI.into(),
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::DeviceSignatureInvalid)
    );
    let mint = Mint {
        response_uri: "https://evil.example/r".into(),
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::DeviceSignatureInvalid)
    );
}

#[test]
fn device_mac_is_not_supported() {
    let mint = Mint {
        device_mac: true,
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::DeviceMacUnsupported)
    );
}

#[test]
fn untrusted_ca_is_refused() {
    let other = Pki::fixed();
    let token = Mint::default().vp_token(&other);
    assert_eq!(
        verify_vp_token(&token, &expected(18), &pki().anchors()),
        Err(PresentationError::UntrustedIssuer)
    );
}

#[test]
fn document_signer_itself_may_be_the_trust_anchor() {
    let anchors = TrustAnchors::from_pem(&pki().ds_cert_pem).expect("anchors");
    let token = Mint::default().vp_token(pki());
    assert_eq!(
        verify_vp_token(
            &token,
            &expected(18),
            &KindAnchors::single(Kind::EU_AV, anchors)
        )
        .map(|p| p.age_over),
        Ok(18)
    );
}

#[test]
fn p384_ca_signing_with_sha384_is_trusted() {
    let pki = Pki::with(&rcgen::PKCS_ECDSA_P384_SHA384, (2020, 2040), (2024, 2027));
    let token = Mint::default().vp_token(&pki);
    assert_eq!(
        verify_vp_token(&token, &expected(18), &pki.anchors()).map(|p| p.age_over),
        Ok(18)
    );
}

#[test]
fn expired_or_future_certificates_are_refused_naming_which() {
    use PresentationError::{CertificateExpired, CertificateNotYetValid};
    let p256 = &rcgen::PKCS_ECDSA_P256_SHA256;
    let cases = [
        (
            Pki::with(p256, (2020, 2040), (2020, 2025)),
            CertificateExpired(CertRole::DocumentSigner),
        ),
        (
            Pki::with(p256, (2020, 2040), (2026, 2027)),
            CertificateNotYetValid(CertRole::DocumentSigner),
        ),
        (
            Pki::with(p256, (2020, 2025), (2024, 2027)),
            CertificateExpired(CertRole::TrustAnchor),
        ),
        (
            Pki::with(p256, (2026, 2040), (2024, 2027)),
            CertificateNotYetValid(CertRole::TrustAnchor),
        ),
    ];
    for (pki, error) in cases {
        let token = Mint::default().vp_token(&pki);
        assert_eq!(
            verify_vp_token(&token, &expected(18), &pki.anchors()),
            Err(error)
        );
    }
    assert_eq!(
        CertificateExpired(CertRole::TrustAnchor).to_string(),
        "trust anchor certificate has expired"
    );
}

#[test]
fn expired_or_future_mso_is_refused() {
    let mint = Mint {
        valid_until: "2025-05-31T23:59:59.999Z".into(),
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::MsoExpired));
    let mint = Mint {
        valid_from: "2025-06-01T02:00:01+02:00".into(),
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::MsoNotYetValid));
    // Exactly at the bounds is valid.
    let mint = Mint {
        valid_from: "2025-06-01T00:00:00Z".into(),
        valid_until: "2025-06-01T00:00:00Z".into(),
        ..Mint::default()
    };
    assert!(verify(&mint, 18).is_ok());
}

#[test]
fn nonzero_status_is_refused() {
    let mint = Mint {
        status: 10,
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::StatusNotZero(10)));
}

#[test]
fn wrong_doc_types_are_refused() {
    let mint = Mint {
        doc_type: "org.example.passport.1".into(),
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::WrongDocType(
            "org.example.passport.1".into()
        ))
    );
    let mint = Mint {
        mso_doc_type: "org.iso.18013.5.1.mDL".into(),
        ..Mint::default()
    };
    assert_eq!(verify(&mint, 18), Err(PresentationError::WrongMsoDocType));
    let mint = Mint {
        digest_alg: "SHA-512".into(),
        ..Mint::default()
    };
    assert_eq!(
        verify(&mint, 18),
        Err(PresentationError::UnsupportedDigestAlgorithm)
    );
}

/// The DC API's entry point: the DeviceResponse bytes and the transport's transcript.
#[test]
fn a_device_response_is_checked_against_the_transcript_it_is_given() {
    let bytes = Mint::default().device_response(pki());
    let redirect = session_transcript(testkit::CLIENT_ID, testkit::NONCE, RESPONSE_URI);
    fn at(transcript: &[u8]) -> Expected<'_> {
        Expected {
            session_transcript: transcript,
            ..expected(18)
        }
    }
    assert_eq!(
        verify_device_response(&bytes, &at(&redirect), &pki().anchors()).map(|p| p.age_over),
        Ok(18)
    );
    let other = session_transcript(testkit::CLIENT_ID, "another nonce", RESPONSE_URI);
    assert_eq!(
        verify_device_response(&bytes, &at(&other), &pki().anchors()),
        Err(PresentationError::DeviceSignatureInvalid)
    );
    assert_eq!(
        verify_device_response(&vec![0; 48 * 1024 + 1], &at(&redirect), &pki().anchors()),
        Err(PresentationError::TooLarge)
    );
}
