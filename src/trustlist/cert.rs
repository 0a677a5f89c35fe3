//! A list's signer: a certificate ([`crate::pki::Cert`]) and the chain from it to a
//! pinned certificate ([`crate::pki::verify_chain`]), its failures worded for a list.

use crate::pki;

/// A certificate that can sign a list or a list signer's certificate.
pub type SignerCert = pki::Cert;

/// Most certificates a list's signer may bring (`KeyInfo`, `x5c`): the EU's brings one.
const MAX_CHAIN: usize = 8;

/// Why a list's signer is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("signer is not a pinned certificate and does not chain to one")]
    Untrusted,
    #[error("signer's chain has a certificate that is not valid now")]
    NotValidNow,
    #[error("signer's chain has an intermediate that is not a CA")]
    IntermediateNotCa,
}

/// Checks that `chain[0]` (the signer) is a pinned certificate, or is signed by one, or
/// by another certificate of `chain` which is in turn…, each certificate on the way
/// valid at `now` (a pinned certificate too: an expired pin is the operator's to
/// renew), and each between the signer and the pinned one a CA (else any certificate
/// the pinned CA issued, a TLS server's say, could vouch for a list signer).
pub fn check_chain(
    chain: &[SignerCert],
    pinned: &[SignerCert],
    now: i64,
) -> Result<(), ChainError> {
    if chain.len() > MAX_CHAIN {
        return Err(ChainError::Untrusted);
    }
    pki::verify_chain(chain, pinned, now)
        .map(|_| ())
        .map_err(|e| match e {
            pki::ChainError::Empty | pki::ChainError::Untrusted => ChainError::Untrusted,
            pki::ChainError::NotCa(_) => ChainError::IntermediateNotCa,
            pki::ChainError::NotYetValid(_) | pki::ChainError::Expired(_) => {
                ChainError::NotValidNow
            }
        })
}
