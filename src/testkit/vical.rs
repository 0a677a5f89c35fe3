//! A VICAL publisher (ISO/IEC 18013-5 Annex C.1.7): an anchor CA, optionally an
//! intermediate CA, a P-256 or P-384 VICAL signer, and the signed list of IACA roots,
//! built by hand with rcgen, p256/p384 and ciborium (independently of the parser).
//!
//! ```text
//! COSE_Sign1 [ protected {1: alg}, unprotected {33: x5chain}, payload, signature ]
//! payload VICAL = { "version", "vicalProvider", "date": tdate, "vicalIssueID",
//!                   "nextUpdate": tdate, "certificateInfos": [ { "certificate": DER,
//!                   "serialNumber": biguint, "ski": bstr, ? "docType": [+ tstr] } ] }
//! ```
//!
//! [`VicalPki`] and [`Vical`] (every knob spoils it in one way) are the kit;
//! `vical_publisher.rs` is the integration tests' front to them, on the app's clock.

use super::encode::{cbor, map, sha256, tdate, text};
use super::issuer::{cert_params, p256_key, year, Ca};
use ciborium::Value;
use p256::ecdsa::signature::Signer as _;
use p256::pkcs8::DecodePrivateKey as _;
use std::sync::Arc;

/// The mDL docType, which admits an entry's certificate as an mDL anchor.
pub const MDL_DOCTYPE: &str = "org.iso.18013.5.1.mDL";

/// The signer's private key.
enum SignerKey {
    P256(p256::ecdsa::SigningKey),
    P384(p384::ecdsa::SigningKey),
}

/// The VICAL provider's PKI: anchor → (intermediate →) signer.
pub struct VicalPki {
    /// The anchor CA, PEM: the `--mdl-vical-anchor` file's content.
    pub anchor_pem: String,
    pub anchor_der: Vec<u8>,
    pub intermediate_der: Option<Vec<u8>>,
    pub signer_der: Vec<u8>,
    key: SignerKey,
    anchor: Arc<Ca>,
}

/// How the PKI is made; validity periods in Unix seconds.
pub struct PkiSpec {
    /// The signer's key and its certificate's algorithm: P-256 or P-384.
    pub signer_alg: &'static rcgen::SignatureAlgorithm,
    pub intermediate: bool,
    /// The intermediate has basicConstraints cA (false: a mere end-entity).
    pub intermediate_is_ca: bool,
    pub anchor_validity: (i64, i64),
    pub intermediate_validity: (i64, i64),
    pub signer_validity: (i64, i64),
}

impl Default for PkiSpec {
    /// A P-256 anchor valid 2020–2040 signing a P-256 signer valid 2024–2027 directly.
    fn default() -> PkiSpec {
        PkiSpec {
            signer_alg: &rcgen::PKCS_ECDSA_P256_SHA256,
            intermediate: false,
            intermediate_is_ca: true,
            anchor_validity: years((2020, 2040)),
            intermediate_validity: years((2021, 2039)),
            signer_validity: years((2024, 2027)),
        }
    }
}

/// From 1 January of the first year to 1 January of the second, in Unix seconds.
pub fn years((from, to): (i32, i32)) -> (i64, i64) {
    (year(from), year(to))
}

impl Default for VicalPki {
    fn default() -> VicalPki {
        VicalPki::new()
    }
}

impl VicalPki {
    /// [`PkiSpec::default`].
    pub fn new() -> VicalPki {
        VicalPki::with(PkiSpec::default())
    }

    pub fn with(spec: PkiSpec) -> VicalPki {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = cert_params("UT", "agegate test VICAL Root", spec.anchor_validity, true)
            .self_signed(&key)
            .unwrap();
        Self::under(Arc::new(Ca { cert, key }), &spec)
    }

    /// The same anchor, a new signer as `spec` says (its anchor validity unused).
    pub fn resign(&self, spec: &PkiSpec) -> VicalPki {
        Self::under(self.anchor.clone(), spec)
    }

    fn under(anchor: Arc<Ca>, spec: &PkiSpec) -> VicalPki {
        let intermediate = spec.intermediate.then(|| {
            let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
            let cert = cert_params(
                "UT",
                "agegate test VICAL Issuing CA",
                spec.intermediate_validity,
                spec.intermediate_is_ca,
            )
            .signed_by(&key, &anchor.cert, &anchor.key)
            .unwrap();
            Ca { cert, key }
        });
        let key = rcgen::KeyPair::generate_for(spec.signer_alg).unwrap();
        let issuer = intermediate.as_ref().unwrap_or(&anchor);
        let cert = cert_params(
            "UT",
            "agegate test VICAL Signer",
            spec.signer_validity,
            false,
        )
        .signed_by(&key, &issuer.cert, &issuer.key)
        .unwrap();
        let signer = if std::ptr::eq(spec.signer_alg, &rcgen::PKCS_ECDSA_P384_SHA384) {
            SignerKey::P384(p384::ecdsa::SigningKey::from_pkcs8_der(&key.serialize_der()).unwrap())
        } else {
            SignerKey::P256(p256_key(&key))
        };
        VicalPki {
            anchor_pem: anchor.cert.pem(),
            anchor_der: anchor.cert.der().to_vec(),
            intermediate_der: intermediate.map(|i| i.cert.der().to_vec()),
            signer_der: cert.der().to_vec(),
            key: signer,
            anchor,
        }
    }

    /// The anchor, parsed as the verifier's trust anchors.
    pub fn anchors(&self) -> crate::mdoc::TrustAnchors {
        crate::mdoc::TrustAnchors::from_pem(&self.anchor_pem).unwrap()
    }

    /// The signer's key, when it is P-256.
    pub fn signer_key(&self) -> &p256::ecdsa::SigningKey {
        match &self.key {
            SignerKey::P256(k) => k,
            SignerKey::P384(_) => panic!("a P-384 signer"),
        }
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        match &self.key {
            SignerKey::P256(k) => {
                let sig: p256::ecdsa::Signature = k.sign(message);
                sig.to_vec()
            }
            SignerKey::P384(k) => {
                let sig: p384::ecdsa::Signature = k.sign(message);
                sig.to_vec()
            }
        }
    }

    fn alg(&self) -> i64 {
        match self.key {
            SignerKey::P256(_) => -7,
            SignerKey::P384(_) => -35,
        }
    }
}

/// One `CertificateInfo`: a certificate and its optional docType list.
#[derive(Clone, Debug)]
pub struct VicalEntry {
    /// An IACA root certificate, DER.
    pub certificate: Vec<u8>,
    /// The `docType` list; None leaves it out (which admits every docType).
    pub doc_types: Option<Vec<String>>,
}

impl VicalEntry {
    /// Admitted for mDL only: `docType: ["org.iso.18013.5.1.mDL"]`.
    pub fn mdl(certificate: &[u8]) -> Self {
        Self::for_doc_types(certificate, &[MDL_DOCTYPE])
    }

    /// With this `docType` list (e.g. another docType only: skipped for mDL).
    pub fn for_doc_types(certificate: &[u8], doc_types: &[&str]) -> Self {
        Self::with(certificate, Some(doc_types))
    }

    /// Without a `docType` list.
    pub fn any_doc_type(certificate: &[u8]) -> Self {
        Self::with(certificate, None)
    }

    pub fn with(certificate: &[u8], doc_types: Option<&[&str]>) -> Self {
        VicalEntry {
            certificate: certificate.to_vec(),
            doc_types: doc_types.map(|t| t.iter().map(|s| (*s).to_owned()).collect()),
        }
    }
}

/// Where the signer's certificate goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum X5chain {
    /// Unprotected header, a bare bstr (one certificate; with an intermediate, an array).
    Bstr,
    /// Unprotected header, an array.
    Array,
    /// Protected header, an array.
    Protected,
    Absent,
}

/// A VICAL to build; `Vical::new(entries)` is valid.
pub struct Vical {
    pub entries: Vec<VicalEntry>,
    pub provider: String,
    /// `date` and `nextUpdate`, Unix seconds.
    pub date: i64,
    pub next_update: i64,
    pub issue_id: u64,
    /// `alg` in the protected header (None: the signer key's).
    pub alg: Option<i64>,
    pub x5chain: X5chain,
    /// Append the anchor to x5chain (as AAMVA's VICAL does).
    pub chain_includes_anchor: bool,
    /// Wrap in tag 18.
    pub tagged: bool,
    /// Flip a bit of the signature.
    pub bad_signature: bool,
    /// Change the provider's name after signing.
    pub tamper_payload: bool,
    /// Send nil as the payload (signed over the real one).
    pub detached: bool,
    /// Applied to the payload map before signing (to drop or spoil fields).
    pub edit: fn(&mut Vec<(Value, Value)>),
}

impl Vical {
    /// Dated 2025-05-01T12:00:00Z, next update 2025-06-01T12:00:00Z, `vicalIssueID` 42.
    pub fn new(entries: Vec<VicalEntry>) -> Vical {
        Vical {
            entries,
            provider: "Test VICAL Provider".into(),
            date: 1_746_100_800,
            next_update: 1_748_779_200,
            issue_id: 42,
            alg: None,
            x5chain: X5chain::Array,
            chain_includes_anchor: false,
            tagged: false,
            bad_signature: false,
            tamper_payload: false,
            detached: false,
            edit: |_| {},
        }
    }

    pub fn payload(&self) -> Vec<u8> {
        let infos = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut info = vec![
                    ("certificate", Value::Bytes(e.certificate.clone())),
                    ("serialNumber", Value::Bytes(vec![i as u8 + 1])),
                    ("ski", Value::Bytes(sha256(&e.certificate)[..20].to_vec())),
                ];
                if let Some(types) = &e.doc_types {
                    let types = types.iter().map(|t| text(t)).collect();
                    info.push(("docType", Value::Array(types)));
                }
                info.push(("issuingCountry", text("UT")));
                map(info)
            })
            .collect();
        let Value::Map(mut fields) = map(vec![
            ("version", text("1.0")),
            ("vicalProvider", text(&self.provider)),
            ("date", tdate(self.date)),
            ("vicalIssueID", Value::from(self.issue_id)),
            ("nextUpdate", tdate(self.next_update)),
            ("certificateInfos", Value::Array(infos)),
        ]) else {
            unreachable!()
        };
        (self.edit)(&mut fields);
        cbor(&Value::Map(fields))
    }

    /// The VICAL's bytes, signed by `pki`'s signer.
    pub fn bytes(&self, pki: &VicalPki) -> Vec<u8> {
        let mut chain = vec![Value::Bytes(pki.signer_der.clone())];
        if let Some(der) = &pki.intermediate_der {
            chain.push(Value::Bytes(der.clone()));
        }
        if self.chain_includes_anchor {
            chain.push(Value::Bytes(pki.anchor_der.clone()));
        }
        let chain = match (self.x5chain, chain.len()) {
            (X5chain::Bstr, 1) => chain.pop(),
            (X5chain::Absent, _) => None,
            _ => Some(Value::Array(chain)),
        };
        let alg = (Value::from(1), Value::from(self.alg.unwrap_or(pki.alg())));
        let (protected, unprotected) = match chain {
            Some(c) if self.x5chain == X5chain::Protected => {
                (vec![alg, (Value::from(33), c)], vec![])
            }
            Some(c) => (vec![alg], vec![(Value::from(33), c)]),
            None => (vec![alg], vec![]),
        };
        let protected = cbor(&Value::Map(protected));
        let payload = self.payload();
        let mut signature = pki.sign(&super::sig_structure(&protected, &payload));
        if self.bad_signature {
            signature[7] ^= 0x01;
        }
        let sent = if self.detached {
            Value::Null
        } else if self.tamper_payload {
            let name = self.provider.as_bytes();
            let at = payload
                .windows(name.len())
                .position(|w| w == name)
                .expect("provider");
            let mut p = payload;
            p[at] ^= 0x20; // another letter's case
            Value::Bytes(p)
        } else {
            Value::Bytes(payload)
        };
        let sign1 = Value::Array(vec![
            Value::Bytes(protected),
            Value::Map(unprotected),
            sent,
            Value::Bytes(signature),
        ]);
        cbor(&if self.tagged {
            Value::Tag(18, Box::new(sign1))
        } else {
            sign1
        })
    }
}
