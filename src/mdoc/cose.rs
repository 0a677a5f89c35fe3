//! COSE_Sign1 (RFC 9052), ES256 for presentations (ES384 too for a VICAL, see
//! [`Sign1::parse_any_alg`]), and EC2 P-256 COSE_Key.

use ciborium::Value;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};

use super::cbor::{self, Enc, Lookup};
use super::x509::EcKey;
use super::PresentationError;

/// COSE header labels and values used here (RFC 9052, RFC 9053, RFC 9360).
const LABEL_ALG: i64 = 1;
const LABEL_CRIT: i64 = 2;
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

/// A parsed COSE_Sign1. `protected` is the header bstr exactly as received: the
/// signature covers those bytes, so they are never re-encoded.
#[derive(Debug)]
pub(crate) struct Sign1<'a> {
    pub protected: &'a [u8],
    protected_map: Vec<(Value, Value)>,
    unprotected: &'a [(Value, Value)],
    /// None for a detached (nil) payload.
    pub payload: Option<&'a [u8]>,
    signature: &'a [u8],
}

impl<'a> Sign1<'a> {
    /// Parses a COSE_Sign1 (tag 18 optional, as ISO/IEC 18013-5 sends it untagged) and
    /// requires `alg: ES256` in the protected header (ISO forbids it elsewhere).
    pub(crate) fn parse(value: &'a Value) -> Result<Sign1<'a>, Sign1Error> {
        match Sign1::parse_any_alg(value)? {
            (sign1, Some(ALG_ES256)) => Ok(sign1),
            _ => Err(Sign1Error::NotEs256),
        }
    }

    /// Parses a COSE_Sign1 as [`Sign1::parse`] does, whatever its algorithm: returns it
    /// with the protected header's `alg` (None when absent or not an integer), for the
    /// caller to judge.
    pub(crate) fn parse_any_alg(value: &'a Value) -> Result<(Sign1<'a>, Option<i64>), Sign1Error> {
        let value = match value {
            Value::Tag(COSE_SIGN1_TAG, inner) => inner.as_ref(),
            other => other,
        };
        let [protected, unprotected, payload, signature] = value
            .as_array()
            .map(Vec::as_slice)
            .ok_or(Sign1Error::Malformed("not a cose_sign1 array"))?
        else {
            return Err(Sign1Error::Malformed("not a four-element cose_sign1"));
        };
        let protected = protected
            .as_bytes()
            .ok_or(Sign1Error::Malformed("protected header is not a bstr"))?;
        // RFC 9052 section 3: a zero-length bstr stands for an empty header map.
        let protected_map = if protected.is_empty() {
            Vec::new()
        } else {
            match cbor::decode(protected) {
                Some(Value::Map(m)) => m,
                _ => return Err(Sign1Error::Malformed("protected header is not a cbor map")),
            }
        };
        let unprotected = cbor::as_map(unprotected)
            .ok_or(Sign1Error::Malformed("unprotected header is not a map"))?;
        let payload = match payload {
            Value::Null => None,
            Value::Bytes(b) => Some(b.as_slice()),
            _ => return Err(Sign1Error::Malformed("payload is neither bstr nor nil")),
        };
        let signature = signature
            .as_bytes()
            .ok_or(Sign1Error::Malformed("signature is not a bstr"))?;
        let alg = match cbor::get_int(&protected_map, LABEL_ALG) {
            Ok(alg) => cbor::int(alg),
            Err(Lookup::Absent) => None,
            Err(Lookup::Duplicate) => {
                return Err(Sign1Error::Malformed("duplicate alg in protected header"))
            }
        };
        // RFC 9052 section 3.1: parameters marked critical must be understood; we know none.
        if !matches!(
            cbor::get_int(&protected_map, LABEL_CRIT),
            Err(Lookup::Absent)
        ) {
            return Err(Sign1Error::Malformed(
                "critical header parameters are not supported",
            ));
        }
        let sign1 = Sign1 {
            protected,
            protected_map,
            unprotected,
            payload,
            signature: signature.as_slice(),
        };
        Ok((sign1, alg))
    }

    /// The x5chain header (label 33): one certificate as a bstr, or an array of them,
    /// the first being the signer's. ISO/IEC 18013-5 puts it in the unprotected header;
    /// RFC 9360 also allows the protected one.
    pub(crate) fn x5chain_leaf(&self) -> Result<&[u8], PresentationError> {
        let found = match cbor::get_int(self.unprotected, LABEL_X5CHAIN) {
            Err(Lookup::Absent) => cbor::get_int(&self.protected_map, LABEL_X5CHAIN),
            other => other,
        };
        match found {
            Ok(Value::Bytes(der)) => Ok(der.as_slice()),
            Ok(Value::Array(chain)) => match chain.first() {
                Some(Value::Bytes(der)) => Ok(der.as_slice()),
                Some(_) => Err(PresentationError::MalformedCertificate),
                None => Err(PresentationError::MissingCertificate),
            },
            Ok(_) | Err(Lookup::Duplicate) => Err(PresentationError::MalformedCertificate),
            Err(Lookup::Absent) => Err(PresentationError::MissingCertificate),
        }
    }

    /// Verifies the ES256 signature over `Sig_structure = ["Signature1", protected,
    /// external_aad = h'', payload]`, with `detached` as the payload when the structure
    /// carries none. The signature is raw `r || s` (64 bytes), as COSE defines it.
    pub(crate) fn verify(&self, key: &VerifyingKey, detached: Option<&[u8]>) -> bool {
        let Some(signed) = self.sig_structure(detached) else {
            return false;
        };
        let Ok(signature) = Signature::from_slice(self.signature) else {
            return false;
        };
        key.verify(&signed, &signature).is_ok()
    }

    /// Verifies the signature over the attached payload with a P-256 key (ES256: raw
    /// 64-byte `r || s`, SHA-256) or a P-384 key (ES384: 96 bytes, SHA-384). Which
    /// algorithm the header must name for which key is the caller's rule.
    pub(crate) fn verify_ec(&self, key: &EcKey) -> bool {
        let Some(signed) = self.sig_structure(None) else {
            return false;
        };
        match key {
            EcKey::P256(k) => {
                Signature::from_slice(self.signature).is_ok_and(|s| k.verify(&signed, &s).is_ok())
            }
            EcKey::P384(k) => p384::ecdsa::Signature::from_slice(self.signature)
                .is_ok_and(|s| k.verify(&signed, &s).is_ok()),
        }
    }

    /// `Sig_structure = ["Signature1", protected, external_aad = h'', payload]`, with
    /// `detached` as the payload when the structure carries none.
    fn sig_structure(&self, detached: Option<&[u8]>) -> Option<Vec<u8>> {
        let payload = self.payload.or(detached)?;
        let mut enc = Enc::default();
        enc.array(4)
            .text("Signature1")
            .bytes(self.protected)
            .bytes(&[])
            .bytes(payload);
        Some(enc.finish())
    }

    /// Every certificate of the x5chain header (label 33), the signer's first: a bstr
    /// (one certificate) or a non-empty array of bstrs, looked up as
    /// [`Sign1::x5chain_leaf`] does. None when absent; Err when ill-formed.
    pub(crate) fn x5chain(&self) -> Option<Result<Vec<&[u8]>, &'static str>> {
        let found = match cbor::get_int(self.unprotected, LABEL_X5CHAIN) {
            Err(Lookup::Absent) => cbor::get_int(&self.protected_map, LABEL_X5CHAIN),
            other => other,
        };
        Some(match found {
            Err(Lookup::Absent) => return None,
            Err(Lookup::Duplicate) => Err("x5chain appears twice"),
            Ok(Value::Bytes(der)) => Ok(vec![der.as_slice()]),
            Ok(Value::Array(chain)) if chain.is_empty() => Err("x5chain is an empty array"),
            Ok(Value::Array(chain)) => chain
                .iter()
                .map(|c| c.as_bytes().map(Vec::as_slice))
                .collect::<Option<Vec<_>>>()
                .ok_or("x5chain holds a non-bstr"),
            Ok(_) => Err("x5chain is neither bstr nor array"),
        })
    }
}

/// A COSE_Key that is EC2 (kty 2) on P-256 (crv 1) with 32-byte x and y. Compressed
/// points (y as a bool) are not accepted: ISO/IEC 18013-5 devices send both.
pub(crate) fn p256_key(value: &Value) -> Option<VerifyingKey> {
    const KTY: i64 = 1;
    const CRV: i64 = -1;
    const X: i64 = -2;
    const Y: i64 = -3;
    let map = cbor::as_map(value)?;
    let field = |label| cbor::get_int(map, label).ok();
    if field(KTY).and_then(cbor::int) != Some(2) || field(CRV).and_then(cbor::int) != Some(1) {
        return None;
    }
    let x = field(X)?.as_bytes().filter(|b| b.len() == 32)?;
    let y = field(Y)?.as_bytes().filter(|b| b.len() == 32)?;
    let mut sec1 = [0u8; 65];
    sec1[0] = 0x04;
    sec1.get_mut(1..33)?.copy_from_slice(x);
    sec1.get_mut(33..65)?.copy_from_slice(y);
    // Rejects points not on the curve and the identity.
    VerifyingKey::from_sec1_bytes(&sec1).ok()
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
