//! A chain to anchors: "verify this chain (leaf, then intermediates) to these anchors at
//! time T, every intermediate a CA". One rule for every caller (mdoc issuers, VICAL,
//! status lists, trust lists), each of which names the failure in its own words.

use super::Cert;

/// Which certificate a failure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// `chain[0]`.
    Leaf,
    /// `chain[n]`, n ≥ 1.
    Intermediate(usize),
    /// An anchor (one of the anchors, or an intermediate equal to one).
    Anchor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainError {
    /// No certificate given.
    Empty,
    /// The chain does not reach an anchor.
    Untrusted,
    /// An intermediate whose basicConstraints does not say cA: else any certificate an
    /// anchor issued (a TLS server's, say) could vouch for a leaf.
    NotCa(Position),
    NotYetValid(Position),
    Expired(Position),
}

/// Verifies that `chain[0]` (the leaf) is an anchor (DER-equal) or is signed by one, or
/// by another certificate of `chain` that is in turn…; each certificate used is used
/// once, in any order. Every certificate on the path, and the anchor, must be valid at
/// `now`; every one between the leaf and the anchor must be a CA (a certificate of the
/// chain equal to an anchor is the anchor: the operator chose it). When several anchors
/// signed the last certificate (a renewed CA with the same name and key), one valid now
/// suffices. Returns that anchor.
pub fn verify_chain<'a>(
    chain: &[Cert],
    anchors: &'a [Cert],
    now: i64,
) -> Result<&'a Cert, ChainError> {
    let mut current = chain.first().ok_or(ChainError::Empty)?;
    let mut position = Position::Leaf;
    let mut used = vec![false; chain.len()];
    used[0] = true;
    loop {
        let anchor = anchors.iter().find(|a| a.der() == current.der());
        if anchor.is_none() && position != Position::Leaf && !current.is_ca() {
            return Err(ChainError::NotCa(position));
        }
        // A leaf that is itself an anchor is named as the leaf.
        let named = match anchor {
            Some(_) if position != Position::Leaf => Position::Anchor,
            _ => position,
        };
        validity(current, now, named)?;
        if let Some(anchor) = anchor {
            return Ok(anchor);
        }
        let issuers: Vec<&'a Cert> = anchors.iter().filter(|a| current.is_signed_by(a)).collect();
        if let Some(first) = issuers.first() {
            return match issuers.iter().find(|a| a.valid_at(now)) {
                Some(valid) => Ok(valid),
                None => validity(first, now, Position::Anchor).map(|()| *first),
            };
        }
        let next = (1..chain.len())
            .find(|&i| !used[i] && current.is_signed_by(&chain[i]))
            .ok_or(ChainError::Untrusted)?;
        used[next] = true;
        current = &chain[next];
        position = Position::Intermediate(next);
    }
}

fn validity(cert: &Cert, now: i64, position: Position) -> Result<(), ChainError> {
    let (not_before, not_after) = cert.validity();
    if now < not_before {
        Err(ChainError::NotYetValid(position))
    } else if now > not_after {
        Err(ChainError::Expired(position))
    } else {
        Ok(())
    }
}
