//! The Ligero verifier. The tableau's rows: 0 blinds the low-degree test, 1 the dot product,
//! 2 the quadratic test; then the witness rows (each `[random r = nreq | w witnesses]`), then
//! the quadratic rows (all x rows, all y rows, all z rows). A row of `block` values is extended
//! to `block_enc` columns; the Merkle tree commits columns dblock..block_enc.

use sha2::{Digest, Sha256};

use crate::field::Field;
use crate::merkle;
use crate::pause;
use crate::rs::{apply, Interpolator};
use crate::sumcheck::LinearConstraints;
use crate::transcript::Transcript;

/// Items of a long loop between two pause points.
const PAUSE_EVERY: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]

pub struct Params {
    pub nreq: usize,
    pub block: usize,
    pub dblock: usize,
    pub w: usize,
    pub block_enc: usize,
    pub nwrow: usize,
    pub nq: usize,
    pub nqtriples: usize,
    pub nwqrow: usize,
    pub nrow: usize,
}

impl Params {
    /// The layout for `nwitness` witnesses and `nq` quadratic constraints.
    pub fn new(block_enc: usize, rateinv: usize, nreq: usize, nwitness: usize, nq: usize) -> Self {
        let block = (block_enc + 1) / (2 + rateinv);
        let dblock = 2 * block - 1;
        let w = block - nreq;
        let nwrow = nwitness.div_ceil(w);
        let nqtriples = nq.div_ceil(w);
        let nwqrow = nwrow + 3 * nqtriples;
        Params {
            nreq,
            block,
            dblock,
            w,
            block_enc,
            nwrow,
            nq,
            nqtriples,
            nwqrow,
            nrow: 3 + nwqrow,
        }
    }
    /// Leaves of the Merkle tree (and range of the opened column indices).
    pub fn leaves(&self) -> usize {
        self.block_enc - self.dblock
    }
}

/// Interpolators for rows of `block` and `dblock` values, built once per circuit.
pub struct Verifier<F> {
    pub params: Params,
    block: Interpolator<F>,
    dblock: Interpolator<F>,
    /// Per layer, the witness indices (vl, vr, vl·vr) with vl·vr = vlvr.
    quadratic: Vec<[usize; 3]>,
}

#[derive(Debug)]
pub struct Proof<F> {
    pub y_ldt: Vec<F>,
    pub y_dot: Vec<F>,
    pub y_quad_0: Vec<F>,
    pub y_quad_2: Vec<F>,
    pub nonces: Vec<[u8; 32]>,
    /// nrow rows of the nreq opened columns.
    pub columns: Vec<F>,
    pub path: Vec<[u8; 32]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LigeroError {
    Merkle,
    LowDegree,
    Dot,
    DotProduct,
    Quadratic,
    Internal,
}

impl<F: Field> Verifier<F> {
    pub fn new(params: Params, quadratic: Vec<[usize; 3]>) -> Option<Self> {
        Some(Verifier {
            params,
            block: Interpolator::new(params.block, params.block_enc)?,
            dblock: Interpolator::new(params.dblock, params.block_enc)?,
            quadratic,
        })
    }

    pub fn verify(
        &self,
        root: &[u8; 32],
        proof: &Proof<F>,
        t: &mut Transcript,
        lc: &LinearConstraints<F>,
    ) -> Result<(), LigeroError> {
        let p = &self.params;
        // The deployed code hashes the constraints into a fixed stand-in (all were written
        // to the transcript already).
        let mut fixed = [0u8; 32];
        fixed[..4].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        t.write_bytes(&fixed);
        let u_ldt: Vec<F> = t.elements(p.nwqrow);
        let alphal: Vec<F> = t.elements(lc.rhs.len());
        let alphaq: Vec<F> = t.elements(3 * p.nq);
        let u_quad: Vec<F> = t.elements(p.nqtriples);
        t.write_array(&proof.y_ldt);
        t.write_array(&proof.y_dot);
        t.write_array(&proof.y_quad_0);
        t.write_array(&proof.y_quad_2);
        let idx = t.choose(p.leaves(), p.nreq);
        let row = |r: usize| &proof.columns[r * p.nreq..(r + 1) * p.nreq];

        // Merkle: each opened column hashed with its nonce.
        let mut leaves = Vec::with_capacity(p.nreq);
        let mut buf = Vec::with_capacity(p.nrow * F::BYTES);
        for (k, &i) in idx.iter().enumerate() {
            buf.clear();
            for r in 0..p.nrow {
                row(r)[k].write_le(&mut buf);
            }
            let mut h = Sha256::new();
            h.update(proof.nonces[k]);
            h.update(&buf);
            leaves.push((i, h.finalize().into()));
            pause::point();
        }
        if !merkle::verify(root, p.leaves(), &leaves, &proof.path) {
            return Err(LigeroError::Merkle);
        }

        let cols: Vec<usize> = idx.iter().map(|i| i + p.dblock).collect();
        let cb = self
            .block
            .coefficients(&cols)
            .ok_or(LigeroError::Internal)?;
        let cd = self
            .dblock
            .coefficients(&cols)
            .ok_or(LigeroError::Internal)?;

        // Low-degree test.
        let mut yc = row(0).to_vec();
        for (i, u) in u_ldt.iter().enumerate() {
            axpy(&mut yc, *u, row(3 + i));
            pause::point();
        }
        if apply(&cb, &proof.y_ldt) != yc {
            return Err(LigeroError::LowDegree);
        }

        // Linear test: the constraints and the quadratic rows' copies, folded by α.
        let mut a = vec![F::ZERO; p.nwqrow * p.w];
        for chunk in lc.terms.chunks(PAUSE_EVERY) {
            for &(c, wi, f) in chunk {
                let (Some(al), Some(slot)) = (alphal.get(c), a.get_mut(wi)) else {
                    return Err(LigeroError::Internal);
                };
                *slot = slot.add(al.mul(f));
            }
            pause::point();
        }
        let xs = p.nwrow * p.w;
        let ys = xs + p.nqtriples * p.w;
        let zs = ys + p.nqtriples * p.w;
        for (q, wires) in self.quadratic.iter().enumerate() {
            for (k, start) in [xs, ys, zs].into_iter().enumerate() {
                let al = alphaq[3 * q + k];
                a[start + q] = a[start + q].add(al);
                a[wires[k]] = a[wires[k]].sub(al);
            }
            if q % PAUSE_EVERY == PAUSE_EVERY - 1 {
                pause::point();
            }
        }
        let mut yc = row(1).to_vec();
        for i in 0..p.nwqrow {
            let ai = &a[i * p.w..(i + 1) * p.w];
            let tr = row(3 + i);
            for (k, coef) in cb.iter().enumerate() {
                // The slice kernel reduces once per sum: this loop is the test's cost.
                let ext = F::dot(&coef[p.nreq..], ai);
                yc[k] = yc[k].add(ext.mul(tr[k]));
                if k % 16 == 15 {
                    pause::point();
                }
            }
            pause::point();
        }
        if apply(&cd, &proof.y_dot) != yc {
            return Err(LigeroError::Dot);
        }
        let want = lc
            .rhs
            .iter()
            .zip(&alphal)
            .fold(F::ZERO, |s, (b, al)| s.add(b.mul(*al)));
        let got = proof.y_dot[p.nreq..p.nreq + p.w]
            .iter()
            .fold(F::ZERO, |s, v| s.add(*v));
        if want != got {
            return Err(LigeroError::DotProduct);
        }

        // Quadratic test.
        let iq = 3 + p.nwrow;
        let mut yc = row(2).to_vec();
        for (i, u) in u_quad.iter().enumerate() {
            let (x, y, z) = (
                row(iq + i),
                row(iq + p.nqtriples + i),
                row(iq + 2 * p.nqtriples + i),
            );
            for k in 0..p.nreq {
                yc[k] = yc[k].add(u.mul(z[k].sub(x[k].mul(y[k]))));
            }
            pause::point();
        }
        let mut yquad = proof.y_quad_0.clone();
        yquad.resize(p.block, F::ZERO);
        yquad.extend_from_slice(&proof.y_quad_2);
        if apply(&cd, &yquad) != yc {
            return Err(LigeroError::Quadratic);
        }
        Ok(())
    }
}

fn axpy<F: Field>(acc: &mut [F], s: F, x: &[F]) {
    for (a, v) in acc.iter_mut().zip(x) {
        *a = a.add(s.mul(*v));
    }
}
