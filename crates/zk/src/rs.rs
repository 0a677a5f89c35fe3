//! Reed–Solomon evaluation at the opened columns: a row of n values is the polynomial of
//! degree < n through (point(j), value j); the verifier needs it only at the few opened
//! columns, so it uses Lagrange coefficients (barycentric weights fixed per n, the rest per
//! proof) instead of extending whole rows.

use crate::field::{batch_invert, Field};
use crate::pause;

pub struct Interpolator<F> {
    nodes: usize,
    /// 1 / Π_{k≠j} (x_j − x_k)
    weights: Vec<F>,
    /// 1 / point(d): every difference of two points is a point (the integers, or the
    /// injection, which is linear), and the evaluation points are few and small.
    inverses: Vec<F>,
}

impl<F: Field> Interpolator<F> {
    /// For rows of `n` values evaluated at points below `limit`.
    pub fn new(n: usize, limit: usize) -> Option<Self> {
        let span = limit.next_power_of_two();
        let mut inverses: Vec<F> = (0..span)
            .map(|d| if d == 0 { F::ONE } else { F::point(d) })
            .collect();
        batch_invert(&mut inverses)?;
        let mut weights: Vec<F> = (0..n)
            .map(|j| {
                (0..n)
                    .filter(|&k| k != j)
                    .fold(F::ONE, |d, k| d.mul(F::point(j).sub(F::point(k))))
            })
            .collect();
        batch_invert(&mut weights)?;
        Some(Interpolator {
            nodes: n,
            weights,
            inverses,
        })
    }

    /// Row k holds the coefficients c_j with p(point(at[k])) = Σ_j c_j·p(point(j)); the
    /// points must lie past the nodes and below the limit (None otherwise).
    pub fn coefficients(&self, at: &[usize]) -> Option<Vec<Vec<F>>> {
        let n = self.nodes;
        let mut out = Vec::with_capacity(at.len());
        for &a in at {
            if a < n {
                return None;
            }
            let mut inv = Vec::with_capacity(n);
            let mut ell = F::ONE;
            for j in 0..n {
                let d = F::point_diff(a, j);
                ell = ell.mul(F::point(d));
                inv.push(*self.inverses.get(d)?);
            }
            let mut row = self.weights.clone();
            F::mul_each(&mut row, &inv);
            F::scale(&mut row, ell);
            out.push(row);
            pause::point();
        }
        Some(out)
    }
}

/// Σ_j row_j·y_j for each coefficient row.
pub fn apply<F: Field>(coefficients: &[Vec<F>], y: &[F]) -> Vec<F> {
    coefficients
        .iter()
        .map(|row| {
            pause::point();
            F::dot(row, y)
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
        let interp = Interpolator::<F>::new(5, 10).unwrap();
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
