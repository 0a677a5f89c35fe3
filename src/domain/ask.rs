//! What a presentation request asks of a wallet: the least age (`age_over_NN`) and the
//! zero-knowledge circuits it offers. Their own file, below both the request
//! (`presentation.rs`) and its DCQL query (`dcql.rs`), which each need them.

use std::fmt;

use super::site::ZkPolicy;

/// A site's minimum age: 1 to 99 (the claim `age_over_NN` has two digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MinAge(u8);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the minimum age must be a whole number from 1 to 99, not '{0}'")]
pub struct MinAgeError(pub String);

impl MinAge {
    pub const DEFAULT: MinAge = MinAge(18);

    pub fn new(n: i64) -> Option<Self> {
        (1..=99).contains(&n).then_some(Self(n as u8))
    }

    pub fn parse(s: &str) -> Result<Self, MinAgeError> {
        s.trim()
            .parse::<i64>()
            .ok()
            .and_then(Self::new)
            .ok_or_else(|| MinAgeError(s.to_owned()))
    }

    pub fn get(self) -> u8 {
        self.0
    }

    /// The ISO 18013-5 element this age is asked as: `age_over_08`, `age_over_18`.
    pub fn claim(self) -> String {
        format!("age_over_{:02}", self.0)
    }
}

impl fmt::Display for MinAge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a request offers of zero-knowledge proofs (docs/zk.md#zero-knowledge-proofs):
/// the circuits a proof may be made with, and whether only a proof answers. Stored with
/// the request, so any node checks an answer against what this request offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkOffer {
    /// Each circuit's `circuit_hash` (64 lowercase hex digits), newest version first.
    pub circuits: Vec<String>,
    /// The site's policy was `require`: a plain presentation is refused.
    pub required: bool,
}

impl ZkOffer {
    /// What a site with `policy` offers on a server whose loaded 1-attribute circuits
    /// are `circuits` (newest first): nothing when the policy is off or there are none.
    pub fn new(policy: ZkPolicy, circuits: Vec<String>) -> Option<Self> {
        if policy == ZkPolicy::Off || circuits.is_empty() {
            return None;
        }
        Some(Self {
            circuits,
            required: policy == ZkPolicy::Require,
        })
    }

    /// Whether `circuit_hash` is one of the offered circuits.
    pub fn offers(&self, circuit_hash: &str) -> bool {
        self.circuits.iter().any(|c| c == circuit_hash)
    }

    /// The circuits as stored: comma-separated, in order.
    pub fn stored_circuits(&self) -> String {
        self.circuits.join(",")
    }

    /// From its stored columns; `None` unless there is at least one circuit and each is
    /// 64 lowercase hex digits.
    pub fn from_stored(circuits: &str, required: bool) -> Option<Self> {
        let circuits: Vec<String> = circuits.split(',').map(str::to_owned).collect();
        let valid = circuits
            .iter()
            .all(|c| c.len() == 64 && c.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        valid.then_some(Self { circuits, required })
    }
}
