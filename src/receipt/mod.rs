//! Verification receipts (docs/evidence.md#receipts): a compact JWS (ES256) per verification, saying
//! what was proven and how, with no personal data in it, and the public keys that check
//! it. Pure: no I/O, no clock (the caller passes the time and the keys).
//!
//! A receipt is signed in the same transaction as the verification it records, with
//! the current receipt key as the database holds it, so every node signs with the same
//! key and a verified invite never exists without its receipt.

mod jws;
#[cfg(test)]
mod tests;

pub use jws::{ReceiptError, ReceiptKey, VerifyingKeys};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// How long a server reuses the key set it served (`/.well-known/jwks.json`), so the
/// public route costs no query per hit.
pub const KEY_SET_FRESH_FOR: Duration = Duration::from_secs(5);

/// How long after a rotated key is published servers start signing with it: longer than
/// any server reuses a key set fetched before it, so a receipt handed out always verifies
/// against the key set fetched after it (docs/evidence.md#receipt-keys). The second more
/// covers the time between a node's clock and the database's.
pub const SIGNS_AFTER: Duration = Duration::from_secs(6);

const _: () = assert!(SIGNS_AFTER.as_millis() > KEY_SET_FRESH_FOR.as_millis());

/// The JWS `typ` of a receipt.
pub const TYP: &str = "agegate-receipt+jwt";

/// How the presentation reached agegate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transport {
    /// OpenID4VP by redirect: the gateway's link or QR code.
    #[serde(rename = "openid4vp")]
    OpenId4Vp,
    /// The browser's Digital Credentials API.
    #[serde(rename = "dc-api")]
    DcApi,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::OpenId4Vp => "openid4vp",
            Transport::DcApi => "dc-api",
        }
    }
}

/// What a wallet verification proved, beside the invite: everything a receipt says of
/// the check itself. `None` for verifications agegate did not perform (sandbox, the
/// verification provider's report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presented {
    /// The credential's kind.
    pub kind: crate::domain::Kind,
    /// The docType presented (one of the kind's): the receipt's `docType`.
    pub doc_type: &'static str,
    /// SHA-256 of the DER of the trust anchor the issuer chained to.
    pub issuer_anchor: [u8; 32],
    pub transport: Transport,
    /// The live request's nonce (its text).
    pub nonce: String,
    /// The `circuit_hash` of the circuit a zero-knowledge proof was checked against;
    /// `None` for a plain presentation.
    pub zk_circuit: Option<String>,
    /// What was found of the credential's status (docs/credential-status.md).
    pub credential_status: crate::domain::CredentialStatus,
}

/// Everything a receipt records of a verification that the invite's row does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// `--public-url`: who issued the receipt.
    pub issuer: String,
    /// The minimum age the invite was checked against.
    pub min_age: u8,
    pub presented: Option<Presented>,
}

impl Evidence {
    /// The method a wallet answer with this evidence verifies by: its credential's kind.
    /// (Evidence without a presentation is never an answer's; it reads as `eu-av`, the
    /// one kind releases before more kinds (docs/kinds.md#credential-kinds) were known.)
    pub fn wallet_method(&self) -> crate::domain::VerifyMethod {
        let kind = self
            .presented
            .as_ref()
            .map_or(crate::domain::Kind::EU_AV, |p| p.kind);
        crate::domain::VerifyMethod::Wallet(kind)
    }
}

/// A receipt's payload, members in the documented order (docs/evidence.md#receipts); nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    pub iss: String,
    pub sub: String,
    #[serde(rename = "siteId")]
    pub site_id: String,
    #[serde(rename = "customId")]
    pub custom_id: Option<String>,
    pub iat: i64,
    pub method: String,
    #[serde(rename = "minAge")]
    pub min_age: u8,
    #[serde(rename = "docType")]
    pub doc_type: Option<String>,
    #[serde(rename = "issuerAnchor")]
    pub issuer_anchor: Option<String>,
    pub transport: Option<Transport>,
    #[serde(rename = "nonceHash")]
    pub nonce_hash: Option<String>,
    /// Only in the receipt of a zero-knowledge proof: its circuit's `circuit_hash`.
    #[serde(rename = "zkCircuit", default, skip_serializing_if = "Option::is_none")]
    pub zk_circuit: Option<String>,
    /// Only in the receipt of a wallet presentation: what was found of the credential's
    /// status (`valid`, `unknown`, `unchecked`, `none`).
    #[serde(
        rename = "credentialStatus",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub credential_status: Option<crate::domain::CredentialStatus>,
}

/// The facts of the invite a receipt names.
pub struct Verified<'a> {
    pub invite_id: &'a str,
    pub site_id: String,
    pub custom_id: Option<&'a str>,
    /// Unix seconds of the verification.
    pub at: i64,
    pub method: &'a str,
}

impl Payload {
    pub fn new(verified: &Verified<'_>, evidence: &Evidence) -> Self {
        let presented = evidence.presented.as_ref();
        Payload {
            iss: evidence.issuer.clone(),
            sub: verified.invite_id.to_owned(),
            site_id: verified.site_id.clone(),
            custom_id: verified.custom_id.map(str::to_owned),
            iat: verified.at,
            method: verified.method.to_owned(),
            min_age: evidence.min_age,
            doc_type: presented.map(|p| p.doc_type.to_owned()),
            issuer_anchor: presented.map(|p| hex(&p.issuer_anchor)),
            transport: presented.map(|p| p.transport),
            nonce_hash: presented.map(|p| hex(&Sha256::digest(p.nonce.as_bytes()))),
            zk_circuit: presented.and_then(|p| p.zk_circuit.clone()),
            credential_status: presented.map(|p| p.credential_status),
        }
    }
}

/// What a stored receipt records of its credential's status, read without checking its
/// signature (it is the database's own): `None` for a verifier or sandbox receipt, one
/// signed before receipts recorded it, or one that cannot be read.
pub fn recorded_status(receipt: &str) -> Option<crate::domain::CredentialStatus> {
    use base64::Engine as _;
    let payload = receipt.split('.').nth(1)?;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    serde_json::from_slice::<Payload>(&payload)
        .ok()?
        .credential_status
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
