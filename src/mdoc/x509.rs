//! Trust anchors of mdoc issuers: a PEM bundle or a VICAL's certificates, EC keys only,
//! and the chain check from a document signer to them ([`crate::pki::verify_chain`]:
//! every intermediate a CA), its failures worded for a presentation. No extended key
//! usage is required.

use sha2::{Digest, Sha256};

use super::{AnchorError, CertRole, PresentationError};
use crate::pki::{self, Cert, CertError, Position};

/// One trust anchor as [`TrustAnchors::summaries`] describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorSummary {
    /// The subject's distinguished name (RFC 4514).
    pub subject: String,
    /// Unix seconds.
    pub not_after: i64,
    /// SHA-256 of the certificate's DER.
    pub sha256: [u8; 32],
}

/// Operator-configured trust anchors (X.509 CA certificates) for Proof of Age issuers.
#[derive(Clone)]
pub struct TrustAnchors {
    anchors: Vec<Cert>,
}

/// Brief: the anchors' bytes and keys would only clutter logs of the configuration.
impl std::fmt::Debug for TrustAnchors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustAnchors")
            .field("len", &self.anchors.len())
            .finish()
    }
}

impl TrustAnchors {
    /// Parses a PEM bundle of one or more CERTIFICATE blocks. Text outside the blocks
    /// (comments, as in CA bundles) is ignored; any other block type is an error, since
    /// a key or CSR in this file is surely a mistake.
    pub fn from_pem(pem: &str) -> Result<TrustAnchors, AnchorError> {
        let anchors = pki::certificates_from_pem(pem, Cert::from_der_ec).map_err(|(n, e)| {
            let why = match n {
                0 => e.to_string(),
                n => format!("block {n}: {e}"),
            };
            match e {
                CertError::Malformed(_) => AnchorError::Malformed(why),
                CertError::UnsupportedKey(_) => AnchorError::Unsupported(why),
            }
        })?;
        if anchors.is_empty() {
            return if pem.trim().is_empty() {
                Err(AnchorError::Empty)
            } else {
                Err(AnchorError::Malformed(
                    "no PEM CERTIFICATE block found".into(),
                ))
            };
        }
        Ok(TrustAnchors { anchors })
    }

    /// Every anchor of `sets`, in order, each once.
    pub fn merged<'a>(sets: impl IntoIterator<Item = &'a TrustAnchors>) -> TrustAnchors {
        let mut anchors: Vec<Cert> = Vec::new();
        for cert in sets.into_iter().flat_map(|s| s.anchors.iter()) {
            if !anchors.iter().any(|a| a.der() == cert.der()) {
                anchors.push(cert.clone());
            }
        }
        TrustAnchors { anchors }
    }

    /// Anchors from DER certificates (a VICAL's, say), in the given order.
    pub fn from_ders<'a>(
        ders: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<TrustAnchors, AnchorError> {
        let mut anchors = Vec::new();
        for (i, der) in ders.into_iter().enumerate() {
            let n = i + 1;
            anchors.push(Cert::from_der_ec(der).map_err(|e| match e {
                CertError::Malformed(why) => {
                    AnchorError::Malformed(format!("certificate {n}: {why}"))
                }
                CertError::UnsupportedKey(why) => {
                    AnchorError::Unsupported(format!("certificate {n}: {why}"))
                }
            })?);
        }
        if anchors.is_empty() {
            return Err(AnchorError::Empty);
        }
        Ok(TrustAnchors { anchors })
    }

    /// The anchors, in order.
    pub(crate) fn certs(&self) -> &[Cert] {
        &self.anchors
    }

    pub fn len(&self) -> usize {
        self.anchors.len()
    }

    /// What a person needs to tell the anchors apart, in the file's order.
    pub fn summaries(&self) -> Vec<AnchorSummary> {
        self.anchors
            .iter()
            .map(|a| AnchorSummary {
                subject: a.subject_name(),
                not_after: a.validity().1,
                sha256: a.sha256(),
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    /// SHA-256 over the anchors' DER, in order: names this set (what a status list's
    /// signer was found to chain to).
    pub fn identity(&self) -> [u8; 32] {
        let mut hash = Sha256::new();
        for a in &self.anchors {
            hash.update(a.sha256());
        }
        hash.finalize().into()
    }

    /// Checks that `signer` is an anchor (DER-equal) or is signed by one, and that it
    /// and that anchor are valid at `now`. When several anchors verify it (a renewed
    /// CA with the same name and key), one valid now suffices. Returns the SHA-256 of
    /// that anchor's DER, which a receipt names.
    pub(crate) fn check_signer(
        &self,
        signer: &Cert,
        now: i64,
    ) -> Result<[u8; 32], PresentationError> {
        // An untrusted signer is that first, whatever its dates.
        if !self
            .anchors
            .iter()
            .any(|a| a.der() == signer.der() || signer.is_signed_by(a))
        {
            return Err(PresentationError::UntrustedIssuer);
        }
        self.check_chain(std::slice::from_ref(signer), now)
    }

    /// [`TrustAnchors::check_signer`] for a chain, leaf first: the leaf is an anchor or
    /// signed by one, or by another certificate of the chain, a CA that is an anchor or
    /// signed by one, and so on; every certificate followed is valid at `now`.
    pub(crate) fn check_chain(
        &self,
        chain: &[Cert],
        now: i64,
    ) -> Result<[u8; 32], PresentationError> {
        let role = |p: Position| match p {
            Position::Leaf => CertRole::DocumentSigner,
            Position::Intermediate(_) => CertRole::Intermediate,
            Position::Anchor => CertRole::TrustAnchor,
        };
        match pki::verify_chain(chain, &self.anchors, now) {
            Ok(anchor) => Ok(anchor.sha256()),
            Err(pki::ChainError::NotYetValid(p)) => {
                Err(PresentationError::CertificateNotYetValid(role(p)))
            }
            Err(pki::ChainError::Expired(p)) => Err(PresentationError::CertificateExpired(role(p))),
            Err(
                pki::ChainError::Empty | pki::ChainError::Untrusted | pki::ChainError::NotCa(_),
            ) => Err(PresentationError::UntrustedIssuer),
        }
    }
}
