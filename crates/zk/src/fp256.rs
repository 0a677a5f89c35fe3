//! The P-256 base field (p = 2^256 − 2^224 + 2^192 + 2^96 − 1), p256's field element;
//! Longfellow writes its elements as 32 little-endian bytes.

use p256::elliptic_curve::bigint::{Encoding, U256};
use p256::FieldElement;

use crate::field::Field;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp(pub FieldElement);

impl Fp {
    /// From 32 big-endian bytes (a SHA-256 digest, a certificate's coordinate); None if ≥ p.
    pub fn from_be(bytes: &[u8; 32]) -> Option<Self> {
        Option::from(FieldElement::from_bytes(bytes.into())).map(Fp)
    }

    pub fn from_u64(v: u64) -> Self {
        Fp(FieldElement::from_u64(v))
    }
}

impl Field for Fp {
    const ZERO: Self = Fp(FieldElement::ZERO);
    const ONE: Self = Fp(FieldElement::ONE);
    const BYTES: usize = 32;
    const SUBFIELD_BYTES: usize = 32;

    fn add(self, o: Self) -> Self {
        Fp(self.0 + o.0)
    }
    fn sub(self, o: Self) -> Self {
        Fp(self.0 - o.0)
    }
    fn mul(self, o: Self) -> Self {
        Fp(self.0 * o.0)
    }
    fn invert(self) -> Option<Self> {
        Option::from(self.0.invert()).map(Fp)
    }
    fn from_le(bytes: &[u8]) -> Option<Self> {
        let le: [u8; 32] = bytes.try_into().ok()?;
        let be = U256::from_le_bytes(le).to_be_bytes();
        Self::from_be(&be)
    }
    fn from_subfield_le(bytes: &[u8]) -> Option<Self> {
        Self::from_le(bytes)
    }
    fn write_le(&self, out: &mut Vec<u8>) {
        let be: [u8; 32] = self.0.to_bytes().into();
        out.extend(be.iter().rev());
    }
    fn point(i: usize) -> Self {
        Self::from_u64(i as u64)
    }
    fn point_diff(a: usize, b: usize) -> usize {
        a - b
    }
    fn sumcheck_p2() -> Self {
        Self::from_u64(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_at_or_above_p_are_refused() {
        let mut p_le = [0xffu8; 32];
        // p = ffffffff 00000001 00000000 00000000 00000000 ffffffff ffffffff ffffffff (big-endian)
        p_le[12..24].copy_from_slice(&[0; 12]);
        p_le[24..28].copy_from_slice(&[1, 0, 0, 0]);
        assert!(Fp::from_le(&p_le).is_none());
        p_le[0] = 0xfe; // p − 1
        let pm1 = Fp::from_le(&p_le).unwrap();
        assert_eq!(pm1.add(Fp::ONE), Fp::ZERO);
        let mut out = Vec::new();
        pm1.write_le(&mut out);
        assert_eq!(out, p_le);
    }

    #[test]
    fn little_endian_round_trips() {
        let v = Fp::from_u64(0x0102_0304);
        let mut out = Vec::new();
        v.write_le(&mut out);
        assert_eq!(&out[..4], &[4, 3, 2, 1]);
        assert_eq!(Fp::from_le(&out), Some(v));
        assert_eq!(v.mul(v.invert().unwrap()), Fp::ONE);
    }
}
