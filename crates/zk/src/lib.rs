//! A pure verifier of Longfellow zero-knowledge proofs (`longfellow-libzk-v1`) over mdoc
//! credentials: no I/O, no clock, no panics on any input. See README.md for the layout, the
//! sources and the quirks of the deployed format.
//!
//! Use: [`ZkCircuit::load`] a circuit file once (recognised by its SHA-256), then
//! [`ZkCircuit::verify`] proofs against it with their public inputs.

#![deny(unsafe_code)]

mod circuit;
mod field;
mod fp256;
mod gf2_128;
mod ligero;
mod merkle;
mod pause;
mod proof;
mod rs;
mod statement;
mod sumcheck;
mod table;
mod transcript;

pub use circuit::CircuitError;
pub use ligero::LigeroError;
pub use pause::with_pause_hook;
pub use proof::ProofError;
pub use statement::{device_signed_hash, StatementError};
pub use table::{CircuitInfo, LoadError, ZkCircuit, CIRCUITS};

use field::Field;
use gf2_128::Gf2_128;
use proof::{read_circuit_proof, Reader};
use transcript::Transcript;

/// What a proof is checked against; everything but the proof comes from the verifier.
#[derive(Debug, Clone, Copy)]
pub struct PublicInputs<'a> {
    /// The issuer's P-256 public key, x and y big-endian.
    pub issuer_x: &'a [u8; 32],
    pub issuer_y: &'a [u8; 32],
    /// The SessionTranscript's CBOR bytes, as the verifier built them.
    pub session_transcript: &'a [u8],
    /// Each disclosed attribute: its element identifier and its value's CBOR encoding.
    pub attributes: &'a [(&'a str, &'a [u8])],
    /// `YYYY-MM-DDTHH:MM:SSZ`, the answer's timestamp.
    pub timestamp: &'a str,
    pub doc_type: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyError {
    /// The number of attributes is not the circuit's.
    AttributeCount,
    Statement(StatementError),
    Proof(ProofError),
    /// The hash circuit's proof does not check.
    HashCircuit(LigeroError),
    /// The signature circuit's proof does not check.
    SignatureCircuit(LigeroError),
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::AttributeCount => {
                f.write_str("the circuit takes another number of attributes")
            }
            VerifyError::Statement(e) => {
                write!(f, "the public inputs do not fit the circuit ({e:?})")
            }
            VerifyError::Proof(e) => write!(f, "the proof is not well-formed ({e:?})"),
            VerifyError::HashCircuit(e) => {
                write!(f, "the hash circuit's proof does not verify ({e:?})")
            }
            VerifyError::SignatureCircuit(e) => {
                write!(f, "the signature circuit's proof does not verify ({e:?})")
            }
        }
    }
}

impl std::error::Error for VerifyError {}

impl ZkCircuit {
    /// Verifies `proof` (exactly its bytes, nothing after) against the public inputs.
    pub fn verify(&self, inputs: &PublicInputs<'_>, proof: &[u8]) -> Result<(), VerifyError> {
        if inputs.attributes.len() != self.info.num_attributes {
            return Err(VerifyError::AttributeCount);
        }
        let mut r = Reader::new(proof);
        let mut macs = [Gf2_128::ZERO; 6];
        for m in &mut macs {
            *m = r.element().map_err(VerifyError::Proof)?;
        }
        let hp = read_circuit_proof(&mut r, &self.hash.circuit, &self.hash.ligero.params)
            .map_err(VerifyError::Proof)?;
        let sp = read_circuit_proof(&mut r, &self.sig.circuit, &self.sig.ligero.params)
            .map_err(VerifyError::Proof)?;
        r.finish().map_err(VerifyError::Proof)?;

        pause::point();
        let mut t = Transcript::new(inputs.session_transcript);
        t.write_bytes(&hp.root);
        t.write_bytes(&sp.root);
        let av: Gf2_128 = t.element();

        let hash_public = statement::hash_statement(
            self.info.version,
            inputs.attributes,
            inputs.timestamp,
            &macs,
            av,
        )
        .map_err(VerifyError::Statement)?;
        let sig_public = statement::sig_statement(
            (inputs.issuer_x, inputs.issuer_y),
            inputs.session_transcript,
            inputs.doc_type,
            &macs,
            av,
        )
        .map_err(VerifyError::Statement)?;

        pause::point();
        let c = &self.hash.circuit;
        sumcheck::begin(&mut t, c, &hash_public);
        pause::point();
        let lc = sumcheck::verify(&mut t, c, &hash_public, &hp.sumcheck, &self.lagrange_hash);
        self.hash
            .ligero
            .verify(&hp.root, &hp.ligero, &mut t, &lc)
            .map_err(VerifyError::HashCircuit)?;

        pause::point();
        let c = &self.sig.circuit;
        sumcheck::begin(&mut t, c, &sig_public);
        pause::point();
        let lc = sumcheck::verify(&mut t, c, &sig_public, &sp.sumcheck, &self.lagrange_sig);
        self.sig
            .ligero
            .verify(&sp.root, &sp.ligero, &mut t, &lc)
            .map_err(VerifyError::SignatureCircuit)?;
        Ok(())
    }
}
