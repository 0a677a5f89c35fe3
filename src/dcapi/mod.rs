//! The W3C Digital Credentials API channel (docs/dc-api.md): the cryptography and the
//! structures, pure — no I/O, no clock (randomness comes in as an RNG or as bytes), no
//! panic on any input. The HTTP layer stores, serves and routes; this module builds and
//! opens.
//!
//! Per live request the server keeps a [`ResponseKey`] (stored as its 32-byte scalar,
//! [`ResponseKey::to_bytes`] / [`ResponseKey::from_bytes`]), the nonce of the link (docs/wallets.md#the-wallet-link) and
//! ≥ 16 random bytes for Annex C's `encryptionInfo`. Then:
//!
//! ```text
//! page     request::build(&RequestInputs { origin, nonce, dcql_query, client_metadata,
//!                  items, key, encryption_nonce }, signer) -> DcApiRequests
//!          .digital() is the page's {"requests": [R1, R2]}; .encryption_info is R2's
//!          (request::encryption_info(key, nonce) gives the same text again)
//! answer   protocol "openid4vp-v1-unsigned" / "openid4vp-v1-signed":
//!              response::openid4vp(&data, &key) -> OpenId4VpAnswer { credential_id,
//!                  device_response }, checked against
//!              transcript::openid4vp(origin, nonce, &key.thumbprint())
//!          protocol "org-iso-mdoc":
//!              let st = transcript::annex_c(&encryption_info, origin);
//!              response::annex_c(&data, &key, &st) -> DeviceResponse, checked against st
//! ```
//!
//! Signed mode: [`RequestSigner::new`] (key + chain DER, leaf first; checks the key is
//! the leaf's; [`signer_from_pem`] reads them from their PEM files) makes R1 `openid4vp-v1-signed` (JWS ES256 over R1's data plus
//! `client_id` `x509_hash:…` and `expected_origins`) and gives each docRequest of R2 a
//! `readerAuth` over the Annex C SessionTranscript.
//!
//! Modules: [`jwk`] the key pair and its JWK, thumbprint and COSE_Key; [`jwe`] ECDH-ES +
//! A128GCM; [`hpke`] RFC 9180 base mode, P-256/HKDF-SHA256/AES-128-GCM; [`transcript`]
//! both SessionTranscripts; [`request`] R1 and R2; [`response`] both answers;
//! [`signer`] the signing identity and [`pem`] its files. Every error enum has one variant per fault, with a
//! short message fit to show the visitor.

pub mod by_reference;
pub mod hpke;
pub mod jwe;
pub mod jwk;
pub mod pem;
pub mod request;
pub mod response;
pub mod signer;
pub mod transcript;

#[cfg(test)]
mod proptests;

pub use jwk::{KeyError, ResponseKey};
pub use pem::{signer_from_pem, SignerFileError};
pub use request::{DcApiRequests, ItemRequest, RequestInputs, ZkAsk, ZK_SYSTEM};
pub use response::{OpenId4VpAnswer, ResponseError};
pub use signer::{RequestSigner, SignerError};

pub(crate) use crate::jose::b64url;

/// Largest wallet answer processed (the `response` text, and any ciphertext), checked
/// before decoding: as much as the DC API answer route's body may hold, since a zero-knowledge
/// DeviceResponse (docs/zk.md#zero-knowledge-proofs) is 320 KB to about 1 MB; a
/// plain one is a few KiB and held to its own limit once opened.
pub const MAX_RESPONSE_LEN: usize = 2 * 1024 * 1024;

/// base64url, padding optional (some wallets pad), canonical trailing bits.
pub(crate) fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    crate::jose::b64url_decode_lenient(text)
}

#[cfg(test)]
pub(crate) mod test_util {
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    pub(crate) fn b64(s: &str) -> Vec<u8> {
        super::b64url_decode(s).expect("base64url")
    }
}
