//! A test wallet that plays the EU Age Verification app (docs/wallets.md#the-wallet-link), by link and QR
//! code or through the browser's Digital Credentials API (docs/dc-api.md, [`dc_api`]).
//!
//! It mints a CA (the trust anchor), a document-signer certificate, a device key and a
//! Proof of Age mdoc (ISO/IEC 18013-5, doctype and namespace `eu.europa.ec.av.1`), reads an
//! OpenID4VP 1.0 authorization request URI, and answers it with a `vp_token` — a valid one
//! by default, or any of the wrong ones the knobs of [`Presentation`] describe.
//!
//! The mdocs, issuers and VICALs come from the crate's one test kit, `agegate::testkit`
//! (feature `testkit`); this module adds the wallet's side: reading requests, the DC API.

#![allow(dead_code)]

mod dc_answer;
mod dc_api;
mod dc_tests;
mod request;
mod testkit;
mod tests;
mod verifier_tests;
mod vical_tests;

use agegate::testkit::DAY;
pub use agegate::testkit::{
    cbor, mdl_vical, rfc3339, session_transcript, sha256, sig_structure, Presentation, TestIssuer,
    VicalEntry, VicalKnobs, VicalPublisher, AV_DOCTYPE, AV_NAMESPACE, GOOGLE_ID_DOCTYPE,
    MDL_DOCTYPE, MDL_NAMESPACE, PHOTO_ID_DOCTYPE, PHOTO_ID_DRAFT_DOCTYPE, PHOTO_ID_NAMESPACE,
    PID_DOCTYPE, PID_NAMESPACE,
};
pub use dc_answer::{
    annex_c_response, dc_annex_c_transcript, dc_openid4vp_transcript, hpke_data, jwe_data,
    jwe_for_jwk, jwk_thumbprint, DcAnswer, DcWallet,
};
pub use dc_api::{get as cbor_get, int_key as cbor_int_key, untag24, DcApiPage};
pub use request::{
    credential_queries, html_unescape, jws_payload, AuthorizationRequest, CredentialQuery,
};

impl agegate::testkit::Request for AuthorizationRequest {
    fn client_id(&self) -> &str {
        &self.client_id
    }
    fn nonce(&self) -> &str {
        &self.nonce
    }
    fn response_uri(&self) -> &str {
        &self.response_uri
    }
    fn state(&self) -> &str {
        &self.state
    }
    fn id_for(&self, doc_type: &str) -> String {
        AuthorizationRequest::id_for(self, doc_type)
    }
    fn requested_claim(&self) -> &str {
        &self.requested_claim
    }
}
