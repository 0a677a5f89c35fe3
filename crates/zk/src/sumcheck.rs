//! The sumcheck verifier with the symbolic layer: the prover's messages are padded by
//! committed random values, so each layer's check becomes a linear constraint on the
//! committed witness (left to Ligero), plus one quadratic constraint vl·vr = vlvr per layer.
//!
//! Witness layout: the private inputs, then per layer 4 pads per round (p0 and p2 of the left
//! and right hand) followed by the pads of vl, vr and their product.

use crate::circuit::{Circuit, MAX_LOGW};
use crate::field::Field;
use crate::pause;
use crate::transcript::Transcript;

/// One layer of a sumcheck proof: per round `[p0 left, p0 right, p2 left, p2 right]`, then
/// the claimed (padded) values of the two wires.
#[derive(Debug)]
pub struct LayerProof<F> {
    pub rounds: Vec<[F; 4]>,
    pub vl: F,
    pub vr: F,
}

#[derive(Debug)]
pub struct LinearConstraints<F> {
    /// (constraint, witness index, factor)
    pub terms: Vec<(usize, usize, F)>,
    pub rhs: Vec<F>,
}

pub struct WitnessLayout {
    npriv: usize,
    /// Σ 4·logw of the layers before each layer, and the total at the end.
    prefix: Vec<usize>,
}

impl WitnessLayout {
    pub fn new<F: Field>(c: &Circuit<F>) -> Self {
        let mut prefix = vec![0];
        for l in &c.layers {
            let last = prefix.last().copied().unwrap_or(0);
            prefix.push(last + 4 * l.logw);
        }
        WitnessLayout {
            npriv: c.ninputs - c.npub,
            prefix,
        }
    }
    fn poly(&self, layer: usize, round: usize, hand: usize) -> usize {
        self.npriv + 3 * layer + self.prefix[layer] + 4 * round + 2 * hand
    }
    /// Witness indices of the pads of vl, vr and vl·vr of a layer.
    pub fn wires(&self, layer: usize) -> [usize; 3] {
        let s = self.npriv + 3 * layer + self.prefix[layer + 1];
        [s, s + 1, s + 2]
    }
    pub fn len(&self) -> usize {
        let nl = self.prefix.len() - 1;
        self.npriv + 3 * nl + self.prefix[nl]
    }
}

/// eq(b, i) = Π_j (bit j of i ? b_j : 1 − b_j), for all i < n ≤ 2^len(b) (the indices
/// of the wires that exist), into `t` (reused: fresh tables cost page faults).
fn eq_table_into<F: Field>(t: &mut Vec<F>, b: &[F], n: usize) {
    let n = n.max(1);
    let top = if b.is_empty() { 1 } else { 1 << (b.len() - 1) };
    t.clear();
    // Zeroed a part at a time: a large table is tens of megabytes.
    let len = n.max(top);
    if t.capacity() < len {
        *t = Vec::with_capacity(len); // not reserve: that would copy the old capacity
    }
    while t.len() < len {
        t.resize(len.min(t.len() + PAUSE_EVERY), F::ZERO);
        pause::point();
    }
    t[0] = F::ONE;
    for (j, &x) in b.iter().enumerate() {
        let half = 1 << j;
        // At the last step only the first n − half entries get an upper twin; the rest
        // are just multiplied by 1 − x.
        let m = if j + 1 == b.len() {
            n.saturating_sub(half).min(half)
        } else {
            half
        };
        let (lo, hi) = t.split_at_mut(half);
        let (lo, rest) = lo.split_at_mut(m);
        for (lo, hi) in lo
            .chunks_mut(PAUSE_EVERY)
            .zip(hi[..m].chunks_mut(PAUSE_EVERY))
        {
            hi.copy_from_slice(lo);
            F::scale(hi, x);
            for (l, h) in lo.iter_mut().zip(hi.iter()) {
                *l = l.sub(*h);
            }
            pause::point();
        }
        let not_x = F::ONE.sub(x);
        for rest in rest.chunks_mut(PAUSE_EVERY) {
            F::scale(rest, not_x);
            pause::point();
        }
    }
    t.truncate(n);
}

fn eq_table<F: Field>(b: &[F], n: usize) -> Vec<F> {
    let mut t = Vec::new();
    eq_table_into(&mut t, b, n);
    t
}

/// A linear expression in the witness: known + Σ factor·W[index].
struct Symbolic<F> {
    known: F,
    terms: Vec<(usize, F)>,
}

impl<F: Field> Symbolic<F> {
    fn scale(&mut self, s: F) {
        self.known = self.known.mul(s);
        for t in &mut self.terms {
            t.1 = t.1.mul(s);
        }
    }
    /// self += (W[w] + known)·s
    fn add_padded(&mut self, w: usize, known: F, s: F) {
        self.known = self.known.add(known.mul(s));
        self.terms.push((w, s));
    }
}

pub struct Lagrange<F> {
    p2: F,
    inv_l0: F,
    inv_l1: F,
    inv_l2: F,
}

impl<F: Field> Lagrange<F> {
    pub fn new() -> Option<Self> {
        let p2 = F::sumcheck_p2();
        // Denominators of the basis polynomials at nodes 0, 1, p2.
        let d0 = F::ZERO.sub(F::ONE).mul(F::ZERO.sub(p2));
        let d1 = F::ONE.mul(F::ONE.sub(p2));
        let d2 = p2.mul(p2.sub(F::ONE));
        Some(Lagrange {
            p2,
            inv_l0: d0.invert()?,
            inv_l1: d1.invert()?,
            inv_l2: d2.invert()?,
        })
    }
    fn at(&self, x: F) -> [F; 3] {
        [
            x.sub(F::ONE).mul(x.sub(self.p2)).mul(self.inv_l0),
            x.mul(x.sub(self.p2)).mul(self.inv_l1),
            x.mul(x.sub(F::ONE)).mul(self.inv_l2),
        ]
    }
}

/// Writes what precedes a circuit's sumcheck: its id, the public inputs one by one, a zero
/// element for the outputs and as many zero bytes as the circuit has terms.
pub fn begin<F: Field>(t: &mut Transcript, c: &Circuit<F>, public: &[F]) {
    t.write_bytes(&c.id);
    for p in public {
        t.write_element(p);
    }
    t.write_element(&F::ZERO);
    t.write_zeros(c.terms());
}

/// Runs the verifier's side of the sumcheck and returns the constraints it defers.
pub fn verify<F: Field>(
    t: &mut Transcript,
    c: &Circuit<F>,
    public: &[F],
    proof: &[LayerProof<F>],
    lagrange: &Lagrange<F>,
) -> LinearConstraints<F> {
    let layout = WitnessLayout::new(c);
    // The deployed code draws MAX_LOGW elements for copies, then fills a MAX_LOGW-long
    // binding array although only logv are used (a quirk of history).
    let _ = t.elements::<F>(MAX_LOGW);
    let out: Vec<F> = t.elements(c.logv);
    let _ = t.elements::<F>(MAX_LOGW - c.logv);
    // The eq tables of the bindings that name the current layer's gates (both hands bind
    // the outputs alike).
    let out_eq = eq_table(&out, c.noutputs);
    let mut tables = [out_eq.clone(), out_eq];
    let mut spare: [Vec<F>; 2] = Default::default();
    let mut claims = [F::ZERO; 2];
    let mut lc = LinearConstraints {
        terms: Vec::new(),
        rhs: Vec::new(),
    };

    for (li, (layer, lp)) in c.layers.iter().zip(proof).enumerate() {
        pause::point();
        let alpha: F = t.element();
        let beta: F = t.element();
        let mut expr = Symbolic {
            known: claims[0].add(alpha.mul(claims[1])),
            terms: Vec::new(),
        };
        if li > 0 {
            let [vl, vr, _] = layout.wires(li - 1);
            expr.terms.push((vl, F::ONE));
            expr.terms.push((vr, alpha));
        }
        let mut r = [
            Vec::with_capacity(layer.logw),
            Vec::with_capacity(layer.logw),
        ];
        for (round, polys) in lp.rounds.iter().enumerate() {
            for hand in 0..2 {
                let (p0, p2) = (polys[hand], polys[2 + hand]);
                t.write_element(&p0);
                t.write_element(&p2);
                let x: F = t.element();
                r[hand].push(x);
                let [l0, l1, l2] = lagrange.at(x);
                let w = layout.poly(li, round, hand);
                expr.scale(l1);
                expr.add_padded(w, p0, l0.sub(l1));
                expr.add_padded(w + 1, p2, l2);
            }
        }
        let [mut w0, mut w1] = std::mem::take(&mut spare);
        eq_table_into(&mut w0, &r[0], layer.nw);
        eq_table_into(&mut w1, &r[1], layer.nw);
        let wire_tables = [w0, w1];
        let q = bound_term_sum(c, li, &mut tables, alpha, beta, &wire_tables);
        let [wl, wr, wlr] = layout.wires(li);
        expr.terms.push((wl, q.mul(lp.vr).neg()));
        expr.terms.push((wr, q.mul(lp.vl).neg()));
        expr.terms.push((wlr, q.neg()));
        lc.terms.extend(expr.terms.iter().map(|&(w, f)| (li, w, f)));
        lc.rhs.push(q.mul(lp.vl).mul(lp.vr).sub(expr.known));
        t.write_array(&[lp.vl, lp.vr]);
        claims = [lp.vl, lp.vr];
        spare = std::mem::replace(&mut tables, wire_tables);
    }

    let gamma: F = t.element();
    let [e0, e1] = &tables;
    let eq2 = |i: usize| e0[i].add(gamma.mul(e1[i]));
    let nl = c.layers.len();
    let mut terms: Vec<(usize, F)> = (0..c.ninputs - c.npub)
        .map(|i| {
            if i % PAUSE_EVERY == PAUSE_EVERY - 1 {
                pause::point();
            }
            (i, eq2(c.npub + i))
        })
        .collect();
    let [wl, wr, _] = layout.wires(nl - 1);
    terms.push((wl, F::ONE.neg()));
    terms.push((wr, gamma.neg()));
    lc.terms.extend(terms.into_iter().map(|(w, f)| (nl, w, f)));
    let mut rhs = claims[0].add(gamma.mul(claims[1]));
    for (i, p) in public.iter().enumerate() {
        rhs = rhs.sub(p.mul(eq2(i)));
    }
    lc.rhs.push(rhs);
    lc
}

/// Σ over the layer's terms of coefficient · (eq(b0, g) + α·eq(b1, g)) · eq(rL, l) · eq(rR, r),
/// a term's coefficient being its constant, or β where the constant is zero (an assertion).
fn bound_term_sum<F: Field>(
    c: &Circuit<F>,
    li: usize,
    gate_tables: &mut [Vec<F>; 2],
    alpha: F,
    beta: F,
    wire_tables: &[Vec<F>; 2],
) -> F {
    let [gate, g1] = gate_tables;
    for (gate, g1) in gate.chunks_mut(PAUSE_EVERY).zip(g1.chunks_mut(PAUSE_EVERY)) {
        F::scale(g1, alpha);
        for (a, b) in gate.iter_mut().zip(g1.iter()) {
            *a = a.add(*b);
        }
        pause::point();
    }
    let [el, er] = wire_tables;
    let coef: Vec<F> = c
        .constants
        .iter()
        .map(|k| if *k == F::ZERO { beta } else { *k })
        .collect();
    // Terms come sorted by wire pair, so runs share eq(rL, l)·eq(rR, r): the layer's sum
    // is Σ_runs wires·(Σ coefficient·gate). Terms whose coefficient is 1 (most) are only
    // added; the others' products, and the wires, are computed a batch at a time.
    let mut acc = RunSums {
        run: None,
        gates: Vec::with_capacity(BATCH),
        coefs: Vec::with_capacity(BATCH),
        owner: Vec::with_capacity(BATCH),
        wires_l: Vec::with_capacity(BATCH),
        wires_r: Vec::with_capacity(BATCH),
        sums: Vec::with_capacity(BATCH),
        total: F::ZERO,
    };
    c.layers[li].for_each_term(|g, l, rr, k| {
        if acc.run != Some((l, rr)) {
            if acc.sums.len() == BATCH || acc.gates.len() == BATCH {
                acc.settle();
            }
            acc.run = Some((l, rr));
            acc.wires_l.push(el[l]);
            acc.wires_r.push(er[rr]);
            acc.sums.push(F::ZERO);
        }
        let run = acc.sums.len() - 1;
        if coef[k] == F::ONE {
            acc.sums[run] = acc.sums[run].add(gate[g]);
        } else {
            acc.gates.push(gate[g]);
            acc.coefs.push(coef[k]);
            acc.owner.push(run as u32);
        }
    });
    acc.settle();
    acc.total
}

const BATCH: usize = 1024;
/// Elements of a table between two pause points.
const PAUSE_EVERY: usize = 4096;

struct RunSums<F> {
    run: Option<(usize, usize)>,
    gates: Vec<F>,
    coefs: Vec<F>,
    /// The run each product in `gates` belongs to.
    owner: Vec<u32>,
    wires_l: Vec<F>,
    wires_r: Vec<F>,
    sums: Vec<F>,
    total: F,
}

impl<F: Field> RunSums<F> {
    /// Adds Σ eq(rL, l)·eq(rR, r)·sum over the runs gathered so far (called between runs).
    fn settle(&mut self) {
        F::mul_each(&mut self.gates, &self.coefs);
        for (p, &o) in self.gates.iter().zip(&self.owner) {
            self.sums[o as usize] = self.sums[o as usize].add(*p);
        }
        F::mul_each(&mut self.wires_l, &self.wires_r);
        self.total = self.total.add(F::dot(&self.wires_l, &self.sums));
        self.gates.clear();
        self.coefs.clear();
        self.owner.clear();
        self.wires_l.clear();
        self.wires_r.clear();
        self.sums.clear();
        self.run = None;
        pause::point();
    }
}
