//! A VICAL publisher (ISO/IEC 18013-5 Annex C.1.7) for the `--mdl-vical` tests: an anchor
//! CA (the `--mdl-vical-anchor` PEM), optionally an intermediate CA, a VICAL signer, and
//! the signed list of IACA roots, built by hand with rcgen, p256 and ciborium.
//!
//! ```text
//! COSE_Sign1 [ protected {1: -7}, unprotected {33: x5chain}, payload, signature ]
//! payload VICAL = { "version", "vicalProvider", "date": tdate, "vicalIssueID",
//!                   "nextUpdate": tdate, "certificateInfos": [ { "certificate": DER,
//!                   "serialNumber": biguint, "ski": bstr, ? "docType": [+ tstr] } ] }
//! ```
//!
//! Most tests need only [`mdl_vical`]: the VICAL bytes and its anchor PEM for some IACA
//! roots. [`VicalPublisher`] and [`VicalKnobs`] make the wrong ones.

use super::encode::{cbor, cose_sign1, flip_signature_bit, map, tdate, text};
use super::mint::{p256_key, set_validity};
use super::{DAY, ES256};
use ciborium::Value;
use p256::ecdsa::SigningKey;
use std::sync::Arc;

/// The mDL docType, which admits an entry's certificate as an mDL anchor.
pub const MDL_DOCTYPE: &str = "org.iso.18013.5.1.mDL";

/// A VICAL admitting each of `iaca_roots` (DER) for mDL, signed at `now` by a fresh
/// publisher: `(vical bytes, anchor PEM)` — the `--mdl-vical` and `--mdl-vical-anchor`
/// files' contents.
pub fn mdl_vical(iaca_roots: &[Vec<u8>], now: i64) -> (Vec<u8>, String) {
    let publisher = VicalPublisher::new(now);
    let entries: Vec<VicalEntry> = iaca_roots.iter().map(|d| VicalEntry::mdl(d)).collect();
    let bytes = publisher.vical(&entries, &VicalKnobs::default());
    (bytes, publisher.anchor_pem.clone())
}

/// One `CertificateInfo`.
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
        VicalEntry {
            certificate: certificate.to_vec(),
            doc_types: Some(doc_types.iter().map(|t| (*t).to_owned()).collect()),
        }
    }

    /// Without a `docType` list.
    pub fn any_doc_type(certificate: &[u8]) -> Self {
        VicalEntry {
            certificate: certificate.to_vec(),
            doc_types: None,
        }
    }
}

/// Ways to spoil a VICAL; the default is a valid one.
#[derive(Clone, Debug, Default)]
pub struct VicalKnobs {
    /// Flip one bit of the signature.
    pub bad_signature: bool,
    /// No `x5chain` header: unsigned as far as the anchor can tell.
    pub no_x5chain: bool,
    /// Signed by another publisher's signer (not under this anchor), its chain sent.
    pub wrong_signer: bool,
    /// Change one byte of the payload after signing.
    pub tamper_payload: bool,
    /// Wrap in COSE_Sign1's tag 18 (valid either way).
    pub tagged: bool,
}

struct Ca {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

/// A VICAL provider: anchor → (intermediate →) signer.
pub struct VicalPublisher {
    /// The anchor CA, PEM: the `--mdl-vical-anchor` file's content.
    pub anchor_pem: String,
    pub anchor_der: Vec<u8>,
    pub intermediate_der: Option<Vec<u8>>,
    pub signer_der: Vec<u8>,
    pub(super) signer_key: SigningKey,
    anchor: Arc<Ca>,
    now: i64,
}

impl VicalPublisher {
    /// Anchor valid `now - 30d ..= now + 5y`; signer `now - 30d ..= now + 365d`, issued
    /// by the anchor directly.
    pub fn new(now: i64) -> Self {
        Self::make(now, false)
    }

    /// As [`VicalPublisher::new`], the signer issued by an intermediate CA.
    pub fn with_intermediate(now: i64) -> Self {
        Self::make(now, true)
    }

    fn make(now: i64, intermediate: bool) -> Self {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = ca_params(
            "agegate test VICAL Root",
            now - 30 * DAY,
            now + 5 * 365 * DAY,
        )
        .self_signed(&key)
        .unwrap();
        let anchor = Arc::new(Ca { cert, key });
        let intermediate = intermediate.then(|| {
            let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
            let cert = ca_params(
                "agegate test VICAL Issuing CA",
                now - 30 * DAY,
                now + 2 * 365 * DAY,
            )
            .signed_by(&key, &anchor.cert, &anchor.key)
            .unwrap();
            Ca { cert, key }
        });
        Self::with_signer(anchor, intermediate, now, now - 30 * DAY, now + 365 * DAY)
    }

    /// The same anchor, a new signer (issued by the anchor) valid over `[not_before,
    /// not_after]` (Unix seconds): for expired and not-yet-valid signers.
    pub fn with_signer_validity(&self, not_before: i64, not_after: i64) -> Self {
        Self::with_signer(self.anchor.clone(), None, self.now, not_before, not_after)
    }

    fn with_signer(
        anchor: Arc<Ca>,
        intermediate: Option<Ca>,
        now: i64,
        not_before: i64,
        not_after: i64,
    ) -> Self {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CountryName, "UT");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "agegate test VICAL Signer");
        params.is_ca = rcgen::IsCa::ExplicitNoCa;
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
        set_validity(&mut params, not_before, not_after);
        let issuer = intermediate.as_ref().unwrap_or(&anchor);
        let cert = params.signed_by(&key, &issuer.cert, &issuer.key).unwrap();
        VicalPublisher {
            anchor_pem: anchor.cert.pem(),
            anchor_der: anchor.cert.der().to_vec(),
            intermediate_der: intermediate.map(|i| i.cert.der().to_vec()),
            signer_der: cert.der().to_vec(),
            signer_key: p256_key(&key),
            anchor,
            now,
        }
    }

    /// The payload (`VICAL` map) for `entries`, dated `now`, CBOR-encoded.
    pub fn payload(&self, entries: &[VicalEntry]) -> Vec<u8> {
        let infos = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut info = vec![
                    ("certificate", Value::Bytes(e.certificate.clone())),
                    ("serialNumber", Value::Bytes(vec![i as u8 + 1])),
                    (
                        "ski",
                        Value::Bytes(super::sha256(&e.certificate)[..20].to_vec()),
                    ),
                ];
                if let Some(types) = &e.doc_types {
                    info.push((
                        "docType",
                        Value::Array(types.iter().map(|t| text(t)).collect()),
                    ));
                }
                map(info)
            })
            .collect();
        cbor(&map(vec![
            ("version", text("1.0")),
            ("vicalProvider", text("agegate test VICAL provider")),
            ("date", tdate(self.now)),
            ("vicalIssueID", Value::from(7)),
            ("nextUpdate", tdate(self.now + 30 * DAY)),
            ("certificateInfos", Value::Array(infos)),
        ]))
    }

    /// The VICAL's bytes: a COSE_Sign1 (ES256) over [`VicalPublisher::payload`].
    pub fn vical(&self, entries: &[VicalEntry], knobs: &VicalKnobs) -> Vec<u8> {
        let rogue;
        let signer = if knobs.wrong_signer {
            rogue = VicalPublisher::new(self.now);
            &rogue
        } else {
            self
        };
        let mut chain = vec![Value::Bytes(signer.signer_der.clone())];
        chain.extend(
            signer
                .intermediate_der
                .iter()
                .map(|d| Value::Bytes(d.clone())),
        );
        let unprotected = if knobs.no_x5chain {
            vec![]
        } else {
            vec![(Value::from(33), Value::Array(chain))]
        };
        let payload = self.payload(entries);
        let mut sign1 = cose_sign1(&signer.signer_key, ES256, unprotected, &payload, false);
        if knobs.bad_signature {
            flip_signature_bit(&mut sign1);
        }
        if knobs.tamper_payload {
            if let Value::Array(parts) = &mut sign1 {
                if let Some(Value::Bytes(p)) = parts.get_mut(2) {
                    let at = p.windows(7).position(|w| w == b"agegate").unwrap();
                    p[at] = b'A';
                }
            }
        }
        cbor(&if knobs.tagged {
            Value::Tag(18, Box::new(sign1))
        } else {
            sign1
        })
    }
}

fn ca_params(cn: &str, not_before: i64, not_after: i64) -> rcgen::CertificateParams {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CountryName, "UT");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    set_validity(&mut params, not_before, not_after);
    params
}
