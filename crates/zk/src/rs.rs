//! Reed–Solomon evaluation at the opened columns: a row of n values is the polynomial of
//! degree < n through (point(j), value j); the verifier needs it only at the few opened
//! columns, so it uses Lagrange coefficients (barycentric weights fixed per n, the rest per
//! proof) instead of extending whole rows.

use crate::field::{batch_invert, Field};

pub struct Interpolator<F> {
    nodes: Vec<F>,
    /// 1 / Π_{k≠j} (x_j − x_k)
    weights: Vec<F>,
}

impl<F: Field> Interpolator<F> {
    pub fn new(n: usize) -> Option<Self> {
        let nodes: Vec<F> = (0..n).map(F::point).collect();
        let mut weights: Vec<F> = (0..n)
            .map(|j| {
                let mut d = F::ONE;
                for k in 0..n {
                    if k != j {
                        d = d.mul(nodes[j].sub(nodes[k]));
                    }
                }
                d
            })
            .collect();
        batch_invert(&mut weights)?;
        Some(Interpolator { nodes, weights })
    }

    /// Row k holds the coefficients c_j with p(point(at[k])) = Σ_j c_j·p(point(j)); the
    /// points must lie outside the nodes (None otherwise).
    pub fn coefficients(&self, at: &[usize]) -> Option<Vec<Vec<F>>> {
        let n = self.nodes.len();
        let mut out = Vec::with_capacity(at.len());
        for &a in at {
            let x = F::point(a);
            let mut diffs: Vec<F> = self.nodes.iter().map(|&xj| x.sub(xj)).collect();
            let ell = diffs.iter().fold(F::ONE, |acc, d| acc.mul(*d));
            batch_invert(&mut diffs)?;
            let row: Vec<F> = (0..n)
                .map(|j| ell.mul(self.weights[j]).mul(diffs[j]))
                .collect();
            out.push(row);
        }
        Some(out)
    }
}

/// Σ_j row_j·y_j for each coefficient row.
pub fn apply<F: Field>(coefficients: &[Vec<F>], y: &[F]) -> Vec<F> {
    coefficients
        .iter()
        .map(|row| {
            row.iter()
                .zip(y)
                .fold(F::ZERO, |acc, (c, v)| acc.add(c.mul(*v)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fp256::Fp;
    use crate::gf2_128::Gf2_128;

    fn check<F: Field>(coef: &[F]) {
        // p(x) = Σ coef_i x^i has degree < 5: from its values at points 0..5, predict 7..9.
        let p = |x: F| coef.iter().rev().fold(F::ZERO, |acc, c| acc.mul(x).add(*c));
        let interp = Interpolator::<F>::new(5).unwrap();
        let y: Vec<F> = (0..5).map(|i| p(F::point(i))).collect();
        let m = interp.coefficients(&[7, 8, 9]).unwrap();
        let want: Vec<F> = [7, 8, 9].iter().map(|&i| p(F::point(i))).collect();
        assert_eq!(apply(&m, &y), want);
        assert!(interp.coefficients(&[3]).is_none());
    }

    #[test]
    fn interpolation_predicts_a_low_degree_polynomial() {
        check(&[
            Fp::from_u64(3),
            Fp::from_u64(1),
            Fp::from_u64(4),
            Fp::from_u64(1),
            Fp::from_u64(5),
        ]);
        check(&[
            Gf2_128(3),
            Gf2_128(1 << 100),
            Gf2_128(4),
            Gf2_128(99),
            Gf2_128(5),
        ]);
    }
}
