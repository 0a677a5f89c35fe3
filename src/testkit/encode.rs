//! CBOR / COSE building blocks, the OpenID4VP session transcript, and RFC 3339 dates.

use super::DAY;
use ciborium::Value;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use sha2::{Digest as _, Sha256};

pub fn cbor(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(v, &mut out).unwrap();
    out
}

pub fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

pub fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (text(k), v)).collect())
}

/// #6.24(bstr .cbor v)
pub fn tag24(v: &Value) -> Value {
    Value::Tag(24, Box::new(Value::Bytes(cbor(v))))
}

/// tdate = #6.0(tstr), RFC 3339 without fractions, UTC.
pub fn tdate(t: i64) -> Value {
    Value::Tag(0, Box::new(Value::Text(rfc3339(t))))
}

/// `#6.24(bstr)` around `content` with a non-preferred 4-byte bstr length (`5a`):
/// valid CBOR that a re-encoding verifier would hash differently.
pub fn long_tag24(content: &[u8]) -> Vec<u8> {
    let mut out = vec![0xd8, 0x18, 0x5a];
    out.extend_from_slice(&(content.len() as u32).to_be_bytes());
    out.extend_from_slice(content);
    out
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// COSE_Key of a P-256 public key: {1 (kty): 2 (EC2), -1 (crv): 1 (P-256), -2: x, -3: y}.
pub fn cose_key(key: &VerifyingKey) -> Value {
    let point = key.to_encoded_point(false);
    Value::Map(vec![
        (Value::Integer(1.into()), Value::Integer(2.into())),
        (Value::Integer((-1).into()), Value::Integer(1.into())),
        (
            Value::Integer((-2).into()),
            Value::Bytes(point.x().unwrap().to_vec()),
        ),
        (
            Value::Integer((-3).into()),
            Value::Bytes(point.y().unwrap().to_vec()),
        ),
    ])
}

/// Sig_structure for COSE_Sign1 (RFC 9052 section 4.4), encoded:
/// ["Signature1", body_protected, external_aad = h'', payload].
pub fn sig_structure(protected: &[u8], payload: &[u8]) -> Vec<u8> {
    cbor(&Value::Array(vec![
        text("Signature1"),
        Value::Bytes(protected.to_vec()),
        Value::Bytes(vec![]),
        Value::Bytes(payload.to_vec()),
    ]))
}

/// An untagged COSE_Sign1 `[protected, unprotected, payload / nil, signature]`, ES256
/// (`r || s`, 64 bytes) over `payload`; `detached` leaves nil in the payload slot.
pub fn cose_sign1(
    key: &SigningKey,
    alg: i64,
    unprotected: Vec<(Value, Value)>,
    payload: &[u8],
    detached: bool,
) -> Value {
    let protected = cbor(&Value::Map(vec![(
        Value::Integer(1.into()),
        Value::Integer(alg.into()),
    )]));
    let signature: Signature = key.sign(&sig_structure(&protected, payload));
    Value::Array(vec![
        Value::Bytes(protected),
        Value::Map(unprotected),
        if detached {
            Value::Null
        } else {
            Value::Bytes(payload.to_vec())
        },
        Value::Bytes(signature.to_bytes().to_vec()),
    ])
}

/// Flip the lowest bit of `s` in a COSE_Sign1's signature.
pub fn flip_signature_bit(sign1: &mut Value) {
    match sign1 {
        Value::Array(parts) => match parts.get_mut(3) {
            Some(Value::Bytes(sig)) => *sig.last_mut().unwrap() ^= 0x01,
            _ => unreachable!(),
        },
        _ => unreachable!(),
    }
}

/// OpenID4VP 1.0 Appendix B.2.6.1 (invocation via redirects):
/// `[null, null, ["OpenID4VPHandover", sha256(cbor([client_id, nonce, jwk_thumbprint / null, response_uri]))]]`.
pub fn session_transcript(
    client_id: &str,
    nonce: &str,
    jwk_thumbprint: Option<&[u8]>,
    response_uri: &str,
) -> Value {
    let info = Value::Array(vec![
        text(client_id),
        text(nonce),
        jwk_thumbprint.map_or(Value::Null, |t| Value::Bytes(t.to_vec())),
        text(response_uri),
    ]);
    Value::Array(vec![
        Value::Null,
        Value::Null,
        Value::Array(vec![
            text("OpenID4VPHandover"),
            Value::Bytes(sha256(&cbor(&info)).to_vec()),
        ]),
    ])
}
/// `YYYY-MM-DDTHH:MM:SSZ` of Unix seconds (proleptic Gregorian, UTC).
pub fn rfc3339(t: i64) -> String {
    let (days, secs) = (t.div_euclid(DAY), t.rem_euclid(DAY));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}
