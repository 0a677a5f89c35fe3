//! GF(2^128) as Longfellow builds it: polynomials over GF(2) modulo x^128 + x^7 + x^2 + x + 1,
//! bit i of the little-endian u128 the coefficient of x^i; and its subfield GF(2^16), whose
//! elements travel in proofs as 16 coordinates over the basis 1, g, …, g^15 with
//! g = x^((2^128 − 1)/(2^16 − 1)) (`GF2_16_BASIS_V1`).

use std::sync::OnceLock;

use crate::field::Field;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gf2_128(pub u128);

/// What the carry-less kernel computes over slices of elements.
pub(crate) enum Job<'a> {
    /// Σ a_i·b_i, unreduced: (low, high) halves of the 255-bit sum. Reducing once per sum
    /// rather than once per product is what makes dot products cheap.
    Dot(&'a [Gf2_128], &'a [Gf2_128]),
    /// v_i ← v_i·s, reduced.
    Scale(&'a mut [Gf2_128], Gf2_128),
    /// a_i ← a_i·b_i, reduced.
    Mul(&'a mut [Gf2_128], &'a [Gf2_128]),
}

/// Runs a job with PCLMULQDQ where the CPU has it, else with the portable code; a slice at a
/// time, so that the per-call cost (feature check, call) is paid once per slice.
pub(crate) fn clmul(job: Job<'_>) -> (u128, u128) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            // SAFETY: the CPU was just seen to have PCLMULQDQ, the one feature
            // `clmul_pclmul` needs beyond x86_64's baseline (SSE2).
            #[allow(unsafe_code)]
            return unsafe { clmul_pclmul(job) };
        }
    }
    clmul_portable(job)
}

/// PCLMULQDQ: Karatsuba, three 64×64 carry-less products per pair.
///
/// # Safety
///
/// The CPU must have PCLMULQDQ (check with `is_x86_feature_detected!("pclmulqdq")`):
/// on one without it the instruction is undefined behaviour, which is why this is an
/// `unsafe fn` and not a safe one that trusts its callers to check. SSE2 is part of
/// x86_64.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "pclmulqdq,sse2")]
unsafe fn clmul_pclmul(job: Job<'_>) -> (u128, u128) {
    use core::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_loadu_si128, _mm_set_epi64x, _mm_setzero_si128,
        _mm_slli_si128, _mm_srli_si128, _mm_storeu_si128, _mm_unpackhi_epi64, _mm_xor_si128,
    };
    // Every load and store is of a u128 this function borrows or owns; loadu and storeu
    // allow any alignment.
    let load = |v: &u128| _mm_loadu_si128((v as *const u128).cast::<__m128i>());
    let store = |v: __m128i| {
        let mut out = 0u128;
        _mm_storeu_si128((&mut out as *mut u128).cast::<__m128i>(), v);
        out
    };
    // (x0·y0, x1·y1, (x0+x1)(y0+y1)) of one pair.
    let parts = |x: __m128i, y: __m128i| {
        let xk = _mm_xor_si128(x, _mm_unpackhi_epi64(x, x));
        let yk = _mm_xor_si128(y, _mm_unpackhi_epi64(y, y));
        (
            _mm_clmulepi64_si128::<0x00>(x, y),
            _mm_clmulepi64_si128::<0x11>(x, y),
            _mm_clmulepi64_si128::<0x00>(xk, yk),
        )
    };
    let join = |lo: __m128i, hi: __m128i, kara: __m128i| {
        let (lo, hi) = (store(lo), store(hi));
        let mid = store(kara) ^ lo ^ hi;
        (lo ^ (mid << 64), hi ^ (mid >> 64))
    };
    // One reduced product, in registers: join the Karatsuba parts, then fold the high
    // half in with two products by x^7+x^2+x+1 (the first fold's 7-bit spill, then the rest).
    let poly = _mm_set_epi64x(0, 0x87);
    let product = |x: __m128i, y: __m128i| {
        let (lo, hi, kara) = parts(x, y);
        let mid = _mm_xor_si128(kara, _mm_xor_si128(lo, hi));
        let lo = _mm_xor_si128(lo, _mm_slli_si128::<8>(mid));
        let hi = _mm_xor_si128(hi, _mm_srli_si128::<8>(mid));
        let top = _mm_clmulepi64_si128::<0x01>(hi, poly);
        let hi = _mm_xor_si128(hi, _mm_srli_si128::<8>(top));
        let low = _mm_clmulepi64_si128::<0x00>(hi, poly);
        store(_mm_xor_si128(
            _mm_xor_si128(lo, low),
            _mm_slli_si128::<8>(top),
        ))
    };
    match job {
        Job::Dot(a, b) => {
            let (mut lo, mut hi, mut kara) = (
                _mm_setzero_si128(),
                _mm_setzero_si128(),
                _mm_setzero_si128(),
            );
            for (x, y) in a.iter().zip(b) {
                let (l, h, k) = parts(load(&x.0), load(&y.0));
                lo = _mm_xor_si128(lo, l);
                hi = _mm_xor_si128(hi, h);
                kara = _mm_xor_si128(kara, k);
            }
            join(lo, hi, kara)
        }
        Job::Scale(v, s) => {
            let s = load(&s.0);
            for x in v.iter_mut() {
                x.0 = product(load(&x.0), s);
            }
            (0, 0)
        }
        Job::Mul(a, b) => {
            for (x, y) in a.iter_mut().zip(b) {
                x.0 = product(load(&x.0), load(&y.0));
            }
            (0, 0)
        }
    }
}

fn clmul_64_portable(a: u64, b: u64) -> u128 {
    let mut out = 0u128;
    let a = a as u128;
    let mut b = b;
    let mut shift = 0;
    while b != 0 {
        if b & 1 == 1 {
            out ^= a << shift;
        }
        b >>= 1;
        shift += 1;
    }
    out
}

fn clmul_portable_pair(x: u128, y: u128) -> (u128, u128) {
    let (a0, a1) = (x as u64, (x >> 64) as u64);
    let (b0, b1) = (y as u64, (y >> 64) as u64);
    let mid = clmul_64_portable(a0, b1) ^ clmul_64_portable(a1, b0);
    (
        clmul_64_portable(a0, b0) ^ (mid << 64),
        clmul_64_portable(a1, b1) ^ (mid >> 64),
    )
}

fn clmul_portable(job: Job<'_>) -> (u128, u128) {
    match job {
        Job::Dot(a, b) => a.iter().zip(b).fold((0, 0), |(lo, hi), (x, y)| {
            let (l, h) = clmul_portable_pair(x.0, y.0);
            (lo ^ l, hi ^ h)
        }),
        Job::Scale(v, s) => {
            for x in v.iter_mut() {
                let (l, h) = clmul_portable_pair(x.0, s.0);
                x.0 = reduce(l, h);
            }
            (0, 0)
        }
        Job::Mul(a, b) => {
            for (x, y) in a.iter_mut().zip(b) {
                let (l, h) = clmul_portable_pair(x.0, y.0);
                x.0 = reduce(l, h);
            }
            (0, 0)
        }
    }
}

/// x^128 = x^7 + x^2 + x + 1: fold the high half in twice (the second fold is under 7 bits).
fn reduce(lo: u128, hi: u128) -> u128 {
    let spill = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    let hi = hi ^ spill;
    lo ^ hi ^ (hi << 1) ^ (hi << 2) ^ (hi << 7)
}

impl Gf2_128 {
    /// The subfield basis g^0..g^15.
    pub fn subfield_basis() -> &'static [Gf2_128; 16] {
        static BASIS: OnceLock<[Gf2_128; 16]> = OnceLock::new();
        BASIS.get_or_init(|| {
            // g = x^((2^128−1)/(2^16−1)) = x^((2^16+1)(2^32+1)(2^64+1)).
            let mut g = Gf2_128(2);
            for i in 4..7 {
                let mut s = g;
                for _ in 0..(1u32 << i) {
                    s = s.mul(s);
                }
                g = g.mul(s);
            }
            let mut basis = [Gf2_128::ONE; 16];
            for i in 1..16 {
                basis[i] = basis[i - 1].mul(g);
            }
            basis
        })
    }

    /// The subfield element whose coordinates over the basis are the bits of `v`: the sum
    /// of two lookups (each byte's combinations of 8 basis elements, tabulated once).
    pub fn inject(v: u16) -> Self {
        static TABLES: OnceLock<[[u128; 256]; 2]> = OnceLock::new();
        let t = TABLES.get_or_init(|| {
            let basis = Self::subfield_basis();
            let mut t = [[0u128; 256]; 2];
            for (half, table) in t.iter_mut().enumerate() {
                for (byte, entry) in table.iter_mut().enumerate() {
                    for bit in 0..8 {
                        if (byte >> bit) & 1 == 1 {
                            *entry ^= basis[8 * half + bit].0;
                        }
                    }
                }
            }
            t
        });
        Gf2_128(t[0][(v & 0xff) as usize] ^ t[1][(v >> 8) as usize])
    }

    pub fn inverse(self) -> Option<Self> {
        if self.0 == 0 {
            return None;
        }
        // a^(2^128 − 2) = Π_{i=1}^{127} a^(2^i).
        let mut out = Gf2_128::ONE;
        let mut sq = self;
        for _ in 1..128 {
            sq = sq.mul(sq);
            out = out.mul(sq);
        }
        Some(out)
    }
}

impl Field for Gf2_128 {
    const ZERO: Self = Gf2_128(0);
    const ONE: Self = Gf2_128(1);
    const BYTES: usize = 16;
    const SUBFIELD_BYTES: usize = 2;

    fn add(self, o: Self) -> Self {
        Gf2_128(self.0 ^ o.0)
    }
    fn sub(self, o: Self) -> Self {
        Gf2_128(self.0 ^ o.0)
    }
    fn mul(self, o: Self) -> Self {
        let (lo, hi) = clmul(Job::Dot(&[self], &[o]));
        Gf2_128(reduce(lo, hi))
    }
    fn dot(a: &[Self], b: &[Self]) -> Self {
        let (lo, hi) = clmul(Job::Dot(a, b));
        Gf2_128(reduce(lo, hi))
    }
    fn scale(v: &mut [Self], s: Self) {
        clmul(Job::Scale(v, s));
    }
    fn mul_each(a: &mut [Self], b: &[Self]) {
        clmul(Job::Mul(a, b));
    }
    fn invert(self) -> Option<Self> {
        self.inverse()
    }
    fn from_le(bytes: &[u8]) -> Option<Self> {
        Some(Gf2_128(u128::from_le_bytes(bytes.try_into().ok()?)))
    }
    fn from_subfield_le(bytes: &[u8]) -> Option<Self> {
        Some(Self::inject(u16::from_le_bytes(bytes.try_into().ok()?)))
    }
    fn write_le(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }
    fn point(i: usize) -> Self {
        Self::inject(i as u16)
    }
    fn point_diff(a: usize, b: usize) -> usize {
        // The injection is linear: inject(a) + inject(b) = inject(a ^ b).
        a ^ b
    }
    fn sumcheck_p2() -> Self {
        Self::subfield_basis()[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_pclmul_products_equal_the_portable_ones() {
        let mut x = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..1000 {
            let y = x.rotate_left(37) ^ 0x9e37_79b9_7f4a_7c15;
            let (xs, ys) = ([Gf2_128(x)], [Gf2_128(y)]);
            assert_eq!(
                clmul(Job::Dot(&xs, &ys)),
                clmul_portable(Job::Dot(&xs, &ys))
            );
            a.push(xs[0]);
            b.push(ys[0]);
            x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(1);
        }
        for n in [0, 1, 3, 4, 7, 1000] {
            let (a, b) = (&a[..n], &b[1000 - n..]);
            assert_eq!(
                clmul(Job::Dot(a, b)),
                clmul_portable(Job::Dot(a, b)),
                "{n} pairs"
            );
        }
        let (mut fast, mut slow) = (a.clone(), a.clone());
        clmul(Job::Mul(&mut fast, &b));
        clmul_portable(Job::Mul(&mut slow, &b));
        assert_eq!(fast, slow);
        clmul(Job::Scale(&mut fast, b[3]));
        clmul_portable(Job::Scale(&mut slow, b[3]));
        assert_eq!(fast, slow);
        assert_eq!(fast[0], a[0].mul(b[0]).mul(b[3]));
        // A dot product is the sum of the reduced products.
        let sum = a
            .iter()
            .zip(&b)
            .fold(Gf2_128::ZERO, |s, (x, y)| s.add(x.mul(*y)));
        assert_eq!(Gf2_128::dot(&a, &b), sum);
    }

    #[test]
    fn injection_sums_the_basis_elements_of_the_set_bits() {
        let b = Gf2_128::subfield_basis();
        assert_eq!(Gf2_128::inject(0), Gf2_128::ZERO);
        assert_eq!(Gf2_128::inject(1), Gf2_128::ONE);
        assert_eq!(Gf2_128::inject(0x8002), b[15].add(b[1]));
        assert_eq!(Gf2_128::inject(0x0300), b[8].add(b[9]));
    }

    #[test]
    fn x_to_the_128_reduces_to_x7_x2_x_1() {
        let x64 = Gf2_128(1 << 64);
        assert_eq!(x64.mul(x64), Gf2_128(0x87));
        // x^127 · x = x^128.
        assert_eq!(Gf2_128(1 << 127).mul(Gf2_128(2)), Gf2_128(0x87));
    }

    #[test]
    fn the_subfield_generator_is_longfellows() {
        // g and g^2 as published with GF2_16_BASIS_V1 (decimal u128 values).
        let b = Gf2_128::subfield_basis();
        assert_eq!(b[1].0, 122753392676920971658749122761936853580);
        assert_eq!(b[2].0, 185726315739164108859399796142663757480);
        // g generates GF(2^16)*: g^(2^16 − 1) = 1, and g^((2^16−1)/3) and g^((2^16−1)/5) etc ≠ 1.
        let mut p = Gf2_128::ONE;
        for _ in 0..65535 {
            p = p.mul(b[1]);
        }
        assert_eq!(p, Gf2_128::ONE);
    }

    proptest! {
        #[test]
        fn inverses_multiply_to_one(a in any::<u128>()) {
            let a = Gf2_128(a);
            match a.inverse() {
                Some(inv) => prop_assert_eq!(a.mul(inv), Gf2_128::ONE),
                None => prop_assert_eq!(a, Gf2_128::ZERO),
            }
        }

        #[test]
        fn multiplication_distributes(a in any::<u128>(), b in any::<u128>(), c in any::<u128>()) {
            let (a, b, c) = (Gf2_128(a), Gf2_128(b), Gf2_128(c));
            prop_assert_eq!(a.mul(b.add(c)), a.mul(b).add(a.mul(c)));
            prop_assert_eq!(a.mul(b), b.mul(a));
        }
    }
}
