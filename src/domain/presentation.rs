//! The relying party's side of OpenID4VP 1.0 as the EU Age Verification profile uses it
//! (docs/wallets.md#the-wallet-link): how a presentation request looks, how long it lives, and the
//! authorization request URI a wallet opens. No I/O; the verification of an answer is
//! in [`crate::mdoc`]. A request also keeps the secrets of the Digital Credentials API
//! channel (docs/dc-api.md#the-requests); their cryptography is the pure [`crate::dcapi`].

use rand::rngs::OsRng;
use rand::RngCore;

pub use super::ask::{MinAge, MinAgeError, ZkOffer};
use super::kind::{Kind, KindSet};
use crate::clock::UnixTime;
use crate::dcapi::ResponseKey;

/// A request is live for 10 minutes from when it is first shown (or until answered).
pub const REQUEST_LIFETIME_SECS: i64 = 10 * 60;

/// The wallet scheme of the EU Age Verification app.
pub const DEFAULT_WALLET_SCHEME: &str = "av";

/// How an invite came to be verified; sent as `data.method` in `invite.verified`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VerifyMethod {
    /// A credential of this kind presented at the gateway (docs/kinds.md#credential-kinds): its name.
    Wallet(Kind),
    /// The sandbox page's control.
    Sandbox,
    /// The verification provider's API (docs/api.md#an-invites-lifecycle).
    Verifier,
}

impl VerifyMethod {
    pub const EU_AV: VerifyMethod = VerifyMethod::Wallet(Kind::EU_AV);

    /// Every method: the kinds in their table's order, then `verifier` and `sandbox`.
    pub fn all() -> impl Iterator<Item = VerifyMethod> {
        Kind::all()
            .map(VerifyMethod::Wallet)
            .chain([VerifyMethod::Verifier, VerifyMethod::Sandbox])
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VerifyMethod::Wallet(kind) => kind.name(),
            VerifyMethod::Sandbox => "sandbox",
            VerifyMethod::Verifier => "verifier",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sandbox" => Some(VerifyMethod::Sandbox),
            "verifier" => Some(VerifyMethod::Verifier),
            kind => Kind::parse(kind).map(VerifyMethod::Wallet),
        }
    }
}

/// A presentation request as stored: any node can answer it, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentationRequest {
    /// Names the request in the wallet's answer; ≥ 128 random bits.
    pub state: String,
    /// Binds the device signature to this request; ≥ 128 random bits.
    pub nonce: String,
    /// The site's minimum age when the request was made.
    pub min_age: MinAge,
    pub created_at: UnixTime,
    pub expires_at: UnixTime,
    pub answered_at: Option<UnixTime>,
    /// What the DC API channel needs; `None` for a request an older release made (it is
    /// given secrets when next shown) and once the request has been answered.
    pub dc_api: Option<DcApiSecrets>,
    /// The zero-knowledge proofs it offered (docs/zk.md#zero-knowledge-proofs), fixed
    /// when it was made; `None`: a plain presentation only.
    pub zk: Option<ZkOffer>,
}

impl PresentationRequest {
    /// A fresh request made at `now`.
    pub fn new(min_age: MinAge, now: UnixTime) -> Self {
        Self {
            state: super::random_token(16),
            nonce: super::random_token(16),
            min_age,
            created_at: now,
            expires_at: now + REQUEST_LIFETIME_SECS,
            answered_at: None,
            dc_api: Some(DcApiSecrets::generate()),
            zk: None,
        }
    }

    /// The request offering `zk`.
    pub fn with_zk(self, zk: Option<ZkOffer>) -> Self {
        Self { zk, ..self }
    }

    /// Live: shown, not yet answered successfully, and less than 10 minutes old.
    pub fn is_live(&self, now: UnixTime) -> bool {
        self.answered_at.is_none() && now < self.expires_at
    }

    /// The age an answer must prove: the higher of the request's and the site's now.
    pub fn required_age(&self, site_now: MinAge) -> MinAge {
        self.min_age.max(site_now)
    }
}

/// A live request's secrets for the Digital Credentials API (docs/dc-api.md#the-requests): its
/// response-encryption key (the private half never leaves the server) and the random
/// nonce of Annex C's `encryptionInfo`. Stored with the request, so every node rebuilds
/// the same R1 and R2 from them on every reload.
#[derive(Debug, Clone)]
pub struct DcApiSecrets {
    pub response_key: ResponseKey,
    pub encryption_nonce: EncryptionNonce,
}

impl DcApiSecrets {
    pub fn generate() -> Self {
        Self {
            response_key: ResponseKey::generate(&mut OsRng),
            encryption_nonce: EncryptionNonce::generate(),
        }
    }
}

impl PartialEq for DcApiSecrets {
    fn eq(&self, other: &Self) -> bool {
        self.response_key.to_bytes() == other.response_key.to_bytes()
            && self.encryption_nonce == other.encryption_nonce
    }
}

impl Eq for DcApiSecrets {}

/// Annex C's `encryptionInfo.nonce`: 16 to 64 bytes (ISO/IEC 18013-7 asks for at least
/// 16); made with 16 random bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncryptionNonce(Vec<u8>);

impl EncryptionNonce {
    const MADE_LEN: usize = 16;

    pub fn generate() -> Self {
        let mut bytes = vec![0u8; Self::MADE_LEN];
        OsRng.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// Stored bytes; `None` outside 16..=64.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        (16..=64).contains(&bytes.len()).then_some(Self(bytes))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Where the wallet posts its answer for an invite's gateway page `gateway_url`.
pub fn response_uri(gateway_url: &str) -> String {
    format!("{gateway_url}/openid4vp")
}

/// The `client_id` of the `redirect_uri:` prefix (OpenID4VP 1.0 section 5.9.3).
pub fn client_id(response_uri: &str) -> String {
    format!("redirect_uri:{response_uri}")
}

pub use super::by_reference::{
    by_reference_uri, request_uri, WalletLinks, DEFAULT_SIGNED_WALLET_SCHEME,
};
pub use super::dcql::{dcql_query, dcql_query_value, offered_circuits};

/// What the verifier supports; required for the `redirect_uri:` prefix (B.2.2).
pub const CLIENT_METADATA: &str = r#"{"vp_formats_supported":{"mso_mdoc":{"issuerauth_alg_values":[-7],"deviceauth_alg_values":[-7]}}}"#;

/// [`CLIENT_METADATA`] as a JSON value (R1's `client_metadata` adds to it).
pub fn client_metadata_value() -> serde_json::Value {
    serde_json::json!({"vp_formats_supported": {"mso_mdoc": {
        "issuerauth_alg_values": [-7],
        "deviceauth_alg_values": [-7],
    }}})
}

/// The authorization request URI for `kinds`, by value and unsigned:
/// `{scheme}://authorize?…`. Wallets register their links with the authority
/// `authorize` (the EU AV app's `openid4vp://` filter matches nothing else), so the
/// link carries it whatever the scheme; see docs/wallets.md#the-wallet-links-scheme.
pub fn authorization_request_uri(
    scheme: &str,
    response_uri: &str,
    request: &PresentationRequest,
    kinds: KindSet,
    min_age: MinAge,
) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "vp_token")
        .append_pair("response_mode", "direct_post")
        .append_pair("response_uri", response_uri)
        .append_pair("client_id", &client_id(response_uri))
        .append_pair("nonce", &request.nonce)
        .append_pair("state", &request.state)
        .append_pair(
            "dcql_query",
            // No proofs by value: the EU AV app sends them only over the DC API and
            // proximity, and a plain request for every kind fits a QR code whole.
            &dcql_query(kinds, min_age, None),
        )
        .append_pair("client_metadata", CLIENT_METADATA)
        .finish();
    format!("{scheme}://authorize?{query}")
}

/// A URI scheme (RFC 3986 section 3.1): a letter, then letters, digits, `+`, `-` or `.`.
pub fn parse_wallet_scheme(s: &str) -> Result<String, String> {
    let mut chars = s.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if valid {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(format!("'{s}' is not a URI scheme (e.g. av, openid4vp)"))
    }
}

#[cfg(test)]
#[path = "presentation_tests.rs"]
mod tests;
