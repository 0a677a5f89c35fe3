//! The LFC1 circuit format and the compact form circuits are kept in.
//!
//! A body: byte 1; 3-byte LE numbers `field_id, noutput, ncopies, npub, subfield_boundary,
//! ninputs, nlayers, nconst`; the constants (full field elements); per layer `logw, nw,
//! nterms` and the terms, each three zig-zag deltas (gate, left, right wire) and a constant
//! index, 3 bytes each; the 32-byte id. Layer 0 feeds the outputs, the last reads the inputs.
//!
//! Kept form: each layer's distinct term records (deltas and constant index) once, and per
//! term a 16-bit index into them (32-bit when a layer has more than 65 536 distinct records),
//! so a term costs 2 bytes instead of the file's 12.

use std::collections::HashMap;
use std::io::Read;

use crate::field::Field;
use crate::pause;

/// Most sumcheck rounds a layer (or the outputs) may have.
pub const MAX_LOGW: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitError {
    Truncated,
    BadHeader,
    BadLayer,
    BadTerm,
    BadConstant,
}

#[derive(Debug)]
enum Indices {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// A term record: raw zig-zag deltas of gate, left and right wire, and the constant index.
type Record = [u32; 4];

#[derive(Debug)]
pub struct Layer {
    pub logw: usize,
    pub nw: usize,
    records: Vec<Record>,
    indices: Indices,
}

impl Layer {
    pub fn nterms(&self) -> usize {
        match &self.indices {
            Indices::Narrow(v) => v.len(),
            Indices::Wide(v) => v.len(),
        }
    }

    /// Calls `f(gate, left, right, constant index)` for every term, in file order.
    pub fn for_each_term(&self, mut f: impl FnMut(usize, usize, usize, usize)) {
        let (mut g, mut l, mut r) = (0usize, 0usize, 0usize);
        let mut step = |rec: &Record| {
            g = undelta(g, rec[0]);
            l = undelta(l, rec[1]);
            r = undelta(r, rec[2]);
            f(g, l, r, rec[3] as usize);
        };
        // A pause point every few thousand terms: a layer can hold millions.
        match &self.indices {
            Indices::Narrow(v) => v.chunks(PAUSE_EVERY).for_each(|c| {
                c.iter().for_each(|&i| step(&self.records[i as usize]));
                pause::point();
            }),
            Indices::Wide(v) => v.chunks(PAUSE_EVERY).for_each(|c| {
                c.iter().for_each(|&i| step(&self.records[i as usize]));
                pause::point();
            }),
        }
    }

    fn bytes(&self) -> usize {
        self.records.len() * 16
            + match &self.indices {
                Indices::Narrow(v) => v.len() * 2,
                Indices::Wide(v) => v.len() * 4,
            }
    }
}

/// Terms between two pause points.
const PAUSE_EVERY: usize = 1024;

fn undelta(prev: usize, d: u32) -> usize {
    let m = (d >> 1) as usize;
    if d & 1 == 1 {
        prev.wrapping_sub(m)
    } else {
        prev.wrapping_add(m)
    }
}

#[derive(Debug)]
pub struct Circuit<F> {
    pub noutputs: usize,
    pub logv: usize,
    pub npub: usize,
    pub ninputs: usize,
    pub subfield_boundary: usize,
    pub constants: Vec<F>,
    pub layers: Vec<Layer>,
    pub id: [u8; 32],
}

/// ⌈log2 n⌉ (0 for n ≤ 1).
pub fn lg(n: usize) -> usize {
    n.next_power_of_two().trailing_zeros() as usize
}

struct Input<R: Read> {
    inner: R,
}

impl<R: Read> Input<R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], CircuitError> {
        let mut b = [0u8; N];
        self.inner
            .read_exact(&mut b)
            .map_err(|_| CircuitError::Truncated)?;
        Ok(b)
    }
    fn num(&mut self) -> Result<usize, CircuitError> {
        let b = self.bytes::<3>()?;
        Ok(b[0] as usize | (b[1] as usize) << 8 | (b[2] as usize) << 16)
    }
}

impl<F: Field> Circuit<F> {
    pub fn terms(&self) -> usize {
        self.layers.iter().map(Layer::nterms).sum()
    }

    /// Bytes this circuit holds in memory (layers and constants).
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(Layer::bytes).sum::<usize>()
            + self.constants.len() * std::mem::size_of::<F>()
    }

    /// Reads one circuit over field `field_id` from `r`, checking every index against the
    /// sizes it refers to, so that evaluation needs no further checks.
    pub fn read(r: impl Read, field_id: usize) -> Result<Self, CircuitError> {
        let mut input = Input { inner: r };
        let [version] = input.bytes::<1>()?;
        let fid = input.num()?;
        let noutputs = input.num()?;
        let ncopies = input.num()?;
        let npub = input.num()?;
        let subfield_boundary = input.num()?;
        let ninputs = input.num()?;
        let nlayers = input.num()?;
        let nconst = input.num()?;
        let logv = lg(noutputs);
        if version != 1
            || fid != field_id
            || noutputs == 0
            || ncopies != 1
            || nlayers == 0
            || npub == 0
            || npub > ninputs
            || subfield_boundary > ninputs
            || logv > MAX_LOGW
        {
            return Err(CircuitError::BadHeader);
        }
        let mut constants = Vec::with_capacity(nconst.min(1 << 16));
        let mut buf = vec![0u8; F::BYTES];
        for _ in 0..nconst {
            input
                .inner
                .read_exact(&mut buf)
                .map_err(|_| CircuitError::Truncated)?;
            constants.push(F::from_le(&buf).ok_or(CircuitError::BadConstant)?);
        }
        let mut layers = Vec::with_capacity(nlayers.min(1024));
        let mut max_g = noutputs;
        for _ in 0..nlayers {
            let logw = input.num()?;
            let nw = input.num()?;
            let nq = input.num()?;
            if logw == 0 || logw > MAX_LOGW || nw == 0 || nw > (1usize << logw) || nq == 0 {
                return Err(CircuitError::BadLayer);
            }
            let mut seen: HashMap<Record, u32> = HashMap::new();
            let mut records = Vec::new();
            let mut wide: Vec<u32> = Vec::with_capacity(nq.min(1 << 16));
            let (mut g, mut l, mut rr) = (0usize, 0usize, 0usize);
            for _ in 0..nq {
                let rec = [
                    input.num()? as u32,
                    input.num()? as u32,
                    input.num()? as u32,
                    input.num()? as u32,
                ];
                g = undelta(g, rec[0]);
                l = undelta(l, rec[1]);
                rr = undelta(rr, rec[2]);
                if g >= max_g || l >= nw || rr >= nw || rec[3] as usize >= nconst {
                    return Err(CircuitError::BadTerm);
                }
                let next = records.len() as u32;
                let i = *seen.entry(rec).or_insert_with(|| {
                    records.push(rec);
                    next
                });
                wide.push(i);
            }
            let indices = if records.len() <= 1 << 16 {
                Indices::Narrow(wide.iter().map(|&i| i as u16).collect())
            } else {
                Indices::Wide(wide)
            };
            records.shrink_to_fit();
            layers.push(Layer {
                logw,
                nw,
                records,
                indices,
            });
            max_g = nw;
        }
        // The input layer's wires are the circuit's inputs.
        if ninputs > max_g {
            return Err(CircuitError::BadHeader);
        }
        let id = input.bytes::<32>()?;
        Ok(Circuit {
            noutputs,
            logv,
            npub,
            ninputs,
            subfield_boundary,
            constants,
            layers,
            id,
        })
    }

    /// The id as the circuit compiler computes it: SHA-256 over the field, the sizes and every
    /// term with its constant (each number an 8-byte LE word).
    pub fn compute_id(&self, field_descriptor: &[u8]) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(field_descriptor);
        let w = |h: &mut Sha256, v: usize| h.update((v as u64).to_le_bytes());
        for v in [
            self.noutputs,
            self.logv,
            1,
            0,
            self.layers.len(),
            self.ninputs,
            self.npub,
            self.subfield_boundary,
        ] {
            w(&mut h, v);
        }
        let mut enc = Vec::new();
        for layer in &self.layers {
            w(&mut h, layer.nw);
            w(&mut h, layer.logw);
            w(&mut h, layer.nterms());
            layer.for_each_term(|g, l, r, c| {
                w(&mut h, g);
                w(&mut h, l);
                w(&mut h, r);
                enc.clear();
                self.constants[c].write_le(&mut enc);
                h.update(&enc);
            });
        }
        h.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf2_128::Gf2_128;
    use proptest::prelude::*;

    fn n3(v: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    }

    /// One layer computing x·y from inputs (1, x, y): output = 1·w1·w2.
    fn tiny() -> Vec<u8> {
        let mut b = vec![1];
        for v in [4, 1, 1, 1, 1, 3, 1, 1] {
            n3(v, &mut b);
        }
        b.extend_from_slice(&1u128.to_le_bytes());
        for v in [2, 3, 1, 0, 2, 4, 0] {
            n3(v, &mut b);
        }
        b.extend_from_slice(&[7; 32]);
        b
    }

    #[test]
    fn a_tiny_circuit_reads_back() {
        let c = Circuit::<Gf2_128>::read(&tiny()[..], 4).unwrap();
        assert_eq!((c.npub, c.ninputs, c.layers.len(), c.terms()), (1, 3, 1, 1));
        let mut terms = Vec::new();
        c.layers[0].for_each_term(|g, l, r, k| terms.push((g, l, r, k)));
        assert_eq!(terms, vec![(0, 1, 2, 0)]);
        assert_eq!(c.id, [7; 32]);
        // The other field's id is refused.
        assert_eq!(
            Circuit::<Gf2_128>::read(&tiny()[..], 1).unwrap_err(),
            CircuitError::BadHeader
        );
    }

    #[test]
    fn an_index_past_its_layer_is_refused() {
        let mut b = tiny();
        let term = b.len() - 32 - 12;
        b[term + 6] = 6; // right wire 3 ≥ nw
        assert_eq!(
            Circuit::<Gf2_128>::read(&b[..], 4).unwrap_err(),
            CircuitError::BadTerm
        );
    }

    proptest! {
        #[test]
        fn random_circuit_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let _ = Circuit::<Gf2_128>::read(&bytes[..], 4);
        }

        #[test]
        fn a_changed_or_cut_circuit_never_panics(at in any::<prop::sample::Index>(), x in any::<u8>(), cut in any::<prop::sample::Index>()) {
            let mut b = tiny();
            let i = at.index(b.len());
            b[i] ^= x;
            let _ = Circuit::<Gf2_128>::read(&b[..], 4);
            let _ = Circuit::<Gf2_128>::read(&b[..cut.index(b.len())], 4);
        }
    }
}
