//! The proof's bytes: 6 MACs (GF(2^128), 16 bytes each) ‖ the hash circuit's proof ‖ the
//! signature circuit's proof, nothing after. A circuit's proof: Merkle root (32); per layer,
//! per round `p0 left, p0 right, p2 left, p2 right`, then vl and vr; Ligero's `y_ldt[block]`,
//! `y_dot[dblock]`, `y_quad_0[nreq]`, `y_quad_2[dblock − block]`, nreq 32-byte nonces, the
//! opened columns (row by row) as runs of alternately full and subfield encodings each after
//! its u32 LE length, then a u32 LE count of Merkle digests and the digests.

use crate::circuit::Circuit;
use crate::field::Field;
use crate::ligero::{self, Params};
use crate::sumcheck::LayerProof;

pub struct Reader<'a> {
    bytes: &'a [u8],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProofError {
    /// The proof ended early.
    Truncated,
    /// A field element is not canonical, or a length is inconsistent.
    Malformed,
    /// Bytes follow the proof.
    TrailingBytes,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ProofError> {
        if self.bytes.len() < n {
            return Err(ProofError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn digest(&mut self) -> Result<[u8; 32], ProofError> {
        let mut d = [0u8; 32];
        d.copy_from_slice(self.take(32)?);
        Ok(d)
    }

    fn u32(&mut self) -> Result<usize, ProofError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    pub fn element<F: Field>(&mut self) -> Result<F, ProofError> {
        F::from_le(self.take(F::BYTES)?).ok_or(ProofError::Malformed)
    }

    pub fn elements<F: Field>(&mut self, n: usize) -> Result<Vec<F>, ProofError> {
        (0..n).map(|_| self.element()).collect()
    }

    pub fn finish(self) -> Result<(), ProofError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(ProofError::TrailingBytes)
        }
    }
}

pub struct CircuitProof<F> {
    pub root: [u8; 32],
    pub sumcheck: Vec<LayerProof<F>>,
    pub ligero: ligero::Proof<F>,
}

pub fn read_circuit_proof<F: Field>(
    r: &mut Reader<'_>,
    c: &Circuit<F>,
    p: &Params,
) -> Result<CircuitProof<F>, ProofError> {
    let root = r.digest()?;
    let mut sumcheck = Vec::with_capacity(c.layers.len());
    for layer in &c.layers {
        let mut rounds = Vec::with_capacity(layer.logw);
        for _ in 0..layer.logw {
            rounds.push([r.element()?, r.element()?, r.element()?, r.element()?]);
        }
        sumcheck.push(LayerProof {
            rounds,
            vl: r.element()?,
            vr: r.element()?,
        });
    }
    let y_ldt = r.elements(p.block)?;
    let y_dot = r.elements(p.dblock)?;
    let y_quad_0 = r.elements(p.nreq)?;
    let y_quad_2 = r.elements(p.dblock - p.block)?;
    let nonces = (0..p.nreq)
        .map(|_| r.digest())
        .collect::<Result<Vec<_>, _>>()?;
    let want = p.nrow * p.nreq;
    let mut columns = Vec::with_capacity(want);
    let mut subfield = false;
    while columns.len() < want {
        let run = r.u32()?;
        if run > want - columns.len() {
            return Err(ProofError::Malformed);
        }
        let size = if subfield {
            F::SUBFIELD_BYTES
        } else {
            F::BYTES
        };
        for _ in 0..run {
            let b = r.take(size)?;
            let e = if subfield {
                F::from_subfield_le(b)
            } else {
                F::from_le(b)
            };
            columns.push(e.ok_or(ProofError::Malformed)?);
        }
        subfield = !subfield;
    }
    let npath = r.u32()?;
    if npath > r.bytes.len() / 32 {
        return Err(ProofError::Truncated);
    }
    let path = (0..npath)
        .map(|_| r.digest())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CircuitProof {
        root,
        sumcheck,
        ligero: ligero::Proof {
            y_ldt,
            y_dot,
            y_quad_0,
            y_quad_2,
            nonces,
            columns,
            path,
        },
    })
}
