//! Zero-knowledge proofs of age (docs/zk.md#zero-knowledge-proofs): the circuits the
//! server loaded from `--zk-circuits` and the bounded pool their checks run on. The proof
//! verifier itself is the pure crate `agegate-zk`.

mod lane;
mod pool;

use std::path::Path;
use std::sync::Arc;

use crate::domain::{ZkOffer, ZkPolicy};

pub use agegate_zk::{CircuitInfo, PublicInputs, ZkCircuit};
pub use lane::{LanePanicked, ProofLane};
pub use pool::{PoolFull, RunError, ZkPool};

/// The circuits loaded at start, each parsed once and shared by every check.
#[derive(Debug, Default)]
pub struct ZkCircuits {
    /// Newest version first, then fewer attributes first.
    circuits: Vec<Arc<ZkCircuit>>,
}

/// What loading a directory found besides the circuits: one log line per file.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub lines: Vec<String>,
}

impl ZkCircuits {
    pub fn new(mut circuits: Vec<Arc<ZkCircuit>>) -> Self {
        circuits.sort_by_key(|c| (std::cmp::Reverse(c.info.version), c.info.num_attributes));
        circuits.dedup_by_key(|c| c.info.circuit_hash);
        Self { circuits }
    }

    pub fn is_empty(&self) -> bool {
        self.circuits.is_empty()
    }

    pub fn all(&self) -> &[Arc<ZkCircuit>] {
        &self.circuits
    }

    /// The circuits over `n` attributes, newest version first: what a request offers.
    pub fn for_attributes(&self, n: usize) -> impl Iterator<Item = &Arc<ZkCircuit>> {
        self.circuits
            .iter()
            .filter(move |c| c.info.num_attributes == n)
    }

    /// The loaded circuit named by its `circuit_hash` (64 lowercase hex digits).
    pub fn by_hash(&self, circuit_hash: &str) -> Option<&Arc<ZkCircuit>> {
        self.circuits
            .iter()
            .find(|c| c.info.circuit_hash == circuit_hash)
    }

    /// Loads every file of `dir` that the table knows; unknown files are reported and
    /// skipped. A known file that fails is an error naming it (the server does not start).
    pub fn load_dir(dir: &Path) -> Result<(Self, LoadReport), String> {
        let shown = dir.display();
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read --zk-circuits directory '{shown}': {e}"))?;
        let mut paths: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        let mut circuits = Vec::new();
        let mut report = LoadReport::default();
        for path in paths {
            let bytes = std::fs::read(&path)
                .map_err(|e| format!("cannot read ZK circuit '{}': {e}", path.display()))?;
            match ZkCircuit::load(&bytes) {
                Ok(c) => {
                    report.lines.push(format!(
                        "ZK circuit {}: version {}, {} attribute(s), circuit_hash {}, {} MB in memory",
                        path.display(),
                        c.info.version,
                        c.info.num_attributes,
                        c.info.circuit_hash,
                        c.memory_bytes() / 1_000_000
                    ));
                    circuits.push(Arc::new(c));
                }
                Err(agegate_zk::LoadError::Unknown) => report.lines.push(format!(
                    "ZK circuit directory: ignoring {} (not a known circuit file; versions 6 and 7 only)",
                    path.display()
                )),
                Err(why) => return Err(format!("ZK circuit '{}': {why}", path.display())),
            }
        }
        Ok((Self::new(circuits), report))
    }
}

/// The ZK part of a running server: the circuits, the pool checks run on, and the lane
/// where answers taken for proofs are handled before their check.
#[derive(Debug)]
pub struct Zk {
    pub circuits: ZkCircuits,
    pub pool: ZkPool,
    pub lane: ProofLane,
}

impl Zk {
    /// `None` without circuits: nothing of the ZK rules applies then.
    pub fn new(circuits: ZkCircuits, workers: usize) -> Option<Arc<Self>> {
        if circuits.is_empty() {
            return None;
        }
        let pool = ZkPool::new(workers);
        test_panics(&pool);
        // At start a failure to spawn is fatal, as for the pool's workers.
        let lane = ProofLane::start().expect("start the ZK answers' thread");
        Some(Arc::new(Self {
            circuits,
            pool,
            lane,
        }))
    }
}

impl Zk {
    /// What a request for a site with `policy` offers: the 1-attribute circuits (the
    /// claim is one `age_over_NN`), newest version first; nothing when the policy is off.
    pub fn offer(&self, policy: ZkPolicy) -> Option<ZkOffer> {
        let circuits = self
            .circuits
            .for_attributes(1)
            .map(|c| c.info.circuit_hash.to_owned())
            .collect();
        ZkOffer::new(policy, circuits)
    }
}

/// Internal, for the integration tests only: in debug builds (what `cargo test` runs),
/// `AGEGATE_TEST_ZK_PANICS=N` makes the pool's next N proof checks panic, to show that a
/// panicking check costs its answer a 500 and the pool none of its strength. Release
/// builds (every build meant to serve) compile this out, so no environment can turn it
/// on there; it is deliberately not a flag (docs/zk.md#the-proof-pool).
fn test_panics(pool: &ZkPool) {
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var("AGEGATE_TEST_ZK_PANICS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        pool.panic_next(n);
    }
    #[cfg(not(debug_assertions))]
    let _ = pool;
}

/// The default of `--zk-workers`: the number of cores.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
