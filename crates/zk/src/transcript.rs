//! The Fiat–Shamir transcript as the deployed code runs it: SHA-256 over tagged writes
//! (bytes 0, one field element 1, an array of elements 2, lengths as 8 LE bytes — the IETF
//! draft numbers them 1/2/3), and challenges read from AES-256-CTR keyed with the hash so far
//! (block i encrypts i as a 16-byte LE integer). A write starts a fresh stream.

use crate::pause;
use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes256;
use sha2::{Digest, Sha256};

use crate::field::Field;

const TAG_BYTES: u8 = 0;
const TAG_ELEMENT: u8 = 1;
const TAG_ARRAY: u8 = 2;

pub struct Transcript {
    hash: Sha256,
    prf: Option<Prf>,
}

struct Prf {
    cipher: Aes256,
    block_index: u128,
    block: [u8; 16],
    used: usize,
}

impl Prf {
    fn next_byte(&mut self) -> u8 {
        if self.used == 16 {
            let mut b = self.block_index.to_le_bytes().into();
            self.cipher.encrypt_block(&mut b);
            self.block = b.into();
            self.block_index += 1;
            self.used = 0;
        }
        let out = self.block[self.used];
        self.used += 1;
        out
    }
}

impl Transcript {
    /// A transcript that starts by writing `session` as bytes.
    pub fn new(session: &[u8]) -> Self {
        let mut t = Transcript {
            hash: Sha256::new(),
            prf: None,
        };
        t.write_bytes(session);
        t
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.prf = None;
        self.hash.update(bytes);
    }

    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.raw(&[TAG_BYTES]);
        self.raw(&(bytes.len() as u64).to_le_bytes());
        self.raw(bytes);
    }

    /// Writes `n` zero bytes as one byte string, without allocating them.
    pub fn write_zeros(&mut self, n: usize) {
        self.raw(&[TAG_BYTES]);
        self.raw(&(n as u64).to_le_bytes());
        let zeros = [0u8; 65536];
        let mut left = n;
        while left > 0 {
            let k = left.min(zeros.len());
            self.hash.update(&zeros[..k]);
            left -= k;
            // Millions of bytes for a large circuit.
            pause::point();
        }
    }

    pub fn write_element<F: Field>(&mut self, e: &F) {
        let mut buf = Vec::with_capacity(1 + F::BYTES);
        buf.push(TAG_ELEMENT);
        e.write_le(&mut buf);
        self.raw(&buf);
    }

    pub fn write_array<F: Field>(&mut self, es: &[F]) {
        let mut buf = Vec::with_capacity(9 + F::BYTES * es.len());
        buf.push(TAG_ARRAY);
        buf.extend_from_slice(&(es.len() as u64).to_le_bytes());
        for e in es {
            e.write_le(&mut buf);
        }
        self.raw(&buf);
    }

    fn prf(&mut self) -> &mut Prf {
        let hash = &self.hash;
        self.prf.get_or_insert_with(|| {
            let key = hash.clone().finalize();
            Prf {
                cipher: Aes256::new(&key),
                block_index: 0,
                block: [0; 16],
                used: 16,
            }
        })
    }

    /// One challenge element: `BYTES` bytes read little-endian, drawn again while not canonical.
    pub fn element<F: Field>(&mut self) -> F {
        let prf = self.prf();
        let mut buf = [0u8; 32];
        loop {
            for b in buf[..F::BYTES].iter_mut() {
                *b = prf.next_byte();
            }
            if let Some(e) = F::from_le(&buf[..F::BYTES]) {
                return e;
            }
        }
    }

    pub fn elements<F: Field>(&mut self, n: usize) -> Vec<F> {
        (0..n)
            .map(|i| {
                if i % 4096 == 4095 {
                    pause::point();
                }
                self.element()
            })
            .collect()
    }

    /// A uniform integer below `max` (≥ 1): just enough LE bytes, the top one masked to the
    /// bit length, drawn again while ≥ max.
    fn natural(&mut self, max: usize) -> usize {
        let bits = if max.is_power_of_two() {
            max.ilog2() as usize
        } else {
            max.ilog2() as usize + 1
        };
        let nbytes = bits.div_ceil(8);
        let prf = self.prf();
        loop {
            let mut v = [0u8; 8];
            for b in v[..nbytes].iter_mut() {
                *b = prf.next_byte();
            }
            let excess = nbytes * 8 - bits;
            if excess != 0 {
                v[nbytes - 1] &= (1u8 << (8 - excess)) - 1;
            }
            let n = u64::from_le_bytes(v) as usize;
            if n < max {
                return n;
            }
        }
    }

    /// `count` distinct integers below `max` (> count): a partial Fisher–Yates shuffle.
    pub fn choose(&mut self, max: usize, count: usize) -> Vec<usize> {
        let mut list: Vec<usize> = (0..max).collect();
        for i in 0..count.min(max) {
            let j = i + self.natural(max - i);
            list.swap(i, j);
        }
        list.truncate(count);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf2_128::Gf2_128;

    #[test]
    fn the_prf_is_aes256_ctr_keyed_by_the_hash() {
        // Key = SHA-256(0x00 ‖ 0u64 LE) for an empty session; block 0 = AES(key, 0^16).
        let mut t = Transcript::new(b"");
        let got: Gf2_128 = t.element();
        let mut h = Sha256::new();
        h.update([0u8; 9]);
        let key = h.finalize();
        let mut b = [0u8; 16].into();
        Aes256::new(&key).encrypt_block(&mut b);
        let want: [u8; 16] = b.into();
        assert_eq!(got, Gf2_128(u128::from_le_bytes(want)));
    }

    #[test]
    fn a_write_restarts_the_stream_and_draws_continue_it() {
        let mut a = Transcript::new(b"s");
        let first: Vec<Gf2_128> = a.elements(2);
        let mut b = Transcript::new(b"s");
        let one: Gf2_128 = b.element();
        let two: Gf2_128 = b.element();
        assert_eq!(first, vec![one, two]);
        a.write_bytes(b"x");
        let after: Gf2_128 = a.element();
        assert_ne!(after, first[0]);
    }

    #[test]
    fn choices_are_distinct_and_in_range() {
        let mut t = Transcript::new(b"c");
        let c = t.choose(3965, 132);
        assert_eq!(c.len(), 132);
        let mut s = c.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 132);
        assert!(c.iter().all(|&i| i < 3965));
    }
}
