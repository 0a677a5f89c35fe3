//! Test-only VICAL publisher: a VICAL anchor CA, an optional intermediate, a VICAL
//! signer, and the signed list, built with rcgen, p256/p384 and ciborium `Value`s
//! (independently of the parser). Every knob of [`Vical`] spoils it in one way.

use ciborium::Value;
use p256::ecdsa::signature::Signer;
use p256::pkcs8::DecodePrivateKey;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SignatureAlgorithm,
    PKCS_ECDSA_P256_SHA256, PKCS_ECDSA_P384_SHA384,
};

use super::testkit::enc;
use super::vical::MDL_DOC_TYPE;
use super::TrustAnchors;

/// The signer's private key.
enum SignerKey {
    P256(p256::ecdsa::SigningKey),
    P384(p384::ecdsa::SigningKey),
}

/// The VICAL provider's PKI: anchor → (intermediate →) signer.
pub struct VicalPki {
    pub anchor_pem: String,
    pub anchor_der: Vec<u8>,
    pub intermediate_der: Option<Vec<u8>>,
    pub signer_der: Vec<u8>,
    key: SignerKey,
}

/// How the PKI is made.
pub struct PkiSpec {
    /// The signer's key and its certificate's algorithm: P-256 or P-384.
    pub signer_alg: &'static SignatureAlgorithm,
    pub intermediate: bool,
    /// The intermediate has basicConstraints cA (false: a mere end-entity).
    pub intermediate_is_ca: bool,
    pub anchor_years: (i32, i32),
    pub signer_years: (i32, i32),
}

impl Default for PkiSpec {
    fn default() -> PkiSpec {
        PkiSpec {
            signer_alg: &PKCS_ECDSA_P256_SHA256,
            intermediate: false,
            intermediate_is_ca: true,
            anchor_years: (2020, 2040),
            signer_years: (2024, 2027),
        }
    }
}

fn params(cn: &str, years: (i32, i32), ca: bool) -> CertificateParams {
    let mut p = CertificateParams::new(Vec::<String>::new()).expect("params");
    p.distinguished_name.push(DnType::CommonName, cn);
    p.distinguished_name.push(DnType::CountryName, "UT");
    p.not_before = rcgen::date_time_ymd(years.0, 1, 1);
    p.not_after = rcgen::date_time_ymd(years.1, 1, 1);
    p.is_ca = if ca {
        IsCa::Ca(BasicConstraints::Unconstrained)
    } else {
        IsCa::ExplicitNoCa
    };
    p
}

impl VicalPki {
    /// P-256 anchor (2020–2040) signing a P-256 VICAL signer (2024–2027) directly.
    pub fn new() -> VicalPki {
        VicalPki::with(PkiSpec::default())
    }

    pub fn with(spec: PkiSpec) -> VicalPki {
        let anchor_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
        let anchor = params("Test VICAL Root", spec.anchor_years, true)
            .self_signed(&anchor_key)
            .expect("anchor");
        let signer_key = KeyPair::generate_for(spec.signer_alg).expect("key");
        let signer_params = params("Test VICAL Signer", spec.signer_years, false);
        let (signer, intermediate_der) = if spec.intermediate {
            let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
            let cert = params(
                "Test VICAL Issuing CA",
                (2021, 2039),
                spec.intermediate_is_ca,
            )
            .signed_by(&key, &anchor, &anchor_key)
            .expect("intermediate");
            let signer = signer_params
                .signed_by(&signer_key, &cert, &key)
                .expect("signer");
            (signer, Some(cert.der().to_vec()))
        } else {
            let signer = signer_params
                .signed_by(&signer_key, &anchor, &anchor_key)
                .expect("signer");
            (signer, None)
        };
        let pkcs8 = signer_key.serialize_der();
        let key = if std::ptr::eq(spec.signer_alg, &PKCS_ECDSA_P384_SHA384) {
            SignerKey::P384(p384::ecdsa::SigningKey::from_pkcs8_der(&pkcs8).expect("p384"))
        } else {
            SignerKey::P256(p256::ecdsa::SigningKey::from_pkcs8_der(&pkcs8).expect("p256"))
        };
        VicalPki {
            anchor_pem: anchor.pem(),
            anchor_der: anchor.der().to_vec(),
            intermediate_der,
            signer_der: signer.der().to_vec(),
            key,
        }
    }

    pub fn anchors(&self) -> TrustAnchors {
        TrustAnchors::from_pem(&self.anchor_pem).expect("anchors")
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        match &self.key {
            SignerKey::P256(k) => Signer::<p256::ecdsa::Signature>::sign(k, message).to_vec(),
            SignerKey::P384(k) => Signer::<p384::ecdsa::Signature>::sign(k, message).to_vec(),
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
pub struct Entry {
    pub certificate: Vec<u8>,
    pub doc_types: Option<Vec<String>>,
}

impl Entry {
    pub fn mdl(certificate: &[u8]) -> Entry {
        Entry::with(certificate, Some(&[MDL_DOC_TYPE]))
    }

    pub fn with(certificate: &[u8], doc_types: Option<&[&str]>) -> Entry {
        Entry {
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
    pub entries: Vec<Entry>,
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

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

impl Vical {
    pub fn new(entries: Vec<Entry>) -> Vical {
        Vical {
            entries,
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
        let tdate = |s: &str| Value::Tag(0, Box::new(text(s)));
        let infos = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut m = vec![
                    (text("certificate"), Value::Bytes(e.certificate.clone())),
                    (text("serialNumber"), Value::Bytes(vec![i as u8 + 1])),
                    (text("ski"), Value::Bytes(vec![0x5c; 20])),
                ];
                if let Some(types) = &e.doc_types {
                    let types = types.iter().map(|t| text(t)).collect();
                    m.push((text("docType"), Value::Array(types)));
                }
                m.push((text("issuingCountry"), text("UT")));
                Value::Map(m)
            })
            .collect();
        let mut map = vec![
            (text("version"), text("1.0")),
            (text("vicalProvider"), text("Test VICAL Provider")),
            (text("date"), tdate("2025-05-01T12:00:00Z")),
            (text("vicalIssueID"), Value::from(42)),
            (text("nextUpdate"), tdate("2025-06-01T12:00:00Z")),
            (text("certificateInfos"), Value::Array(infos)),
        ];
        (self.edit)(&mut map);
        enc(&Value::Map(map))
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
        let protected = enc(&Value::Map(protected));
        let payload = self.payload();
        let sig_structure = enc(&Value::Array(vec![
            text("Signature1"),
            Value::Bytes(protected.clone()),
            Value::Bytes(vec![]),
            Value::Bytes(payload.clone()),
        ]));
        let mut signature = pki.sign(&sig_structure);
        if self.bad_signature {
            signature[7] ^= 0x01;
        }
        let sent = if self.detached {
            Value::Null
        } else if self.tamper_payload {
            let at = payload
                .windows(4)
                .position(|w| w == b"Test")
                .expect("provider");
            let mut p = payload;
            p[at] = b'B';
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
        enc(&if self.tagged {
            Value::Tag(18, Box::new(sign1))
        } else {
            sign1
        })
    }
}
