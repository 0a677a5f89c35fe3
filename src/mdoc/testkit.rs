//! The unit tests' fixed request and clock, and [`Mint`]: their knobs over the crate's one
//! mdoc test kit ([`crate::testkit`]), which does all the minting.

use ciborium::Value;

pub use crate::testkit::{cbor as enc, fixed_item as item, long_tag24, TestIssuer as Pki};
use crate::testkit::{session_transcript, text, Presentation};

use super::{Expected, KindAnchors, TrustAnchors};
use crate::kind::Kind;

/// The Proof of Age docType, which is also its namespace: what [`Mint`] makes by default.
pub const DOC_TYPE: &str = "eu.europa.ec.av.1";

pub const CLIENT_ID: &str = "redirect_uri:https://gate.example/gateway/inv1/openid4vp";
pub const NONCE: &str = "n-0S6_WzA2Mj";
pub const RESPONSE_URI: &str = "https://gate.example/gateway/inv1/openid4vp";
/// 2025-06-01T00:00:00Z.
pub const NOW: i64 = 1_748_736_000;

/// The redirect SessionTranscript of [`CLIENT_ID`], [`NONCE`] and [`RESPONSE_URI`].
static TRANSCRIPT: std::sync::LazyLock<Vec<u8>> =
    std::sync::LazyLock::new(|| super::session_transcript(CLIENT_ID, NONCE, RESPONSE_URI));

pub fn expected(min_age: u8) -> Expected<'static> {
    Expected {
        session_transcript: &TRANSCRIPT,
        min_age,
        now: NOW,
    }
}

pub fn tag24(bytes: Vec<u8>) -> Value {
    Value::Tag(24, Box::new(Value::Bytes(bytes)))
}

/// Replaces the one occurrence of `from` in `bytes` with `to`.
pub fn splice(bytes: &mut Vec<u8>, from: &[u8], to: &[u8]) {
    let at: Vec<usize> = (0..bytes.len())
        .filter(|&i| bytes[i..].starts_with(from))
        .collect();
    assert_eq!(at.len(), 1, "splice needs exactly one occurrence");
    bytes.splice(at[0]..at[0] + from.len(), to.iter().copied());
}

/// The `"nameSpaces"` key followed by the encoded DeviceNameSpacesBytes, as it appears
/// in deviceSigned (issuerSigned's nameSpaces is a map, never `#6.24`).
pub fn device_namespaces_entry(item: &[u8]) -> Vec<u8> {
    let mut out = enc(&text("nameSpaces"));
    out.extend_from_slice(item);
    out
}

/// What the unit tests read off an issuer.
impl Pki {
    /// The CA as the anchors of the `eu-av` kind only.
    pub fn anchors(&self) -> KindAnchors {
        self.anchors_for(Kind::EU_AV)
    }

    /// The CA as the anchors of `kind` only.
    pub fn anchors_for(&self, kind: Kind) -> KindAnchors {
        KindAnchors::single(kind, self.ca_anchors())
    }

    pub fn ca_anchors(&self) -> TrustAnchors {
        TrustAnchors::from_pem(&self.ca_pem).expect("anchors")
    }
}

/// What the wallet presents; every field can be spoiled by a test.
pub struct Mint {
    pub doc_type: String,
    pub mso_doc_type: String,
    /// The namespace of `items`.
    pub namespace: String,
    pub digest_alg: String,
    pub status: u64,
    pub valid_from: String,
    pub valid_until: String,
    /// Items of `namespace` the issuer signed.
    pub items: Vec<(String, Value)>,
    /// If set, disclosed instead of `items` (same digestIDs and salts): tampering.
    pub disclosed_values: Option<Vec<Value>>,
    /// The request the wallet binds its device signature to.
    pub client_id: String,
    pub nonce: String,
    pub response_uri: String,
    /// x5chain as an array of one bstr instead of a bare bstr.
    pub x5chain_as_array: bool,
    /// deviceMac instead of deviceSignature.
    pub device_mac: bool,
    /// The first item is sent (and hashed) with a 4-byte bstr length head.
    pub long_item_header: bool,
    /// DeviceNameSpacesBytes is sent (and signed) with a 4-byte bstr length head.
    pub long_device_ns_header: bool,
}

impl Default for Mint {
    fn default() -> Mint {
        Mint {
            doc_type: DOC_TYPE.into(),
            mso_doc_type: DOC_TYPE.into(),
            namespace: DOC_TYPE.into(),
            digest_alg: "SHA-256".into(),
            status: 0,
            valid_from: "2025-01-01T00:00:00Z".into(),
            valid_until: "2025-12-31T00:00:00Z".into(),
            items: vec![("age_over_18".into(), Value::Bool(true))],
            disclosed_values: None,
            client_id: CLIENT_ID.into(),
            nonce: NONCE.into(),
            response_uri: RESPONSE_URI.into(),
            x5chain_as_array: false,
            device_mac: false,
            long_item_header: false,
            long_device_ns_header: false,
        }
    }
}

impl Mint {
    /// The DeviceResponse CBOR bytes, minted by the test kit with reproducible items.
    pub fn device_response(&self, pki: &Pki) -> Vec<u8> {
        let p = Presentation {
            claims: self.items.clone(),
            doc_type: self.doc_type.clone(),
            mso_doc_type: self.mso_doc_type.clone(),
            namespace: self.namespace.clone(),
            digest_algorithm: self.digest_alg.clone(),
            status: self.status,
            validity_tdates: Some((self.valid_from.clone(), self.valid_until.clone())),
            disclosed_values: self.disclosed_values.clone(),
            x5chain_array: self.x5chain_as_array,
            device_mac: self.device_mac,
            long_item_header: self.long_item_header,
            long_device_ns_header: self.long_device_ns_header,
            undisclosed: 0,
            fixed_salts: true,
            ..Presentation::default()
        };
        let transcript = session_transcript(&self.client_id, &self.nonce, None, &self.response_uri);
        pki.device_response_cbor_over(transcript, &p)
    }

    /// The vp_token, keyed by the DCQL id of the document's docType (`proof_of_age` for
    /// a docType no kind has).
    pub fn vp_token(&self, pki: &Pki) -> String {
        let id = Kind::by_doc_type(&self.doc_type).map_or("proof_of_age", |(_, row)| row.dcql_id);
        vp_token_with_id(id, &self.device_response(pki))
    }

    /// A valid presentation of a credential of `kind` (its first docType and namespace).
    pub fn of_kind(kind: Kind) -> Mint {
        let info = kind.info();
        Mint {
            doc_type: info.doc_types[0].doc_type.into(),
            mso_doc_type: info.doc_types[0].doc_type.into(),
            namespace: info.namespace.into(),
            ..Mint::default()
        }
    }
}

pub fn vp_token_with_id(id: &str, device_response: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(device_response);
    let mut map = serde_json::Map::new();
    map.insert(id.to_owned(), serde_json::json!([b64]));
    serde_json::Value::Object(map).to_string()
}

pub fn vp_token_of(device_response: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(device_response);
    serde_json::json!({ "proof_of_age": [b64] }).to_string()
}
