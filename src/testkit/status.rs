//! Credential status for the tests (docs/credential-status.md): a status list signer
//! under the issuer's CA, the MSO's `status` member, and — for unit tests only — list
//! tokens built by hand from the draft's CDDL. Integration tests have their lists made
//! and signed by independent implementations (scripts/status-list-token.py) instead.

use super::encode::{cbor, sig_structure, text};
use super::issuer::{cert_params, p256_key};
use super::{TestIssuer, DAY};
use ciborium::Value;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};

/// A certificate and key that sign status lists.
pub struct StatusSigner {
    pub cert_der: Vec<u8>,
    pub cert_pem: String,
    /// PKCS#8 PEM, for a signer in another language.
    pub key_pem: String,
    pub key: SigningKey,
}

impl TestIssuer {
    /// A status list signer issued by this issuer's CA, valid from `now - 30d` to
    /// `now + 365d` (the draft: issued by the same IACA as the document signer).
    pub fn status_signer(&self, now: i64) -> StatusSigner {
        self.status_signer_valid(now - 30 * DAY, now + 365 * DAY)
    }

    /// The same, valid over `[not_before, not_after]` (Unix seconds).
    pub fn status_signer_valid(&self, not_before: i64, not_after: i64) -> StatusSigner {
        let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let params = cert_params(
            "UT",
            "agegate test status list signer",
            (not_before, not_after),
            false,
        );
        let cert = params.signed_by(&kp, &self.ca.cert, &self.ca.key).unwrap();
        StatusSigner {
            cert_der: cert.der().to_vec(),
            cert_pem: cert.pem(),
            key_pem: kp.serialize_pem(),
            key: p256_key(&kp),
        }
    }
}

/// A status list signer under no CA of any issuer (a stranger's).
pub fn stranger_signer(now: i64) -> StatusSigner {
    TestIssuer::named("agegate test stranger CA", now).status_signer(now)
}

/// The MSO's `status` naming a Token Status List entry.
pub fn status_list_ref(idx: u64, uri: &str, certificate: Option<&[u8]>) -> Value {
    status_member(
        "status_list",
        ("idx", Value::Integer(idx.into())),
        uri,
        certificate,
    )
}

/// The MSO's `status` naming an identifier list entry.
pub fn identifier_list_ref(id: &[u8], uri: &str, certificate: Option<&[u8]>) -> Value {
    status_member(
        "identifier_list",
        ("id", Value::Bytes(id.to_vec())),
        uri,
        certificate,
    )
}

fn status_member(form: &str, entry: (&str, Value), uri: &str, certificate: Option<&[u8]>) -> Value {
    let mut inner = vec![(text(entry.0), entry.1), (text("uri"), text(uri))];
    if let Some(der) = certificate {
        inner.push((text("certificate"), Value::Bytes(der.to_vec())));
    }
    Value::Map(vec![(text(form), Value::Map(inner))])
}

/// A list token's parts, for unit tests (built by this kit, not by the verifier).
pub struct TokenSpec {
    pub typ: String,
    pub alg: i64,
    pub claims: Vec<(i64, Value)>,
    /// x5chain (33) in the unprotected header, leaf first; none when empty.
    pub x5chain: Vec<Vec<u8>>,
}

impl TokenSpec {
    /// A status list: `statuses` packed `bits` each, least-significant first, zlib.
    pub fn status_list(uri: &str, iat: i64, bits: u8, statuses: &[u8]) -> Self {
        let lst = zlib(&pack(bits, statuses));
        let list = Value::Map(vec![
            (text("bits"), Value::Integer(bits.into())),
            (text("lst"), Value::Bytes(lst)),
        ]);
        TokenSpec {
            typ: "application/statuslist+cwt".into(),
            alg: -7,
            claims: vec![
                (2, text(uri)),
                (6, Value::Integer(iat.into())),
                (4, Value::Integer((iat + DAY).into())),
                (65534, Value::Integer(3600.into())),
                (65533, list),
            ],
            x5chain: vec![],
        }
    }

    /// An identifier list of `ids` (each revoked).
    pub fn identifier_list(uri: &str, iat: i64, ids: &[&[u8]]) -> Self {
        let ids = ids
            .iter()
            .map(|id| (Value::Bytes(id.to_vec()), Value::Map(vec![])))
            .collect();
        TokenSpec {
            typ: "application/identifierlist+cwt".into(),
            alg: -7,
            claims: vec![
                (2, text(uri)),
                (6, Value::Integer(iat.into())),
                (4, Value::Integer((iat + DAY).into())),
                (
                    65530,
                    Value::Map(vec![(text("identifiers"), Value::Map(ids))]),
                ),
            ],
            x5chain: vec![],
        }
    }

    /// Replaces (or adds) claim `key`.
    pub fn claim(mut self, key: i64, value: Value) -> Self {
        self.claims.retain(|(k, _)| *k != key);
        self.claims.push((key, value));
        self
    }

    /// Signed by `key` (ES256), tagged 18.
    pub fn sign(&self, key: &SigningKey) -> Vec<u8> {
        let protected = cbor(&Value::Map(vec![
            (Value::Integer(1.into()), Value::Integer(self.alg.into())),
            (Value::Integer(16.into()), text(&self.typ)),
        ]));
        let payload = cbor(&Value::Map(
            self.claims
                .iter()
                .map(|(k, v)| (Value::Integer((*k).into()), v.clone()))
                .collect(),
        ));
        let signature: Signature = key.sign(&sig_structure(&protected, &payload));
        let unprotected = match self.x5chain.as_slice() {
            [] => vec![],
            [one] => vec![(Value::Integer(33.into()), Value::Bytes(one.clone()))],
            chain => vec![(
                Value::Integer(33.into()),
                Value::Array(chain.iter().cloned().map(Value::Bytes).collect()),
            )],
        };
        cbor(&Value::Tag(
            18,
            Box::new(Value::Array(vec![
                Value::Bytes(protected),
                Value::Map(unprotected),
                Value::Bytes(payload),
                Value::Bytes(signature.to_bytes().to_vec()),
            ])),
        ))
    }
}

/// Statuses packed `bits` each, least-significant bits first within each byte.
pub fn pack(bits: u8, statuses: &[u8]) -> Vec<u8> {
    let per_byte = 8 / usize::from(bits);
    let mut out = vec![0u8; statuses.len().div_ceil(per_byte)];
    for (i, s) in statuses.iter().enumerate() {
        out[i / per_byte] |= s << ((i % per_byte) * usize::from(bits));
    }
    out
}

/// zlib (RFC 1950) of `bytes`.
pub fn zlib(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}
