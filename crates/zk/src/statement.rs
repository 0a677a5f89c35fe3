//! The two circuits' public inputs ("legacy" layout of versions 6 and 7).
//!
//! Hash circuit (GF(2^128), every bit an element 0/1, LE within a byte): 1; per attribute,
//! v7: the CBOR text of the element id in 32 bytes, the CBOR value in 64, then 18 + len(id
//! CBOR) and 13 + len(value) as 8 bits each; v6: `cbor(id) ‖ cbor("elementValue") ‖ value` in
//! 96 bytes and its length in 8 bits; the 20-byte time; the 6 MACs and the MAC key as whole
//! elements.
//! Signature circuit (P-256 base field): 1, the issuer key's x and y, e2 = SHA-256 of the
//! device signature's COSE Sig_structure read big-endian, the 6 MACs and the MAC key as
//! 128 bits each.

use sha2::{Digest, Sha256};

use crate::field::Field;
use crate::fp256::Fp;
use crate::gf2_128::Gf2_128;

pub const SIG_STATEMENT_LEN: usize = 1 + 2 + 1 + 6 * 128 + 128;

pub fn hash_statement_len(version: u8, nattrs: usize) -> usize {
    let per = if version == 6 {
        96 * 8 + 8
    } else {
        (32 + 64 + 1 + 1) * 8
    };
    1 + nattrs * per + 20 * 8 + 6 + 1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementError {
    /// An attribute does not fit the circuit's fixed-size slots.
    AttributeTooLong,
    /// The timestamp is not 20 bytes (`YYYY-MM-DDTHH:MM:SSZ`).
    Timestamp,
    /// The issuer key is not a point of P-256.
    IssuerKey,
    /// The session's hash is not below p (probability 2^-32; the circuit cannot take it).
    SessionHash,
}

/// CBOR's head for a major type and length.
fn cbor_head(major: u8, len: usize, out: &mut Vec<u8>) {
    let m = major << 5;
    if len < 24 {
        out.push(m | len as u8);
    } else if len < 256 {
        out.extend_from_slice(&[m | 24, len as u8]);
    } else if len < 65536 {
        out.push(m | 25);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(m | 26);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn cbor_text(s: &str, out: &mut Vec<u8>) {
    cbor_head(3, s.len(), out);
    out.extend_from_slice(s.as_bytes());
}

fn cbor_bytes(b: &[u8], out: &mut Vec<u8>) {
    cbor_head(2, b.len(), out);
    out.extend_from_slice(b);
}

fn push_bits(bytes: &[u8], out: &mut Vec<Gf2_128>) {
    for b in bytes {
        for i in 0..8 {
            out.push(Gf2_128(((b >> i) & 1) as u128));
        }
    }
}

fn padded(data: &[u8], len: usize) -> Result<Vec<u8>, StatementError> {
    if data.len() > len {
        return Err(StatementError::AttributeTooLong);
    }
    let mut v = data.to_vec();
    v.resize(len, 0);
    Ok(v)
}

pub fn hash_statement(
    version: u8,
    attributes: &[(&str, &[u8])],
    timestamp: &str,
    macs: &[Gf2_128; 6],
    av: Gf2_128,
) -> Result<Vec<Gf2_128>, StatementError> {
    let mut out = vec![Gf2_128::ONE];
    for (id, value) in attributes {
        let mut id_cbor = Vec::new();
        cbor_text(id, &mut id_cbor);
        if version == 6 {
            let mut data = id_cbor;
            cbor_text("elementValue", &mut data);
            data.extend_from_slice(value);
            let len = u8::try_from(data.len()).map_err(|_| StatementError::AttributeTooLong)?;
            push_bits(&padded(&data, 96)?, &mut out);
            push_bits(&[len], &mut out);
        } else {
            let id_len =
                u8::try_from(18 + id_cbor.len()).map_err(|_| StatementError::AttributeTooLong)?;
            let value_len =
                u8::try_from(13 + value.len()).map_err(|_| StatementError::AttributeTooLong)?;
            push_bits(&padded(&id_cbor, 32)?, &mut out);
            push_bits(&padded(value, 64)?, &mut out);
            push_bits(&[id_len, value_len], &mut out);
        }
    }
    if timestamp.len() != 20 {
        return Err(StatementError::Timestamp);
    }
    push_bits(timestamp.as_bytes(), &mut out);
    out.extend_from_slice(macs);
    out.push(av);
    Ok(out)
}

/// SHA-256 of `["Signature1", h'A10126', h'', DeviceAuthenticationBytes]` where
/// `DeviceAuthenticationBytes = 24(<<["DeviceAuthentication", SessionTranscript, docType,
/// 24(<<{}>>)]>>)`: what the device key signed, with no device-signed elements.
pub fn device_signed_hash(session_transcript: &[u8], doc_type: &str) -> [u8; 32] {
    let mut da = vec![0x84];
    cbor_text("DeviceAuthentication", &mut da);
    da.extend_from_slice(session_transcript);
    cbor_text(doc_type, &mut da);
    da.extend_from_slice(&[0xd8, 0x18, 0x41, 0xa0]);
    let mut dab = vec![0xd8, 0x18];
    cbor_bytes(&da, &mut dab);
    let mut sig = vec![0x84];
    cbor_text("Signature1", &mut sig);
    cbor_bytes(&[0xa1, 0x01, 0x26], &mut sig);
    cbor_bytes(&[], &mut sig);
    cbor_bytes(&dab, &mut sig);
    Sha256::digest(&sig).into()
}

fn on_curve(x: Fp, y: Fp) -> bool {
    const B: [u8; 32] = [
        0x5a, 0xc6, 0x35, 0xd8, 0xaa, 0x3a, 0x93, 0xe7, 0xb3, 0xeb, 0xbd, 0x55, 0x76, 0x98, 0x86,
        0xbc, 0x65, 0x1d, 0x06, 0xb0, 0xcc, 0x53, 0xb0, 0xf6, 0x3b, 0xce, 0x3c, 0x3e, 0x27, 0xd2,
        0x60, 0x4b,
    ];
    let Some(b) = Fp::from_be(&B) else {
        return false;
    };
    let three = Fp::from_u64(3);
    y.mul(y) == x.mul(x).mul(x).sub(three.mul(x)).add(b)
}

pub fn sig_statement(
    issuer: (&[u8; 32], &[u8; 32]),
    session_transcript: &[u8],
    doc_type: &str,
    macs: &[Gf2_128; 6],
    av: Gf2_128,
) -> Result<Vec<Fp>, StatementError> {
    let x = Fp::from_be(issuer.0).ok_or(StatementError::IssuerKey)?;
    let y = Fp::from_be(issuer.1).ok_or(StatementError::IssuerKey)?;
    if !on_curve(x, y) {
        return Err(StatementError::IssuerKey);
    }
    let e2 = Fp::from_be(&device_signed_hash(session_transcript, doc_type))
        .ok_or(StatementError::SessionHash)?;
    let mut out = vec![Fp::ONE, x, y, e2];
    for m in macs.iter().chain(std::iter::once(&av)) {
        for i in 0..128 {
            out.push(if (m.0 >> i) & 1 == 1 {
                Fp::ONE
            } else {
                Fp::ZERO
            });
        }
    }
    Ok(out)
}
