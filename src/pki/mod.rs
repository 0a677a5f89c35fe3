//! X.509 once for the crate: certificates parsed with their signed bytes kept, the one
//! public-key type, validity, chains to anchors (every intermediate a CA) and PEM. Used
//! by the mdoc issuers' anchors, the VICAL, credential status lists, the request-signing
//! identity and the signed trust lists. Pure and total: bytes and `now` in, no I/O, no
//! clock, no panics.
//!
//! Extensions other than basicConstraints are never decoded (x509-cert keeps them as
//! opaque octets), so the EU test issuers' unusual IssuerAltName and EKU cannot make
//! parsing fail.

pub mod cert;
pub mod chain;
pub mod key;
pub mod pem;

#[cfg(test)]
mod tests;

pub use cert::{Cert, CertError};
pub use chain::{verify_chain, ChainError, Position};
pub use key::{Encoding, Hash, PublicKey, Scheme};
pub use pem::{certificates_from_pem, pem_blocks, PemBlock};
