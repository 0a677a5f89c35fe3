//! COSE_Sign1 (RFC 9052), ES256 for presentations (ES384 too for a VICAL, see
//! [`Sign1::parse_any_alg`]), and EC2 P-256 COSE_Key, through the `coset` crate: it
//! keeps the protected header's bytes as received and builds the Sig_structure. What
//! stays here is the ISO/IEC 18013-5 rules: which algorithms, where x5chain is, and
//! errors that name the part at fault.

use ciborium::Value;
use coset::iana::{self, EnumI64};
use coset::{
    AsCborValue, CborSerializable, CoseKey, CoseKeyBuilder, CoseSign1, CoseSign1Builder,
    HeaderBuilder, KeyType, Label,
};
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};

use super::PresentationError;
use crate::pki::PublicKey;

/// COSE header labels and values used here (RFC 9052, RFC 9053, RFC 9360).
const LABEL_X5CHAIN: i64 = 33;
pub(crate) const ALG_ES256: i64 = -7;
pub(crate) const ALG_ES384: i64 = -35;
const COSE_SIGN1_TAG: u64 = 18;

/// Why a COSE_Sign1 cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sign1Error {
    /// Not the four-element structure, or a part of the wrong type; names the part.
    Malformed(&'static str),
    /// The protected header does not name ES256.
    NotEs256,
}

/// A parsed COSE_Sign1; the protected header keeps its bytes as received, since the
/// signature covers those bytes.
#[derive(Debug)]
pub(crate) struct Sign1 {
    inner: CoseSign1,
}

impl Sign1 {
    /// Parses a COSE_Sign1 (tag 18 optional, as ISO/IEC 18013-5 sends it untagged) and
    /// requires `alg: ES256` in the protected header (ISO forbids it elsewhere).
    pub(crate) fn parse(value: &Value) -> Result<Sign1, Sign1Error> {
        match Sign1::parse_any_alg(value)? {
            (sign1, Some(ALG_ES256)) => Ok(sign1),
            _ => Err(Sign1Error::NotEs256),
        }
    }

    /// Parses a COSE_Sign1 as [`Sign1::parse`] does, whatever its algorithm: returns it
    /// with the protected header's `alg` (None when absent or not an integer), for the
    /// caller to judge.
    pub(crate) fn parse_any_alg(value: &Value) -> Result<(Sign1, Option<i64>), Sign1Error> {
        let value = match value {
            Value::Tag(COSE_SIGN1_TAG, inner) => inner.as_ref(),
            other => other,
        };
        // The parts' types are checked first so that the error names the part; coset
        // then decodes the headers (refusing repeated labels).
        let [protected, unprotected, payload, signature] = value
            .as_array()
            .map(Vec::as_slice)
            .ok_or(Sign1Error::Malformed("not a cose_sign1 array"))?
        else {
            return Err(Sign1Error::Malformed("not a four-element cose_sign1"));
        };
        if !protected.is_bytes() {
            return Err(Sign1Error::Malformed("protected header is not a bstr"));
        }
        if !unprotected.is_map() {
            return Err(Sign1Error::Malformed("unprotected header is not a map"));
        }
        if !(payload.is_null() || payload.is_bytes()) {
            return Err(Sign1Error::Malformed("payload is neither bstr nor nil"));
        }
        if !signature.is_bytes() {
            return Err(Sign1Error::Malformed("signature is not a bstr"));
        }
        let inner = CoseSign1::from_cbor_value(value.clone()).map_err(|_| {
            Sign1Error::Malformed("a header is not a cose header map, or repeats a label")
        })?;
        // RFC 9052 section 3.1: parameters marked critical must be understood; we know none.
        if !inner.protected.header.crit.is_empty() {
            return Err(Sign1Error::Malformed(
                "critical header parameters are not supported",
            ));
        }
        let alg = match &inner.protected.header.alg {
            Some(coset::Algorithm::Assigned(alg)) => Some(alg.to_i64()),
            Some(coset::Algorithm::PrivateUse(alg)) => Some(*alg),
            Some(coset::Algorithm::Text(_)) | None => None,
        };
        Ok((Sign1 { inner }, alg))
    }

    /// The attached payload; None for a detached (nil) one.
    pub(crate) fn payload(&self) -> Option<&[u8]> {
        self.inner.payload.as_deref()
    }

    /// A parameter of the protected header other than the ones coset names (`typ`, 16,
    /// say); None when absent.
    pub(crate) fn protected_header(&self, label: Label) -> Option<&Value> {
        self.inner
            .protected
            .header
            .rest
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, value)| value)
    }

    /// The x5chain header (label 33): one certificate as a bstr, or an array of them,
    /// the first being the signer's. ISO/IEC 18013-5 puts it in the unprotected header;
    /// RFC 9360 also allows the protected one.
    pub(crate) fn x5chain_leaf(&self) -> Result<&[u8], PresentationError> {
        match self.x5chain_value() {
            Some(Value::Bytes(der)) => Ok(der.as_slice()),
            Some(Value::Array(chain)) => match chain.first() {
                Some(Value::Bytes(der)) => Ok(der.as_slice()),
                Some(_) => Err(PresentationError::MalformedCertificate),
                None => Err(PresentationError::MissingCertificate),
            },
            Some(_) => Err(PresentationError::MalformedCertificate),
            None => Err(PresentationError::MissingCertificate),
        }
    }

    fn x5chain_value(&self) -> Option<&Value> {
        fn find(rest: &[(Label, Value)]) -> Option<&Value> {
            rest.iter()
                .find(|(label, _)| *label == Label::Int(LABEL_X5CHAIN))
                .map(|(_, value)| value)
        }
        find(&self.inner.unprotected.rest).or_else(|| find(&self.inner.protected.header.rest))
    }

    /// `Sig_structure = ["Signature1", protected, external_aad = h'', payload]`, with
    /// `detached` as the payload when the structure carries none.
    fn signed_data(&self, detached: Option<&[u8]>) -> Option<Vec<u8>> {
        match (&self.inner.payload, detached) {
            (Some(_), _) => Some(self.inner.tbs_data(&[])),
            (None, Some(detached)) => Some(self.inner.tbs_detached_data(detached, &[])),
            (None, None) => None,
        }
    }

    /// Verifies the ES256 signature (raw `r || s`, 64 bytes, as COSE defines it), with
    /// `detached` as the payload when the structure carries none.
    pub(crate) fn verify(&self, key: &VerifyingKey, detached: Option<&[u8]>) -> bool {
        let Some(signed) = self.signed_data(detached) else {
            return false;
        };
        Signature::from_slice(&self.inner.signature)
            .is_ok_and(|signature| key.verify(&signed, &signature).is_ok())
    }

    /// Verifies the signature over the attached payload with a P-256 key (ES256: raw
    /// 64-byte `r || s`, SHA-256) or a P-384 key (ES384: 96 bytes, SHA-384). Which
    /// algorithm the header must name for which key is the caller's rule.
    pub(crate) fn verify_ec(&self, key: &PublicKey) -> bool {
        if self.inner.payload.is_none() {
            return false;
        }
        let signed = self.inner.tbs_data(&[]);
        let signature = &self.inner.signature;
        match key {
            PublicKey::P256(k) => {
                Signature::from_slice(signature).is_ok_and(|s| k.verify(&signed, &s).is_ok())
            }
            PublicKey::P384(k) => p384::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|s| k.verify(&signed, &s).is_ok()),
            PublicKey::Rsa(_) => false,
        }
    }

    /// Every certificate of the x5chain header (label 33), the signer's first: a bstr
    /// (one certificate) or a non-empty array of bstrs, looked up as
    /// [`Sign1::x5chain_leaf`] does. None when absent; Err when ill-formed.
    pub(crate) fn x5chain(&self) -> Option<Result<Vec<&[u8]>, &'static str>> {
        Some(match self.x5chain_value()? {
            Value::Bytes(der) => Ok(vec![der.as_slice()]),
            Value::Array(chain) if chain.is_empty() => Err("x5chain is an empty array"),
            Value::Array(chain) => chain
                .iter()
                .map(|c| c.as_bytes().map(Vec::as_slice))
                .collect::<Option<Vec<_>>>()
                .ok_or("x5chain holds a non-bstr"),
            _ => Err("x5chain is neither bstr nor array"),
        })
    }
}

/// An untagged COSE_Sign1 (as ISO/IEC 18013-5 sends `readerAuth`) by `key`: protected
/// header `{1: -7}` (ES256), unprotected `{33: x5chain}` (one bstr for a single
/// certificate, else an array, RFC 9360), nil payload, the ES256 signature (RFC 6979,
/// deterministic) over the Sig_structure with `detached_payload`.
pub(crate) fn sign1_detached_es256(
    key: &SigningKey,
    chain: &[Vec<u8>],
    detached_payload: &[u8],
) -> Vec<u8> {
    let x5chain = match chain {
        [single] => Value::Bytes(single.clone()),
        chain => Value::Array(chain.iter().cloned().map(Value::Bytes).collect()),
    };
    CoseSign1Builder::new()
        .protected(
            HeaderBuilder::new()
                .algorithm(iana::Algorithm::ES256)
                .build(),
        )
        .unprotected(HeaderBuilder::new().value(LABEL_X5CHAIN, x5chain).build())
        .create_detached_signature(detached_payload, &[], |signed| {
            let signature: Signature = key.sign(signed);
            signature.to_vec()
        })
        .build()
        .to_vec()
        // Encoding a structure built here into a Vec does not fail.
        .unwrap_or_default()
}

/// A COSE_Key that is EC2 (kty 2) on P-256 (crv 1) with 32-byte x and y. Compressed
/// points (y as a bool) are not accepted: ISO/IEC 18013-5 devices send both.
pub(crate) fn p256_key(value: &Value) -> Option<VerifyingKey> {
    let key = CoseKey::from_cbor_value(value.clone()).ok()?;
    if key.kty != KeyType::Assigned(iana::KeyType::EC2) {
        return None;
    }
    let param = |label: iana::Ec2KeyParameter| {
        key.params
            .iter()
            .find(|(l, _)| *l == Label::Int(label.to_i64()))
            .map(|(_, value)| value)
    };
    if param(iana::Ec2KeyParameter::Crv)?.as_integer()
        != Some(iana::EllipticCurve::P_256.to_i64().into())
    {
        return None;
    }
    let x = param(iana::Ec2KeyParameter::X)?.as_bytes()?;
    let y = param(iana::Ec2KeyParameter::Y)?.as_bytes()?;
    crate::jose::jwk::public_key_from_xy(x, y).map(VerifyingKey::from)
}

/// CBOR COSE_Key (RFC 9053 section 7.1.1) of an EC2 P-256 public key: `{1: 2, -1: 1,
/// -2: x, -3: y}`, in that (deterministic) order wherever it is built.
pub(crate) fn p256_cose_key(key: &p256::PublicKey) -> Vec<u8> {
    let (x, y) = crate::jose::jwk::coordinates(key);
    CoseKeyBuilder::new_ec2_pub_key(iana::EllipticCurve::P_256, x.to_vec(), y.to_vec())
        .build()
        .to_vec()
        // Encoding a key built here into a Vec does not fail.
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::{signature::Signer, SigningKey};

    fn key() -> SigningKey {
        SigningKey::from_slice(&[3u8; 32]).expect("key")
    }

    fn sign1(protected: Vec<u8>, payload: Value, sig: Vec<u8>) -> Value {
        Value::Array(vec![
            Value::Bytes(protected),
            Value::Map(vec![]),
            payload,
            Value::Bytes(sig),
        ])
    }

    fn sig_structure(protected: &[u8], payload: &[u8]) -> Vec<u8> {
        let v = Value::Array(vec![
            Value::Text("Signature1".into()),
            Value::Bytes(protected.to_vec()),
            Value::Bytes(vec![]),
            Value::Bytes(payload.to_vec()),
        ]);
        let mut out = Vec::new();
        ciborium::ser::into_writer(&v, &mut out).expect("encode");
        out
    }

    #[test]
    fn es256_sign1_verifies_over_the_protected_bytes_as_received() {
        // {1: -7} written with a non-preferred (two-byte) key encoding: still a valid
        // header, and the signature must be checked over exactly these bytes.
        let protected = vec![0xa1, 0x18, 0x01, 0x26];
        let sig: Signature = key().sign(&sig_structure(&protected, b"hello"));
        let v = sign1(protected, Value::Bytes(b"hello".to_vec()), sig.to_vec());
        let parsed = Sign1::parse(&v).expect("parse");
        assert!(parsed.verify(key().verifying_key(), None));
        let tagged = Value::Tag(18, Box::new(v));
        assert!(Sign1::parse(&tagged)
            .expect("tagged")
            .verify(key().verifying_key(), None));
    }

    #[test]
    fn detached_payload_is_supplied_by_the_verifier() {
        let protected = vec![0xa1, 0x01, 0x26];
        let sig: Signature = key().sign(&sig_structure(&protected, b"detached"));
        let v = sign1(protected, Value::Null, sig.to_vec());
        let parsed = Sign1::parse(&v).expect("parse");
        assert!(parsed.verify(key().verifying_key(), Some(b"detached")));
        assert!(!parsed.verify(key().verifying_key(), Some(b"other")));
        assert!(!parsed.verify(key().verifying_key(), None));
    }

    #[test]
    fn non_es256_algorithms_are_refused() {
        for protected in [vec![], vec![0xa1, 0x01, 0x38, 0x22], vec![0xa0]] {
            let v = sign1(protected, Value::Null, vec![0; 64]);
            assert_eq!(Sign1::parse(&v).err(), Some(Sign1Error::NotEs256));
        }
    }
}
