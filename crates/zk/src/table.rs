//! The circuits agegate accepts, pinned by the SHA-256 of their files, and their loading.

use std::io::Read;

use sha2::{Digest, Sha256};

use crate::circuit::{Circuit, CircuitError};
use crate::field::Field;
use crate::fp256::Fp;
use crate::gf2_128::Gf2_128;
use crate::ligero::{self, Params};
use crate::sumcheck::{Lagrange, WitnessLayout};

/// What the table knows of a circuit file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitInfo {
    /// SHA-256 of the file, hex.
    pub file_sha256: &'static str,
    pub version: u8,
    pub num_attributes: usize,
    /// SHA-256(signature circuit id ‖ hash circuit id), hex: the name wallets know it by.
    pub circuit_hash: &'static str,
    pub block_enc_hash: usize,
    pub block_enc_sig: usize,
}

const fn info(
    file_sha256: &'static str,
    version: u8,
    num_attributes: usize,
    circuit_hash: &'static str,
    block_enc_hash: usize,
    block_enc_sig: usize,
) -> CircuitInfo {
    CircuitInfo {
        file_sha256,
        version,
        num_attributes,
        circuit_hash,
        block_enc_hash,
        block_enc_sig,
    }
}

/// Versions 6 and 7 (version 5 predates a soundness fix of 2025-10 and is absent on purpose).
pub const CIRCUITS: [CircuitInfo; 8] = [
    info(
        "9016d173d8a579a104591b85826798bfbb03eafa7b376ad18c5344eab3a92769",
        7,
        1,
        "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121",
        4151,
        4096,
    ),
    info(
        "deb83076b7300d94f18e287e3fe4705823074979165ad08645c97a93c0363968",
        7,
        2,
        "6a5810683e62b6d7766ebd0d7ca72518a2b8325418142adcadb10d51dbbcd5ad",
        4265,
        4096,
    ),
    info(
        "25fb28acd806a15b88538ee612f0da47bf29e6dcb0803f2c268c87f3f224b968",
        7,
        3,
        "8ee4849ae1293ae6fe5f9082ce3e5e15c4f198f2998c682fa1b727237d6d252f",
        4307,
        4096,
    ),
    info(
        "3a979b6e6a7df8e9404b2293d60c3277d3ba2a1846baa82e5fad75cbe3bbc76b",
        7,
        4,
        "5aebdaaafe17296a3ef3ca6c80c6e7505e09291897c39700410a365fb278e460",
        4415,
        4096,
    ),
    info(
        "12050d8baaa37eb8225a3dcf5cb6139a0ccd4fa63a0e0ac2555ecb4810ada8a3",
        6,
        1,
        "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6",
        4096,
        2945,
    ),
    info(
        "0185b762cffb3f50fa587f9be30cd93e7db0cd27be3e85d5688c1733ac7be6b9",
        6,
        2,
        "b4bb6f01b7043f4f51d8302a30b36e3d4d2d0efc3c24557ab9212ad524a9764e",
        4025,
        2945,
    ),
    info(
        "e818e1cca16b6bc2e81963e673ae490bb42b3a61425d04c8e9b79d0294ec3917",
        6,
        3,
        "b2211223b954b34a1081e3fbf71b8ea2de28efc888b4be510f532d6ba76c2010",
        4121,
        2945,
    ),
    info(
        "dc6562eecfcfacca665ae4baa23cfa472074f1de17f0f6fe7376b676006b05ea",
        6,
        4,
        "c70b5f44a1365c53847eb8948ad5b4fdc224251a2bc02d958c84c862823c49d6",
        4283,
        2945,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadError {
    /// The file's SHA-256 is not in the table (another version, or not a circuit file).
    Unknown,
    /// The zstd frame does not decode.
    Decompress,
    /// The decompressed bytes are not two well-formed circuits.
    Parse(CircuitError),
    /// SHA-256 of the embedded ids is not the table's circuit_hash.
    IdMismatch,
    /// The circuits' public inputs do not have the layout of their version.
    Layout,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Unknown => f.write_str("not a known circuit file (versions 6 and 7 only)"),
            LoadError::Decompress => f.write_str("the zstd frame does not decode"),
            LoadError::Parse(e) => write!(f, "the circuit does not parse ({e:?})"),
            LoadError::IdMismatch => {
                f.write_str("the embedded circuit ids do not match its circuit_hash")
            }
            LoadError::Layout => {
                f.write_str("the circuit's public inputs do not have its version's layout")
            }
        }
    }
}

impl std::error::Error for LoadError {}

pub(crate) struct Half<F> {
    pub circuit: Circuit<F>,
    pub ligero: ligero::Verifier<F>,
}

/// A recognised, parsed circuit pair, ready to verify proofs.
pub struct ZkCircuit {
    pub info: CircuitInfo,
    pub(crate) hash: Half<Gf2_128>,
    pub(crate) sig: Half<Fp>,
    pub(crate) lagrange_hash: Lagrange<Gf2_128>,
    pub(crate) lagrange_sig: Lagrange<Fp>,
}

impl std::fmt::Debug for ZkCircuit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkCircuit")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// (rateinv, nreq) of a version's Ligero.
fn ligero_constants(version: u8) -> (usize, usize) {
    if version == 6 {
        (4, 128)
    } else {
        (7, 132)
    }
}

fn half<F: Field>(
    circuit: Circuit<F>,
    block_enc: usize,
    version: u8,
) -> Result<Half<F>, LoadError> {
    let (rateinv, nreq) = ligero_constants(version);
    let layout = WitnessLayout::new(&circuit);
    let quadratic: Vec<[usize; 3]> = (0..circuit.layers.len()).map(|l| layout.wires(l)).collect();
    let params = Params::new(block_enc, rateinv, nreq, layout.len(), quadratic.len());
    let ligero = ligero::Verifier::new(params, quadratic).ok_or(LoadError::Layout)?;
    Ok(Half { circuit, ligero })
}

impl ZkCircuit {
    /// Recognises a circuit file by its SHA-256 and parses it.
    pub fn load(file: &[u8]) -> Result<Self, LoadError> {
        let digest = hex(&Sha256::digest(file));
        let info = *CIRCUITS
            .iter()
            .find(|c| c.file_sha256 == digest)
            .ok_or(LoadError::Unknown)?;
        let mut source = file;
        let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source)
            .map_err(|_| LoadError::Decompress)?;
        let mut input = std::io::BufReader::with_capacity(1 << 16, decoder);
        let sig = Circuit::<Fp>::read(&mut input, 1).map_err(LoadError::Parse)?;
        let hash = Circuit::<Gf2_128>::read(&mut input, 4).map_err(LoadError::Parse)?;
        let mut rest = [0u8; 1];
        if !matches!(input.read(&mut rest), Ok(0)) {
            return Err(LoadError::Parse(CircuitError::BadHeader));
        }
        let mut ids = Vec::with_capacity(64);
        ids.extend_from_slice(&sig.id);
        ids.extend_from_slice(&hash.id);
        if hex(&Sha256::digest(&ids)) != info.circuit_hash {
            return Err(LoadError::IdMismatch);
        }
        if hash.npub != crate::statement::hash_statement_len(info.version, info.num_attributes)
            || sig.npub != crate::statement::SIG_STATEMENT_LEN
        {
            return Err(LoadError::Layout);
        }
        Ok(ZkCircuit {
            info,
            hash: half(hash, info.block_enc_hash, info.version)?,
            sig: half(sig, info.block_enc_sig, info.version)?,
            lagrange_hash: Lagrange::new().ok_or(LoadError::Layout)?,
            lagrange_sig: Lagrange::new().ok_or(LoadError::Layout)?,
        })
    }

    /// Bytes the parsed circuits hold (terms and constants).
    pub fn memory_bytes(&self) -> usize {
        self.hash.circuit.memory_bytes() + self.sig.circuit.memory_bytes()
    }

    /// Whether each circuit's embedded id is the hash of its contents, as the circuit compiler
    /// computes it (about 400 MB of SHA-256; the file hash already pins the contents, so this
    /// is an audit of the parser rather than a load-time check).
    pub fn ids_match_contents(&self) -> bool {
        let mut p256 = 1u64.to_le_bytes().to_vec();
        Fp::ZERO.sub(Fp::ONE).write_le(&mut p256);
        let mut gf = 2u64.to_le_bytes().to_vec();
        gf.extend_from_slice(&128u64.to_le_bytes());
        self.sig.circuit.compute_id(&p256) == self.sig.circuit.id
            && self.hash.circuit.compute_id(&gf) == self.hash.circuit.id
    }

    /// Terms of the hash and signature circuits.
    pub fn terms(&self) -> (usize, usize) {
        (self.hash.circuit.terms(), self.sig.circuit.terms())
    }
}
