//! No input makes the verifier panic: arbitrary bytes, arbitrary text, and mutations
//! of a valid presentation.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::testkit::{expected, vp_token_of, Mint};
use super::tests::pki;
use super::*;

/// A valid presentation, minted once for the mutation property.
fn valid_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| Mint::default().device_response(pki()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_device_response_bytes_are_refused_without_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048)
    ) {
        let token = vp_token_of(&bytes);
        prop_assert!(verify_vp_token(&token, &expected(18), &pki().anchors()).is_err());
    }

    #[test]
    fn arbitrary_vp_token_text_is_refused_without_panic(token in ".{0,512}") {
        prop_assert!(verify_vp_token(&token, &expected(18), &pki().anchors()).is_err());
    }

    /// Flipping bytes of a valid presentation never panics; whatever the verifier then
    /// accepts must still be a true age_over_18 (flips in unsigned fields such as
    /// `version` can be harmless).
    #[test]
    fn mutated_presentations_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4)
    ) {
        let mut bytes = valid_bytes().to_vec();
        for (at, mask) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        let token = vp_token_of(&bytes);
        if let Ok(proof) = verify_vp_token(&token, &expected(18), &pki().anchors()) {
            prop_assert_eq!(proof.age_over, 18);
        }
    }

    #[test]
    fn verification_is_bound_to_the_clock(now in any::<i64>()) {
        let e = Expected { now, ..expected(18) };
        let ok = verify_vp_token(&Mint::default().vp_token(pki()), &e, &pki().anchors()).is_ok();
        // MSO 2025-01-01..2025-12-31 lies within both certificates' validity.
        prop_assert_eq!(ok, (1_735_689_600..=1_767_139_200).contains(&now));
    }
}
