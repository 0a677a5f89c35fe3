//! VICAL rules (docs/trust.md#where-trust-anchors-come-from): what a signed list admits, and every way it is refused.

use std::sync::OnceLock;

use ciborium::Value;

use super::testkit::{expected, Mint, Pki, NOW};
use super::vical::{mdl_anchors, ChainCert, VicalAnchors, VicalError as E, MDL_DOC_TYPE};
use super::{verify_vp_token, AnchorError, KindAnchors};
use crate::kind::Kind;
use crate::testkit::{years, PkiSpec, Vical, VicalEntry as Entry, VicalPki, X5chain};

const PID: &str = "eu.europa.ec.eudi.pid.1";

pub(super) fn pki() -> &'static VicalPki {
    static PKI: OnceLock<VicalPki> = OnceLock::new();
    PKI.get_or_init(VicalPki::new)
}

/// Three IACA roots (test issuers' CAs), made once.
pub(super) fn iacas() -> &'static [Pki; 3] {
    static IACAS: OnceLock<[Pki; 3]> = OnceLock::new();
    IACAS.get_or_init(|| [Pki::fixed(), Pki::fixed(), Pki::fixed()])
}

fn check(vical: &Vical, pki: &VicalPki) -> Result<VicalAnchors, E> {
    mdl_anchors(&vical.bytes(pki), &pki.anchors(), NOW)
}

pub(super) fn one_mdl_entry() -> Vical {
    Vical::new(vec![Entry::mdl(&iacas()[0].ca_der)])
}

#[test]
fn a_valid_vical_yields_exactly_the_mdl_admitting_certificates() {
    let [a, b, c] = iacas();
    let vical = Vical::new(vec![
        Entry::mdl(&a.ca_der),
        Entry::with(&b.ca_der, None),
        Entry::with(&c.ca_der, Some(&[PID])),
        Entry::with(&c.ca_der, Some(&[PID, MDL_DOC_TYPE])),
    ]);
    let got = check(&vical, pki()).expect("valid");
    assert_eq!(got.provider, "Test VICAL Provider");
    assert_eq!(got.date, 1_746_100_800); // 2025-05-01T12:00:00Z
    assert_eq!(got.issue_id, Some(42));
    assert_eq!(got.next_update, Some(1_748_779_200));
    assert_eq!(
        got.certificates,
        vec![a.ca_der.clone(), b.ca_der.clone(), c.ca_der.clone()]
    );
    assert_eq!((got.skipped_doc_type, got.skipped_unsupported_key), (1, 0));

    // The admitted roots are anchors a presentation chains to.
    let anchors = got.trust_anchors().expect("anchors");
    assert_eq!(anchors.len(), 3);
    let token = Mint::of_kind(Kind::MDL).vp_token(a);
    let mdl = KindAnchors::single(Kind::MDL, anchors);
    assert!(verify_vp_token(&token, &expected(18), &mdl).is_ok());
}

#[test]
fn an_entry_without_a_doc_type_list_is_admitted() {
    let vical = Vical::new(vec![Entry::with(&iacas()[1].ca_der, None)]);
    let got = check(&vical, pki()).expect("valid");
    assert_eq!(got.certificates, vec![iacas()[1].ca_der.clone()]);
}

#[test]
fn an_entry_for_another_doc_type_is_skipped() {
    let [a, b, _] = iacas();
    let vical = Vical::new(vec![
        Entry::with(&a.ca_der, Some(&[PID])),
        Entry::mdl(&b.ca_der),
    ]);
    let got = check(&vical, pki()).expect("valid");
    assert_eq!(got.certificates, vec![b.ca_der.clone()]);
    assert_eq!(got.skipped_doc_type, 1);
    // A presentation under the skipped root is not trusted.
    let anchors = got.trust_anchors().expect("anchors");
    let token = Mint::of_kind(Kind::MDL).vp_token(a);
    let mdl = KindAnchors::single(Kind::MDL, anchors);
    assert_eq!(
        verify_vp_token(&token, &expected(18), &mdl),
        Err(super::PresentationError::UntrustedIssuer)
    );
}

#[test]
fn a_vical_without_an_mdl_entry_yields_zero_anchors_not_an_error() {
    for entries in [
        vec![Entry::with(&iacas()[0].ca_der, Some(&[PID]))],
        vec![Entry::with(&iacas()[0].ca_der, Some(&[]))],
        vec![],
    ] {
        let got = check(&Vical::new(entries), pki()).expect("valid");
        assert!(got.certificates.is_empty());
        assert!(matches!(got.trust_anchors(), Err(AnchorError::Empty)));
    }
}

#[test]
fn an_entry_whose_key_cannot_be_used_is_skipped_and_counted() {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("ed25519");
    let ed = rcgen::CertificateParams::new(Vec::<String>::new())
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    let vical = Vical::new(vec![Entry::mdl(ed.der()), Entry::mdl(&iacas()[0].ca_der)]);
    let got = check(&vical, pki()).expect("valid");
    assert_eq!(got.certificates, vec![iacas()[0].ca_der.clone()]);
    assert_eq!(got.skipped_unsupported_key, 1);
}

#[test]
fn every_form_of_sign1_and_x5chain_is_accepted() {
    for (x5chain, tagged, with_anchor) in [
        (X5chain::Bstr, false, false),
        (X5chain::Array, true, false),
        (X5chain::Protected, false, false),
        (X5chain::Protected, true, true),
        (X5chain::Array, false, true),
    ] {
        let vical = Vical {
            x5chain,
            tagged,
            chain_includes_anchor: with_anchor,
            ..one_mdl_entry()
        };
        assert_eq!(check(&vical, pki()).map(|g| g.certificates.len()), Ok(1));
    }
}

#[test]
fn a_chain_through_an_intermediate_is_accepted() {
    let pki = VicalPki::with(PkiSpec {
        intermediate: true,
        ..PkiSpec::default()
    });
    for with_anchor in [false, true] {
        let vical = Vical {
            chain_includes_anchor: with_anchor,
            ..one_mdl_entry()
        };
        assert_eq!(check(&vical, &pki).map(|g| g.certificates.len()), Ok(1));
    }
    // Under another anchor, the same chain does not hold.
    let bytes = one_mdl_entry().bytes(&pki);
    let other = VicalPki::with(PkiSpec::default());
    assert_eq!(
        mdl_anchors(&bytes, &other.anchors(), NOW).err(),
        Some(E::UntrustedSigner)
    );
}

#[test]
fn an_intermediate_that_is_not_a_ca_is_refused() {
    let pki = VicalPki::with(PkiSpec {
        intermediate: true,
        intermediate_is_ca: false,
        ..PkiSpec::default()
    });
    assert_eq!(
        check(&one_mdl_entry(), &pki).err(),
        Some(E::IntermediateNotCa(ChainCert::Intermediate(1)))
    );
}

#[test]
fn es384_is_accepted_and_the_algorithm_must_match_the_key() {
    let p384 = VicalPki::with(PkiSpec {
        signer_alg: &rcgen::PKCS_ECDSA_P384_SHA384,
        ..PkiSpec::default()
    });
    assert_eq!(
        check(&one_mdl_entry(), &p384).map(|g| g.certificates.len()),
        Ok(1)
    );
    let es256_header = Vical {
        alg: Some(-7),
        ..one_mdl_entry()
    };
    assert_eq!(
        check(&es256_header, &p384).err(),
        Some(E::AlgorithmKeyMismatch)
    );
    let es384_header = Vical {
        alg: Some(-35),
        ..one_mdl_entry()
    };
    assert_eq!(
        check(&es384_header, pki()).err(),
        Some(E::AlgorithmKeyMismatch)
    );
}

#[test]
fn other_signature_algorithms_are_refused() {
    for alg in [-8, -36, -37, 0] {
        let vical = Vical {
            alg: Some(alg),
            ..one_mdl_entry()
        };
        assert_eq!(
            check(&vical, pki()).err(),
            Some(E::UnsupportedAlgorithm(Some(alg)))
        );
    }
}

#[test]
fn a_tampered_payload_is_refused() {
    let vical = Vical {
        tamper_payload: true,
        ..one_mdl_entry()
    };
    assert_eq!(check(&vical, pki()).err(), Some(E::SignatureInvalid));
}

#[test]
fn a_bad_signature_is_refused() {
    let vical = Vical {
        bad_signature: true,
        ..one_mdl_entry()
    };
    assert_eq!(check(&vical, pki()).err(), Some(E::SignatureInvalid));
}

#[test]
fn a_signer_not_under_the_anchor_is_refused() {
    let rogue = VicalPki::new();
    let bytes = one_mdl_entry().bytes(&rogue);
    assert_eq!(
        mdl_anchors(&bytes, &pki().anchors(), NOW).err(),
        Some(E::UntrustedSigner)
    );
    // Nor does the rogue's own root sent along in x5chain make it trusted.
    let bytes = Vical {
        chain_includes_anchor: true,
        ..one_mdl_entry()
    }
    .bytes(&rogue);
    assert_eq!(
        mdl_anchors(&bytes, &pki().anchors(), NOW).err(),
        Some(E::UntrustedSigner)
    );
}

#[test]
fn a_vical_without_x5chain_is_refused() {
    let vical = Vical {
        x5chain: X5chain::Absent,
        ..one_mdl_entry()
    };
    assert_eq!(check(&vical, pki()).err(), Some(E::MissingX5chain));
}

#[test]
fn an_expired_or_not_yet_valid_signer_or_anchor_is_refused() {
    let cases = [
        (
            (2020, 2040),
            (2020, 2024),
            E::CertificateExpired(ChainCert::Signer),
        ),
        (
            (2020, 2040),
            (2026, 2027),
            E::CertificateNotYetValid(ChainCert::Signer),
        ),
        (
            (2020, 2024),
            (2024, 2027),
            E::CertificateExpired(ChainCert::Anchor),
        ),
    ];
    for (anchor_years, signer_years, error) in cases {
        let pki = VicalPki::with(PkiSpec {
            anchor_validity: years(anchor_years),
            signer_validity: years(signer_years),
            ..PkiSpec::default()
        });
        assert_eq!(check(&one_mdl_entry(), &pki).err(), Some(error));
    }
}

#[test]
fn a_detached_payload_is_refused() {
    let vical = Vical {
        detached: true,
        ..one_mdl_entry()
    };
    assert_eq!(check(&vical, pki()).err(), Some(E::DetachedPayload));
}

fn edited(edit: fn(&mut Vec<(Value, Value)>)) -> Result<VicalAnchors, E> {
    check(
        &Vical {
            edit,
            ..one_mdl_entry()
        },
        pki(),
    )
}

fn malformed(field: &str) -> Option<E> {
    Some(E::MalformedPayload(field.into()))
}

#[test]
fn a_malformed_payload_is_refused_naming_the_field() {
    assert_eq!(
        edited(|m| m.retain(|(k, _)| k.as_text() != Some("certificateInfos"))).err(),
        Some(E::NoCertificateInfos)
    );
    assert_eq!(
        edited(|m| m.retain(|(k, _)| k.as_text() != Some("vicalProvider"))).err(),
        malformed("vicalProvider")
    );
    assert_eq!(edited(|m| m[2].1 = Value::from(5)).err(), malformed("date"));
    assert_eq!(
        edited(|m| m[3].1 = Value::from(-1)).err(),
        malformed("vicalIssueID")
    );
    assert_eq!(
        edited(|m| m[5].1 = Value::Map(vec![])).err(),
        malformed("certificateInfos")
    );
    assert_eq!(
        edited(|m| m.push(m[1].clone())).err(),
        malformed("vicalProvider")
    );
    // Signed data: one bad entry refuses the whole list.
    assert_eq!(
        edited(|m| if let Value::Array(a) = &mut m[5].1 {
            a[0] = Value::from(1)
        })
        .err(),
        malformed("certificateInfos[0].(not a map)")
    );
    assert_eq!(
        edited(|m| if let Value::Array(a) = &mut m[5].1 {
            if let Value::Map(e) = &mut a[0] {
                e[0].1 = Value::Bytes(vec![0x30, 0x03, 1, 2, 3])
            }
        })
        .err(),
        malformed("certificateInfos[0].certificate")
    );
    assert_eq!(
        edited(|m| if let Value::Array(a) = &mut m[5].1 {
            if let Value::Map(e) = &mut a[0] {
                e[3].1 = Value::Text(MDL_DOC_TYPE.into())
            }
        })
        .err(),
        malformed("certificateInfos[0].docType")
    );
    // An untagged date is read too.
    assert!(edited(|m| m[2].1 = Value::Text("2025-05-01T12:00:00Z".into())).is_ok());
}

#[test]
fn garbage_is_refused_with_a_one_line_reason() {
    let anchors = pki().anchors();
    for bytes in [
        &b""[..],
        b"\x00",
        b"-----BEGIN CERTIFICATE-----",
        b"\x84\x40\xa0\xf6\x40",
    ] {
        let e = mdl_anchors(bytes, &anchors, NOW).expect_err("refused");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    assert_eq!(
        mdl_anchors(&vec![0; super::vical::MAX_VICAL_BYTES + 1], &anchors, NOW).err(),
        Some(E::TooLarge)
    );
}
