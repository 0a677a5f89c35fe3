//! The mdoc itself: the DeviceResponse with its IssuerSigned items, MSO, issuerAuth and
//! deviceSigned parts (ISO/IEC 18013-5 sections 8.3.2.1.2, 9.1.2, 9.1.3).

use super::encode::{
    cbor, cose_key, cose_sign1, flip_signature_bit, map, sha256, tag24, tdate, text,
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
        let total = p.claims.len() + p.undisclosed;
        let mut ids: Vec<u64> = (0..total as u64).collect();
        ids.shuffle(&mut rng);
        let mut disclosed: Vec<IssuerItem> = p
            .claims
            .iter()
            .zip(&ids)
            .map(|((name, value), &id)| IssuerItem::new(id, name, value.clone()))
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
                IssuerItem::new(id, &name, Value::Bool(true))
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

        // MobileSecurityObject
        let device_pub = self.device_key.verifying_key();
        let mso = map(vec![
            ("version", text("1.0")),
            ("digestAlgorithm", text(&p.digest_algorithm)),
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
            ("docType", text(&p.mso_doc_type)),
            (
                "validityInfo",
                map(vec![
                    ("signed", tdate(p.valid_from)),
                    ("validFrom", tdate(p.valid_from)),
                    ("validUntil", tdate(p.valid_until)),
                ]),
            ),
        ]);
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
        let device_auth_bytes = cbor(&tag24(&device_auth)); // DeviceAuthenticationBytes
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
                        map(vec![("deviceSignature", device_signature)]),
                    ),
                ]),
            ),
        ]);
        let response = map(vec![
            ("version", text("1.0")),
            ("documents", Value::Array(vec![document])),
            ("status", Value::Integer(p.status.into())),
        ]);
        let splices = disclosed
            .iter()
            .filter(|it| it.long_header)
            .map(|it| (cbor(&it.tagged()), it.bytes()))
            .collect();
        (response, splices)
    }
}

/// One IssuerSignedItem.
struct IssuerItem {
    digest_id: u64,
    random: [u8; 32],
    name: String,
    value: Value,
    /// Sent as `d8 18 5a <u32 length> ...`: a valid but non-preferred bstr header.
    long_header: bool,
}

impl IssuerItem {
    fn new(digest_id: u64, name: &str, value: Value) -> Self {
        IssuerItem {
            digest_id,
            random: rand::thread_rng().gen(),
            name: name.to_owned(),
            value,
            long_header: false,
        }
    }

    /// `IssuerSignedItemBytes` = #6.24(bstr .cbor IssuerSignedItem), as a value.
    fn tagged(&self) -> Value {
        tag24(&map(vec![
            ("digestID", Value::Integer(self.digest_id.into())),
            ("random", Value::Bytes(self.random.to_vec())),
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
        let mut out = vec![0xd8, 0x18, 0x5a];
        out.extend((content.len() as u32).to_be_bytes());
        out.extend(content);
        out
    }
}
