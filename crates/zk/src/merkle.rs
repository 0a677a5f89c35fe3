//! Merkle multi-proofs over the columns: n leaves at heap positions n..2n (n need not be a
//! power of two), node i = SHA-256(node 2i ‖ node 2i+1), root at 1. The proof lists, from
//! node n−1 down to 1, the sibling of every node on the opened paths that the verifier cannot
//! compute itself.

use sha2::{Digest, Sha256};

pub fn verify(root: &[u8; 32], n: usize, leaves: &[(usize, [u8; 32])], proof: &[[u8; 32]]) -> bool {
    if n == 0 || leaves.iter().any(|(i, _)| *i >= n) {
        return false;
    }
    let mut marked = vec![false; 2 * n];
    for (i, _) in leaves {
        marked[n + i] = true;
    }
    for i in (1..n).rev() {
        marked[i] = marked[2 * i] || marked[2 * i + 1];
    }
    let mut tree: Vec<Option<[u8; 32]>> = vec![None; 2 * n];
    let mut given = proof.iter();
    for i in (1..n).rev() {
        if marked[i] {
            let child = if marked[2 * i] { 2 * i + 1 } else { 2 * i };
            if !marked[child] {
                match given.next() {
                    Some(d) => tree[child] = Some(*d),
                    None => return false,
                }
            }
        }
    }
    // Every digest given must be used.
    if given.next().is_some() {
        return false;
    }
    for (i, d) in leaves {
        tree[n + i] = Some(*d);
    }
    for i in (1..n).rev() {
        if let (Some(l), Some(r)) = (tree[2 * i], tree[2 * i + 1]) {
            let mut h = Sha256::new();
            h.update(l);
            h.update(r);
            tree[i] = Some(h.finalize().into());
        }
    }
    tree[1].as_ref() == Some(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h2(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(a);
        h.update(b);
        h.finalize().into()
    }

    #[test]
    fn a_three_leaf_tree_opens_each_way() {
        // n = 3: leaves at 3, 4, 5; node 2 = H(4, 5); root 1 = H(2, 3).
        let l = [[1u8; 32], [2u8; 32], [3u8; 32]];
        let n2 = h2(&l[1], &l[2]);
        let root = h2(&n2, &l[0]);
        assert!(verify(&root, 3, &[(0, l[0])], &[n2]));
        assert!(verify(&root, 3, &[(1, l[1])], &[l[2], l[0]]));
        assert!(verify(&root, 3, &[(1, l[1]), (2, l[2])], &[l[0]]));
        assert!(!verify(&root, 3, &[(1, l[1])], &[l[2], l[1]]));
        assert!(!verify(&root, 3, &[(0, l[0])], &[n2, n2]));
        assert!(!verify(&root, 3, &[(3, l[0])], &[n2]));
    }
}
