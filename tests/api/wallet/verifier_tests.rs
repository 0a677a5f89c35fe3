//! The wallet against the verifier `agegate::mdoc`.

use super::testkit::{sample_request, T};
use super::{Presentation, TestIssuer, DAY};
use ciborium::Value;

/// The wallet against the verifier `agegate::mdoc`: the default presentation passes and
/// each knob fails with the variant the standard calls for.
#[test]
fn wallet_and_verifier_agree() {
    use agegate::mdoc::{
        verify_vp_token, CertRole, Expected, PresentationError as E, TrustAnchors,
    };
    let issuer = TestIssuer::new(T);
    let anchors = agegate::mdoc::KindAnchors::single(
        agegate::domain::Kind::EU_AV,
        TrustAnchors::from_pem(&issuer.ca_pem).unwrap(),
    );
    let req = sample_request();
    let transcript =
        agegate::mdoc::session_transcript(&req.client_id, &req.nonce, &req.response_uri);
    let verify = |issuer: &TestIssuer, p: &Presentation, min_age: u8, now: i64| {
        let expected = Expected {
            session_transcript: &transcript,
            min_age,
            now,
        };
        verify_vp_token(&issuer.vp_token(&req, p), &expected, &anchors).map(|p| p.age_over)
    };
    let p = Presentation::for_request(&req, T);
    let ok = |age_over: u8| Ok(age_over);
    let rogue = TestIssuer::new(T);

    let cases: Vec<(&str, &TestIssuer, Presentation, Result<u8, E>)> = vec![
        ("default", &issuer, p.clone(), ok(18)),
        (
            "x5chain as an array",
            &issuer,
            Presentation {
                x5chain_array: true,
                ..p.clone()
            },
            ok(18),
        ),
        (
            "x5chain with its CA",
            &issuer,
            Presentation {
                x5chain_extra: vec![issuer.ca_der.clone()],
                ..p.clone()
            },
            ok(18),
        ),
        (
            "no undisclosed digests",
            &issuer,
            Presentation {
                undisclosed: 0,
                ..p.clone()
            },
            ok(18),
        ),
        (
            "nearest: age_over_21",
            &issuer,
            p.clone().claim("age_over_21", true),
            ok(21),
        ),
        (
            "several claims",
            &issuer,
            Presentation {
                claims: vec![
                    ("age_over_16".into(), Value::Bool(true)),
                    ("age_over_18".into(), Value::Bool(true)),
                    ("age_over_65".into(), Value::Bool(false)),
                ],
                ..p.clone()
            },
            ok(18),
        ),
        (
            "age only device-signed",
            &issuer,
            Presentation {
                claims: vec![],
                device_claims: vec![("age_over_18".into(), Value::Bool(true))],
                ..p.clone()
            },
            Err(E::AgeClaimMissing(18)),
        ),
        (
            "device-signed items beside the issuer-signed claim",
            &issuer,
            Presentation {
                device_claims: vec![("age_over_18".into(), Value::Bool(false))],
                ..p.clone()
            },
            ok(18),
        ),
        (
            "status",
            &issuer,
            Presentation {
                status: 10,
                ..p.clone()
            },
            Err(E::StatusNotZero(10)),
        ),
        (
            "document docType",
            &issuer,
            Presentation {
                doc_type: "org.iso.18013.5.1.mDL".into(),
                ..p.clone()
            },
            Err(E::WrongDocType("org.iso.18013.5.1.mDL".into())),
        ),
        (
            "MSO docType",
            &issuer,
            Presentation {
                mso_doc_type: "org.iso.18013.5.1.mDL".into(),
                ..p.clone()
            },
            Err(E::WrongMsoDocType),
        ),
        (
            "other namespace",
            &issuer,
            Presentation {
                namespace: "org.iso.18013.5.1".into(),
                ..p.clone()
            },
            Err(E::AgeClaimMissing(18)),
        ),
        (
            "claim false",
            &issuer,
            p.clone().claim("age_over_18", false),
            Err(E::AgeClaimFalse),
        ),
        (
            "claim too young",
            &issuer,
            p.clone().claim("age_over_16", true),
            Err(E::AgeClaimMissing(18)),
        ),
        (
            "claim not a bool",
            &issuer,
            p.clone().claim("age_over_18", "true"),
            Err(E::AgeClaimFalse),
        ),
        (
            "MSO expired",
            &issuer,
            Presentation {
                valid_until: T - 1,
                ..p.clone()
            },
            Err(E::MsoExpired),
        ),
        (
            "MSO not yet valid",
            &issuer,
            Presentation {
                valid_from: T + 1,
                ..p.clone()
            },
            Err(E::MsoNotYetValid),
        ),
        (
            "nonce",
            &issuer,
            Presentation {
                nonce: Some("other".into()),
                ..p.clone()
            },
            Err(E::DeviceSignatureInvalid),
        ),
        (
            "client_id",
            &issuer,
            Presentation {
                client_id: Some(req.response_uri.clone()),
                ..p.clone()
            },
            Err(E::DeviceSignatureInvalid),
        ),
        (
            "response_uri",
            &issuer,
            Presentation {
                response_uri: Some(format!("{}/", req.response_uri)),
                ..p.clone()
            },
            Err(E::DeviceSignatureInvalid),
        ),
        (
            "tamper",
            &issuer,
            Presentation {
                tamper_value: true,
                ..p.clone()
            },
            Err(E::DigestMismatch),
        ),
        (
            "tamper false into true",
            &issuer,
            Presentation {
                tamper_value: true,
                ..p.clone().claim("age_over_18", false)
            },
            Err(E::DigestMismatch),
        ),
        (
            "omit digest",
            &issuer,
            Presentation {
                omit_digest: true,
                ..p.clone()
            },
            Err(E::DigestMissing),
        ),
        (
            "foreign device key",
            &issuer,
            Presentation {
                foreign_device_key: true,
                ..p.clone()
            },
            Err(E::DeviceSignatureInvalid),
        ),
        (
            "bad device signature",
            &issuer,
            Presentation {
                bad_device_signature: true,
                ..p.clone()
            },
            Err(E::DeviceSignatureInvalid),
        ),
        (
            "bad issuer signature",
            &issuer,
            Presentation {
                bad_issuer_signature: true,
                ..p.clone()
            },
            Err(E::IssuerSignatureInvalid),
        ),
        (
            "no x5chain",
            &issuer,
            Presentation {
                omit_x5chain: true,
                ..p.clone()
            },
            Err(E::MissingCertificate),
        ),
        (
            "issuer alg",
            &issuer,
            Presentation {
                issuer_alg: -35,
                ..p.clone()
            },
            Err(E::UnsupportedAlgorithm),
        ),
        (
            "device alg",
            &issuer,
            Presentation {
                device_alg: -8,
                ..p.clone()
            },
            Err(E::UnsupportedDeviceAlgorithm),
        ),
        (
            "digest algorithm",
            &issuer,
            Presentation {
                digest_algorithm: "SHA-512".into(),
                ..p.clone()
            },
            Err(E::UnsupportedDigestAlgorithm),
        ),
        (
            "replay with an attached stale payload",
            &issuer,
            Presentation {
                nonce: Some("stale".into()),
                attached_device_payload: true,
                ..p.clone()
            },
            Err(E::MalformedDeviceSignature("payload is not detached")),
        ),
        (
            "untrusted issuer",
            &rogue,
            p.clone(),
            Err(E::UntrustedIssuer),
        ),
        (
            "untrusted issuer bringing its own CA",
            &rogue,
            Presentation {
                x5chain_extra: vec![rogue.ca_der.clone()],
                ..p.clone()
            },
            Err(E::UntrustedIssuer),
        ),
    ];
    let mut failures = Vec::new();
    for (name, who, p, want) in &cases {
        let got = verify(who, p, 18, T);
        if &got != want {
            failures.push(format!("{name}: want {want:?}, got {got:?}"));
        }
    }

    let expired = issuer.with_signer_validity(T - 100 * DAY, T - 1);
    let early = issuer.with_signer_validity(T + 1, T + 100 * DAY);
    let long = issuer.with_signer_validity(T - DAY, T + 1000 * DAY);
    let later = T + 400 * DAY;
    for (name, got, want) in [
        (
            "DS expired",
            verify(&expired, &p, 18, T),
            Err(E::CertificateExpired(CertRole::DocumentSigner)),
        ),
        (
            "DS not yet valid",
            verify(&early, &p, 18, T),
            Err(E::CertificateNotYetValid(CertRole::DocumentSigner)),
        ),
        (
            "DS at its last second",
            verify(&expired, &p, 18, T - 1),
            ok(18),
        ),
        (
            "CA expired",
            verify(&long, &Presentation::for_request(&req, later), 18, later),
            Err(E::CertificateExpired(CertRole::TrustAnchor)),
        ),
        (
            "higher minimum",
            verify(&issuer, &p, 21, T),
            Err(E::AgeClaimMissing(21)),
        ),
        (
            "MSO at validUntil",
            verify(&issuer, &p, 18, p.valid_until),
            ok(18),
        ),
    ] {
        if got != want {
            failures.push(format!("{name}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// ISO/IEC 18013-5 section 9.1.2.5: the digest covers `IssuerSignedItemBytes` as sent. A
/// non-preferred (5-byte) bstr length header is still valid CBOR; a verifier that
/// re-wraps the item's content with the shortest header before hashing refuses it.
#[test]
fn wallet_verifier_hashes_items_as_received() {
    use agegate::mdoc::{verify_vp_token, Expected, TrustAnchors};
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let p = Presentation {
        long_item_header: true,
        ..Presentation::for_request(&req, T)
    };
    let raw = issuer.device_response_cbor(&req, &p);
    assert!(raw.windows(3).any(|w| w == [0xd8, 0x18, 0x5a]));
    let transcript =
        agegate::mdoc::session_transcript(&req.client_id, &req.nonce, &req.response_uri);
    let expected = Expected {
        session_transcript: &transcript,
        min_age: 18,
        now: T,
    };
    let anchors = agegate::mdoc::KindAnchors::single(
        agegate::domain::Kind::EU_AV,
        TrustAnchors::from_pem(&issuer.ca_pem).unwrap(),
    );
    assert_eq!(
        verify_vp_token(&issuer.vp_token(&req, &p), &expected, &anchors).map(|p| p.age_over),
        Ok(18)
    );
}
