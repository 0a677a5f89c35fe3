//! Test-only wallet and issuer: mints Proof of Age presentations with rcgen (CA and
//! document signer certificates), p256 and ciborium. It builds every structure with
//! ciborium `Value`s, independently of the verifier's own encoder, so the two cross-check.

use ciborium::Value;
use p256::ecdsa::{signature::Signer, Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SignatureAlgorithm,
    PKCS_ECDSA_P256_SHA256,
};
use sha2::{Digest, Sha256};

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

pub fn enc(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::ser::into_writer(v, &mut out).expect("encode");
    out
}

pub fn tag24(bytes: Vec<u8>) -> Value {
    Value::Tag(24, Box::new(Value::Bytes(bytes)))
}

/// `#6.24(bstr)` around `content` with a non-preferred 4-byte bstr length (`5a`):
/// valid CBOR that a re-encoding verifier would hash differently.
pub fn long_tag24(content: &[u8]) -> Vec<u8> {
    let mut out = vec![0xd8, 0x18, 0x5a];
    out.extend_from_slice(&(content.len() as u32).to_be_bytes());
    out.extend_from_slice(content);
    out
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

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (text(k), v)).collect())
}

/// A CA and a document signer certificate issued by it.
pub struct Pki {
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    pub ds_der: Vec<u8>,
    pub ds_pem: String,
    ds_key: SigningKey,
}

impl Pki {
    /// P-256 CA valid 2020–2040, P-256 document signer valid 2024–2027.
    pub fn new() -> Pki {
        Pki::with(&PKCS_ECDSA_P256_SHA256, (2020, 2040), (2024, 2027))
    }

    pub fn with(
        ca_alg: &'static SignatureAlgorithm,
        ca_years: (i32, i32),
        ds_years: (i32, i32),
    ) -> Pki {
        let ca_key = KeyPair::generate_for(ca_alg).expect("ca key");
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca.distinguished_name
            .push(DnType::CommonName, "Test AV IACA");
        ca.distinguished_name.push(DnType::CountryName, "EU");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.not_before = rcgen::date_time_ymd(ca_years.0, 1, 1);
        ca.not_after = rcgen::date_time_ymd(ca_years.1, 1, 1);
        let ca_cert = ca.self_signed(&ca_key).expect("ca cert");

        let ds_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("ds key");
        let mut ds = CertificateParams::new(Vec::<String>::new()).expect("ds params");
        ds.distinguished_name
            .push(DnType::CommonName, "Test AV Document Signer");
        ds.not_before = rcgen::date_time_ymd(ds_years.0, 1, 1);
        ds.not_after = rcgen::date_time_ymd(ds_years.1, 1, 1);
        let ds_cert = ds.signed_by(&ds_key, &ca_cert, &ca_key).expect("ds cert");
        Pki {
            ca_pem: ca_cert.pem(),
            ca_der: ca_cert.der().to_vec(),
            ds_der: ds_cert.der().to_vec(),
            ds_pem: ds_cert.pem(),
            ds_key: SigningKey::from_pkcs8_der(&ds_key.serialize_der()).expect("p256 key"),
        }
    }

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

fn sig_structure(protected: &[u8], payload: &[u8]) -> Vec<u8> {
    enc(&Value::Array(vec![
        text("Signature1"),
        Value::Bytes(protected.to_vec()),
        Value::Bytes(vec![]),
        Value::Bytes(payload.to_vec()),
    ]))
}

pub fn item(digest_id: u64, name: &str, value: Value) -> Vec<u8> {
    enc(&map(vec![
        ("digestID", Value::from(digest_id)),
        ("random", Value::Bytes(vec![digest_id as u8; 16])),
        ("elementIdentifier", text(name)),
        ("elementValue", value),
    ]))
}

pub fn device_key() -> SigningKey {
    SigningKey::from_slice(&[0x42; 32]).expect("device key")
}

impl Mint {
    /// The DeviceResponse CBOR bytes.
    pub fn device_response(&self, pki: &Pki) -> Vec<u8> {
        let ns = self.namespace.as_str();
        let signed_items: Vec<Vec<u8>> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, (name, v))| item(i as u64 + 7, name, v.clone()))
            .collect();
        let disclosed: Vec<Value> = match &self.disclosed_values {
            None => signed_items.iter().cloned().map(tag24).collect(),
            Some(values) => self
                .items
                .iter()
                .zip(values)
                .enumerate()
                .map(|(i, ((name, _), v))| tag24(item(i as u64 + 7, name, v.clone())))
                .collect(),
        };
        // The digest covers the whole encoded #6.24(bstr) item, as it will be sent.
        let sent_item = |i: usize, bytes: &[u8]| {
            if i == 0 && self.long_item_header {
                long_tag24(bytes)
            } else {
                enc(&tag24(bytes.to_vec()))
            }
        };
        let digests: Vec<(Value, Value)> = signed_items
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let d = Sha256::digest(sent_item(i, bytes)).to_vec();
                (Value::from(i as u64 + 7), Value::Bytes(d))
            })
            .collect();

        let point = device_key().verifying_key().to_encoded_point(false);
        let cose_key = Value::Map(vec![
            (Value::from(1), Value::from(2)),
            (Value::from(-1), Value::from(1)),
            (
                Value::from(-2),
                Value::Bytes(point.x().expect("x").to_vec()),
            ),
            (
                Value::from(-3),
                Value::Bytes(point.y().expect("y").to_vec()),
            ),
        ]);
        let tdate = |s: &str| Value::Tag(0, Box::new(text(s)));
        // Keys deliberately not in canonical order: maps may arrive in any order.
        let mso = map(vec![
            (
                "validityInfo",
                map(vec![
                    ("validUntil", tdate(&self.valid_until)),
                    ("signed", tdate(&self.valid_from)),
                    ("validFrom", tdate(&self.valid_from)),
                ]),
            ),
            ("version", text("1.0")),
            ("digestAlgorithm", text(&self.digest_alg)),
            ("docType", text(&self.mso_doc_type)),
            (
                "valueDigests",
                Value::Map(vec![(text(ns), Value::Map(digests))]),
            ),
            ("deviceKeyInfo", map(vec![("deviceKey", cose_key)])),
        ]);
        let payload = enc(&tag24(enc(&mso)));
        let protected = enc(&Value::Map(vec![(Value::from(1), Value::from(-7))]));
        let issuer_sig: Signature = pki.ds_key.sign(&sig_structure(&protected, &payload));
        let x5chain = if self.x5chain_as_array {
            Value::Array(vec![Value::Bytes(pki.ds_der.clone())])
        } else {
            Value::Bytes(pki.ds_der.clone())
        };
        let issuer_auth = Value::Array(vec![
            Value::Bytes(protected.clone()),
            Value::Map(vec![(Value::from(33), x5chain)]),
            Value::Bytes(payload),
            Value::Bytes(issuer_sig.to_vec()),
        ]);

        let device_ns = enc(&Value::Map(vec![]));
        let info = enc(&Value::Array(vec![
            text(&self.client_id),
            text(&self.nonce),
            Value::Null,
            text(&self.response_uri),
        ]));
        let transcript = Value::Array(vec![
            Value::Null,
            Value::Null,
            Value::Array(vec![
                text("OpenID4VPHandover"),
                Value::Bytes(Sha256::digest(&info).to_vec()),
            ]),
        ]);
        let device_auth = Value::Array(vec![
            text("DeviceAuthentication"),
            transcript,
            text(&self.doc_type),
            tag24(device_ns.clone()),
        ]);
        // The signed array ends with DeviceNameSpacesBytes: swap in the sent form.
        let mut device_auth = enc(&device_auth);
        let preferred_ns = enc(&tag24(device_ns.clone()));
        if self.long_device_ns_header {
            assert!(device_auth.ends_with(&preferred_ns));
            device_auth.truncate(device_auth.len() - preferred_ns.len());
            device_auth.extend_from_slice(&long_tag24(&device_ns));
        }
        let device_auth_bytes = enc(&tag24(device_auth));
        let device_sig: Signature =
            device_key().sign(&sig_structure(&protected, &device_auth_bytes));
        let device_cose = Value::Array(vec![
            Value::Bytes(protected),
            Value::Map(vec![]),
            Value::Null,
            Value::Bytes(device_sig.to_vec()),
        ]);
        let auth_name = if self.device_mac {
            "deviceMac"
        } else {
            "deviceSignature"
        };

        let document = map(vec![
            ("docType", text(&self.doc_type)),
            (
                "issuerSigned",
                map(vec![
                    (
                        "nameSpaces",
                        Value::Map(vec![(text(ns), Value::Array(disclosed))]),
                    ),
                    ("issuerAuth", issuer_auth),
                ]),
            ),
            (
                "deviceSigned",
                map(vec![
                    ("nameSpaces", tag24(device_ns.clone())),
                    ("deviceAuth", map(vec![(auth_name, device_cose)])),
                ]),
            ),
        ]);
        let mut response = enc(&map(vec![
            ("version", text("1.0")),
            ("documents", Value::Array(vec![document])),
            ("status", Value::from(self.status)),
        ]));
        // ciborium writes preferred heads only; the long ones are spliced in after.
        if self.long_item_header {
            let first = &signed_items[0];
            splice(
                &mut response,
                &enc(&tag24(first.clone())),
                &long_tag24(first),
            );
        }
        if self.long_device_ns_header {
            splice(
                &mut response,
                &device_namespaces_entry(&preferred_ns),
                &device_namespaces_entry(&long_tag24(&device_ns)),
            );
        }
        response
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
