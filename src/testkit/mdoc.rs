//! The mdoc itself: the DeviceResponse with its IssuerSigned items, MSO, issuerAuth and
//! deviceSigned parts (ISO/IEC 18013-5 sections 8.3.2.1.2, 9.1.2, 9.1.3).

use super::encode::{
    cbor, cose_key, cose_sign1, flip_signature_bit, long_tag24, map, sha256, tag24, tdate, text,
};
use super::{Presentation, TestIssuer};
use ciborium::Value;
use p256::ecdsa::SigningKey;
use rand::seq::SliceRandom as _;
use rand::Rng as _;

/// Byte replacements still to apply to the encoded DeviceResponse: (preferred, sent).
type Splices = Vec<(Vec<u8>, Vec<u8>)>;

impl TestIssuer {
    /// The DeviceResponse whose device signature covers `transcript` (a
    /// SessionTranscript), and byte replacements (preferred → sent) still to apply.
    pub(super) fn build(&self, transcript: Value, p: &Presentation) -> (Value, Splices) {
        let mut rng = rand::thread_rng();

        // IssuerSignedItems: the disclosed claims, plus undisclosed ones whose digests the
        // MSO holds too (as a real attestation has); digest IDs in random order.
        // With `fixed_salts`: IDs from 7 in order, `random` = 16 × the ID (reproducible
        // bytes a test can look for).
        let total = p.claims.len() + p.undisclosed;
        let first = if p.fixed_salts { 7 } else { 0 };
        let mut ids: Vec<u64> = (first..first + total as u64).collect();
        if !p.fixed_salts {
            ids.shuffle(&mut rng);
        }
        let item = |id: u64, name: &str, value: Value| {
            if p.fixed_salts {
                IssuerItem::fixed(id, name, value)
            } else {
                IssuerItem::new(id, name, value)
            }
        };
        let mut disclosed: Vec<IssuerItem> = p
            .claims
            .iter()
            .zip(&ids)
            .map(|((name, value), &id)| item(id, name, value.clone()))
            .collect();
        if p.long_item_header {
            disclosed
                .first_mut()
                .expect("long_item_header needs a disclosed claim")
                .long_header = true;
        }
        let hidden: Vec<IssuerItem> = (0..p.undisclosed)
            .zip(&ids[p.claims.len()..])
            .map(|(j, &id)| {
                let name = format!("age_over_{}", 21 + 4 * j);
                item(id, &name, Value::Bool(true))
            })
            .collect();

        let mut digests: Vec<(u64, Vec<u8>)> = disclosed
            .iter()
            .chain(&hidden)
            .map(|it| (it.digest_id, sha256(&it.bytes()).to_vec()))
            .collect();
        if p.omit_digest {
            let first = disclosed
                .first()
                .expect("omit_digest needs a disclosed claim");
            digests.retain(|(id, _)| *id != first.digest_id);
        }
        digests.sort_by_key(|(id, _)| *id);

        if p.tamper_value {
            // After the digests: turn a `false` into `true` (the attack); otherwise change
            // the salt, so only the digest check can notice.
            let first = disclosed
                .first_mut()
                .expect("tamper_value needs a disclosed claim");
            match first.value {
                Value::Bool(false) => first.value = Value::Bool(true),
                _ => first.random[0] ^= 0x01,
            }
        }

        if let Some(values) = &p.disclosed_values {
            // After the digests: other values under the same IDs and salts.
            for (it, v) in disclosed.iter_mut().zip(values) {
                it.value = v.clone();
            }
        }

        // MobileSecurityObject
        let device_pub = self.device_key.verifying_key();
        // Keys deliberately not in canonical order: maps may arrive in any order.
        let mso = map(vec![
            (
                "validityInfo",
                match &p.validity_tdates {
                    None => map(vec![
                        ("validUntil", tdate(p.valid_until)),
                        ("signed", tdate(p.valid_from)),
                        ("validFrom", tdate(p.valid_from)),
                    ]),
                    Some((from, until)) => {
                        let t = |s: &str| Value::Tag(0, Box::new(text(s)));
                        map(vec![
                            ("validUntil", t(until)),
                            ("signed", t(from)),
                            ("validFrom", t(from)),
                        ])
                    }
                },
            ),
            ("version", text("1.0")),
            ("digestAlgorithm", text(&p.digest_algorithm)),
            ("docType", text(&p.mso_doc_type)),
            (
                "valueDigests",
                Value::Map(vec![(
                    text(&p.namespace),
                    Value::Map(
                        digests
                            .into_iter()
                            .map(|(id, d)| (Value::Integer(id.into()), Value::Bytes(d)))
                            .collect(),
                    ),
                )]),
            ),
            (
                "deviceKeyInfo",
                map(vec![("deviceKey", cose_key(device_pub))]),
            ),
        ]);
        let mso = match (mso, &p.mso_status) {
            (Value::Map(mut entries), Some(status)) => {
                entries.push((text("status"), status.clone()));
                Value::Map(entries)
            }
            (mso, _) => mso,
        };
        let mso_bytes = cbor(&tag24(&mso)); // MobileSecurityObjectBytes

        // issuerAuth
        let x5chain = if p.x5chain_array || !p.x5chain_extra.is_empty() {
            Value::Array(
                std::iter::once(&self.ds_cert_der)
                    .chain(&p.x5chain_extra)
                    .map(|der| Value::Bytes(der.clone()))
                    .collect(),
            )
        } else {
            Value::Bytes(self.ds_cert_der.clone())
        };
        let unprotected = if p.omit_x5chain {
            vec![]
        } else {
            vec![(Value::Integer(33.into()), x5chain)]
        };
        let mut issuer_auth =
            cose_sign1(&self.ds_key, p.issuer_alg, unprotected, &mso_bytes, false);
        if p.bad_issuer_signature {
            flip_signature_bit(&mut issuer_auth);
        }

        // deviceSigned
        // DeviceNameSpacesBytes = #6.24(bstr .cbor {* NameSpace => {+ id => value}}),
        // normally #6.24(bstr .cbor {}).
        let device_claims = if p.device_claims.is_empty() {
            vec![]
        } else {
            vec![(
                text(&p.namespace),
                Value::Map(
                    p.device_claims
                        .iter()
                        .map(|(k, v)| (text(k), v.clone()))
                        .collect(),
                ),
            )]
        };
        let device_name_spaces = tag24(&Value::Map(device_claims));
        let device_auth = Value::Array(vec![
            text("DeviceAuthentication"),
            transcript,
            text(&p.doc_type),
            device_name_spaces.clone(),
        ]);
        // DeviceAuthenticationBytes; its array ends with DeviceNameSpacesBytes, which
        // `long_device_ns_header` sends (and signs) with a 4-byte length head.
        let preferred_ns = cbor(&device_name_spaces);
        let long_ns = long_tag24(untag(&device_name_spaces));
        let mut device_auth = cbor(&device_auth);
        if p.long_device_ns_header {
            device_auth.truncate(device_auth.len() - preferred_ns.len());
            device_auth.extend_from_slice(&long_ns);
        }
        let device_auth_bytes = cbor(&Value::Tag(24, Box::new(Value::Bytes(device_auth))));
        let foreign;
        let device_signer = if p.foreign_device_key {
            foreign = SigningKey::random(&mut rand::rngs::OsRng);
            &foreign
        } else {
            &self.device_key
        };
        let mut device_signature = cose_sign1(
            device_signer,
            p.device_alg,
            vec![],
            &device_auth_bytes,
            !p.attached_device_payload,
        );
        if p.bad_device_signature {
            flip_signature_bit(&mut device_signature);
        }

        // IssuerSigned: `? "nameSpaces"` (absent when nothing is disclosed), "issuerAuth".
        let mut issuer_signed = vec![];
        if !disclosed.is_empty() {
            issuer_signed.push((
                "nameSpaces",
                Value::Map(vec![(
                    text(&p.namespace),
                    Value::Array(disclosed.iter().map(IssuerItem::tagged).collect()),
                )]),
            ));
        }
        issuer_signed.push(("issuerAuth", issuer_auth));
        let document = map(vec![
            ("docType", text(&p.doc_type)),
            ("issuerSigned", map(issuer_signed)),
            (
                "deviceSigned",
                map(vec![
                    ("nameSpaces", device_name_spaces),
                    (
                        "deviceAuth",
                        map(vec![(
                            if p.device_mac {
                                "deviceMac"
                            } else {
                                "deviceSignature"
                            },
                            device_signature,
                        )]),
                    ),
                ]),
            ),
        ]);
        let response = map(vec![
            ("version", text("1.0")),
            ("documents", Value::Array(vec![document])),
            ("status", Value::Integer(p.status.into())),
        ]);
        let mut splices: Splices = disclosed
            .iter()
            .filter(|it| it.long_header)
            .map(|it| (cbor(&it.tagged()), it.bytes()))
            .collect();
        if p.long_device_ns_header {
            // Keyed by "nameSpaces": issuerSigned's nameSpaces is a map, never `#6.24`.
            let key = cbor(&text("nameSpaces"));
            splices.push((
                [&key[..], &preferred_ns].concat(),
                [&key[..], &long_ns].concat(),
            ));
        }
        (response, splices)
    }
}

/// One IssuerSignedItem.
struct IssuerItem {
    digest_id: u64,
    random: Vec<u8>,
    name: String,
    value: Value,
    /// Sent as `d8 18 5a <u32 length> ...`: a valid but non-preferred bstr header.
    long_header: bool,
}

impl IssuerItem {
    fn new(digest_id: u64, name: &str, value: Value) -> Self {
        IssuerItem {
            digest_id,
            random: rand::thread_rng().gen::<[u8; 32]>().to_vec(),
            name: name.to_owned(),
            value,
            long_header: false,
        }
    }

    /// `random` = 16 × the digest ID.
    fn fixed(digest_id: u64, name: &str, value: Value) -> Self {
        IssuerItem {
            random: vec![digest_id as u8; 16],
            ..IssuerItem::new(digest_id, name, value)
        }
    }

    /// `IssuerSignedItemBytes` = #6.24(bstr .cbor IssuerSignedItem), as a value.
    fn tagged(&self) -> Value {
        tag24(&map(vec![
            ("digestID", Value::Integer(self.digest_id.into())),
            ("random", Value::Bytes(self.random.clone())),
            ("elementIdentifier", text(&self.name)),
            ("elementValue", self.value.clone()),
        ]))
    }

    /// The encoded `IssuerSignedItemBytes`: exactly what the digest covers.
    fn bytes(&self) -> Vec<u8> {
        if !self.long_header {
            return cbor(&self.tagged());
        }
        let Value::Tag(24, inner) = self.tagged() else {
            unreachable!()
        };
        let Value::Bytes(content) = *inner else {
            unreachable!()
        };
        long_tag24(&content)
    }
}

/// The bstr inside a `#6.24` value.
fn untag(v: &Value) -> &[u8] {
    match v {
        Value::Tag(24, inner) => inner.as_bytes().expect("tag 24 holds a bstr"),
        _ => panic!("not #6.24(bstr): {v:?}"),
    }
}

/// The encoded IssuerSignedItem (inside its `#6.24`) that `fixed_salts` mints for
/// `digest_id`: the bytes a test looks for in a response.
pub fn fixed_item(digest_id: u64, name: &str, value: Value) -> Vec<u8> {
    untag(&IssuerItem::fixed(digest_id, name, value).tagged()).to_vec()
}
