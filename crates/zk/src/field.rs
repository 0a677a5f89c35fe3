//! What the protocol needs of a field: arithmetic, the wire encodings, the Reed–Solomon
//! evaluation points and the sumcheck's third point.

pub trait Field: Copy + Clone + PartialEq + Eq + std::fmt::Debug + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
    /// Bytes of a full element on the wire (little-endian).
    const BYTES: usize;
    /// Bytes of a subfield element on the wire (the full size where there is no subfield).
    const SUBFIELD_BYTES: usize;

    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn invert(self) -> Option<Self>;
    /// A full element from `BYTES` little-endian bytes; None when not canonical.
    fn from_le(bytes: &[u8]) -> Option<Self>;
    /// An element from its `SUBFIELD_BYTES`-byte subfield encoding.
    fn from_subfield_le(bytes: &[u8]) -> Option<Self>;
    fn write_le(&self, out: &mut Vec<u8>);
    /// The i-th Reed–Solomon evaluation point (the integer i, or its subfield injection).
    fn point(i: usize) -> Self;
    /// d with point(a) − point(b) = point(d), for a ≥ b.
    fn point_diff(a: usize, b: usize) -> usize;
    /// The third point of the sumcheck's degree-2 polynomials (0, 1 and this).
    fn sumcheck_p2() -> Self;

    /// Σ a_i·b_i over the shorter length.
    fn dot(a: &[Self], b: &[Self]) -> Self {
        a.iter()
            .zip(b)
            .fold(Self::ZERO, |s, (x, y)| s.add(x.mul(*y)))
    }

    /// v_i ← v_i·s
    fn scale(v: &mut [Self], s: Self) {
        for x in v {
            *x = x.mul(s);
        }
    }

    /// a_i ← a_i·b_i
    fn mul_each(a: &mut [Self], b: &[Self]) {
        for (x, y) in a.iter_mut().zip(b) {
            *x = x.mul(*y);
        }
    }

    fn neg(self) -> Self {
        Self::ZERO.sub(self)
    }
}

/// Inverts every element in place (Montgomery's trick); None if any is zero.
pub fn batch_invert<F: Field>(v: &mut [F]) -> Option<()> {
    let mut prefix = Vec::with_capacity(v.len());
    let mut acc = F::ONE;
    for x in v.iter() {
        prefix.push(acc);
        acc = acc.mul(*x);
    }
    let mut inv = acc.invert()?;
    for (x, p) in v.iter_mut().zip(prefix).rev() {
        let next = inv.mul(*x);
        *x = inv.mul(p);
        inv = next;
    }
    Some(())
}
