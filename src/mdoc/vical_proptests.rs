//! A published VICAL as a vector, and no input makes the VICAL reader panic.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::testkit::NOW;
use super::vical::{mdl_anchors, ChainCert, VicalError as E};
use super::vical_tests::{iacas, one_mdl_entry, pki};

/// AAMVA's production VICAL, as isomdl's test data has it
/// (`spruceid/isomdl` `test/vical/aamva-vical-2025-11-18-1763491092481.cbor`, with the
/// AAMVA DTS Root CA `test/vical/aamva_ca_root.crt`). Not committed: AAMVA publishes it
/// under its own terms. Run with both paths set:
/// `AGEGATE_TEST_VICAL=… AGEGATE_TEST_VICAL_ANCHOR=… cargo test --lib aamva -- --ignored`
#[test]
#[ignore = "needs AAMVA's VICAL file, which is not redistributed"]
fn aamva_published_vical_verifies_under_the_aamva_root() {
    let vical = std::fs::read(std::env::var("AGEGATE_TEST_VICAL").expect("path")).expect("vical");
    let anchor = std::fs::read_to_string(std::env::var("AGEGATE_TEST_VICAL_ANCHOR").expect("path"))
        .expect("anchor");
    let anchors = super::TrustAnchors::from_pem(&anchor).expect("anchor");
    let jan_2025 = 1_735_689_600;
    let got = mdl_anchors(&vical, &anchors, jan_2025).expect("verifies");
    assert_eq!(got.provider, "AAMVA");
    assert_eq!(got.issue_id, Some(227_602));
    assert_eq!(got.certificates.len(), 14);
    assert_eq!((got.skipped_doc_type, got.skipped_unsupported_key), (0, 0));
    // The signer's certificate lapsed on 2026-04-18.
    assert_eq!(
        mdl_anchors(&vical, &anchors, 1_776_600_000).err(),
        Some(E::CertificateExpired(ChainCert::Signer))
    );
}

/// A valid VICAL, built once for the mutation property.
fn valid_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| one_mdl_entry().bytes(pki()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_are_refused_without_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048)
    ) {
        prop_assert!(mdl_anchors(&bytes, &pki().anchors(), NOW).is_err());
    }

    #[test]
    fn truncated_vicals_are_refused_without_panic(len in 0usize..2048) {
        let bytes = valid_bytes();
        let cut = &bytes[..len.min(bytes.len() - 1)];
        prop_assert!(mdl_anchors(cut, &pki().anchors(), NOW).is_err());
    }

    /// Flipping bytes never panics; whatever is still accepted admits what was signed.
    #[test]
    fn mutated_vicals_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4)
    ) {
        let mut bytes = valid_bytes().to_vec();
        for (at, mask) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        if let Ok(got) = mdl_anchors(&bytes, &pki().anchors(), NOW) {
            prop_assert_eq!(got.certificates, vec![iacas()[0].ca_der.clone()]);
        }
    }
}
