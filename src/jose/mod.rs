//! JOSE, once for the whole crate: compact JWS (RFC 7515) signing and verification,
//! EC P-256 JWKs (RFC 7517/7518) in and out, and RFC 7638 thumbprints. Receipts
//! (`receipt/`), the Digital Credentials API (`dcapi/`: the response key's JWK, JWE's
//! `epk`, the signed request object) and trust lists' JWS all go through here. Pure: no
//! I/O, no clock, no panic on any input.
//!
//! Verification takes the set of algorithms the caller accepts ([`Alg`]) and returns
//! the protected header (with `kid` or `x5c`) and the payload, so each caller keeps its
//! own rule for which key may sign: receipts look the `kid` up in a key set, a trust
//! list checks its `x5c` chain. Adding an algorithm is a variant of [`Alg`] and of
//! [`PublicKey`], and one arm in [`jws::Jws::verify`].

pub mod jwk;
pub mod jws;

pub use jwk::{thumbprint, Jwk, JwkError};
pub use jws::{sign_es256, Alg, Jws, JwsError, PublicKey, Verified};

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// base64url without padding, as JOSE writes it (RFC 7515 section 2).
pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// base64url with padding optional (some wallets pad a JWK's members) and canonical
/// trailing bits. A JWS's own parts are decoded strictly instead (see [`jws`]).
pub(crate) const B64URL_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

pub(crate) fn b64url_decode_lenient(text: &str) -> Option<Vec<u8>> {
    B64URL_LENIENT.decode(text).ok()
}
