//! Why a presentation is refused, and which certificate a validity failure is about.

/// Which certificate a validity failure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertRole {
    /// The issuer's certificate in the presentation (x5chain\[0\]).
    DocumentSigner,
    /// The configured CA certificate it chains to.
    TrustAnchor,
    /// A CA certificate between the two, sent with a zero-knowledge proof's `msoX5chain`.
    Intermediate,
}

impl std::fmt::Display for CertRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CertRole::DocumentSigner => "document signer",
            CertRole::TrustAnchor => "trust anchor",
            CertRole::Intermediate => "intermediate",
        })
    }
}

/// Why a presentation is refused. Each Display message is short, names the reason, and
/// is shown to the wallet as "presentation refused: {message}".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresentationError {
    #[error("vp_token is not json")]
    VpTokenNotJson,
    #[error(
        "vp_token must be {{\"<credential id>\": [\"<device response>\"]}} with exactly one string"
    )]
    VpTokenShape,
    /// The credential id the vp_token answers (truncated, shown escaped).
    #[error("vp_token answers {0:?}, which was not requested")]
    UnrequestedCredential(String),
    #[error("device response is too large")]
    TooLarge,
    #[error("device response is not base64url")]
    NotBase64Url,
    /// Names the field (as ISO/IEC 18013-5 spells it) that is missing or ill-formed.
    #[error("malformed device response: {0}")]
    MalformedDeviceResponse(&'static str),
    #[error("device response status is {0}, not 0")]
    StatusNotZero(u64),
    #[error("device response holds no document")]
    NoDocument,
    /// The first document's docType (truncated, shown escaped).
    #[error("document type {0:?} is not one that was requested")]
    WrongDocType(String),
    #[error("malformed issuerauth: {0}")]
    MalformedIssuerAuth(&'static str),
    #[error("issuer signature algorithm is not es256")]
    UnsupportedAlgorithm,
    #[error("issuerauth has no x5chain certificate")]
    MissingCertificate,
    #[error("document signer certificate is malformed")]
    MalformedCertificate,
    #[error("document signer key is not p-256")]
    UnsupportedIssuerKey,
    #[error("issuer is not trusted")]
    UntrustedIssuer,
    #[error("{0} certificate is not yet valid")]
    CertificateNotYetValid(CertRole),
    #[error("{0} certificate has expired")]
    CertificateExpired(CertRole),
    #[error("issuer signature is invalid")]
    IssuerSignatureInvalid,
    #[error("malformed mobile security object: {0}")]
    MalformedMso(&'static str),
    #[error("mobile security object is for another document type")]
    WrongMsoDocType,
    #[error("digest algorithm is not sha-256")]
    UnsupportedDigestAlgorithm,
    #[error("credential is not yet valid")]
    MsoNotYetValid,
    #[error("credential has expired")]
    MsoExpired,
    #[error("a disclosed item has no digest in the mobile security object")]
    DigestMissing,
    #[error("a disclosed item does not match its digest")]
    DigestMismatch,
    #[error("device key is not an ec2 p-256 cose key")]
    MalformedDeviceKey,
    #[error("device signature is missing")]
    MissingDeviceSignature,
    #[error("device mac is not supported, a device signature is required")]
    DeviceMacUnsupported,
    #[error("malformed device signature: {0}")]
    MalformedDeviceSignature(&'static str),
    #[error("device signature algorithm is not es256")]
    UnsupportedDeviceAlgorithm,
    #[error("device signature does not match this request")]
    DeviceSignatureInvalid,
    #[error("no age_over claim for age {0} or more was disclosed")]
    AgeClaimMissing(u8),
    #[error("the disclosed age_over claim is not true")]
    AgeClaimFalse,
    /// A zero-knowledge answer (docs/zk.md#zero-knowledge-proofs): names the field of
    /// `ZkDocument` or `ZkDocumentData` that is missing or ill-formed.
    #[error("malformed zero-knowledge document: {0}")]
    MalformedZkDocument(&'static str),
    #[error("a zero-knowledge proof was not asked for by this request")]
    ZkNotOffered,
    /// The `zkSystemId` sent (truncated, shown escaped).
    #[error("the proof's circuit {0:?} is not one this request offered")]
    ZkCircuitNotOffered(String),
    #[error("this site requires a zero-knowledge proof; a plain presentation is refused")]
    ZkRequired,
    #[error("the proof's timestamp is not within 5 minutes of the server's clock")]
    ZkTimestamp,
    /// The claim the request asked for (`age_over_NN`).
    #[error("the zero-knowledge document does not list {0} as true in the credential's namespace")]
    ZkClaimNotListed(String),
    #[error("device-signed elements are not allowed with a zero-knowledge proof")]
    ZkDeviceSigned,
    #[error("the zero-knowledge proof does not verify")]
    ZkProofInvalid,
    /// Credential status (docs/credential-status.md): its issuer's list says revoked.
    #[error("the credential is revoked")]
    CredentialRevoked,
    #[error("the credential is suspended")]
    CredentialSuspended,
    /// Any other status value than valid, revoked or suspended.
    #[error("the credential's status is not valid (status {0})")]
    CredentialStatusNotValid(u8),
    #[error("the credential's status index is past the end of its status list")]
    StatusIndexOutOfRange,
    /// `--credential-status require` and the status cannot be had: names why.
    #[error("the credential's status cannot be checked ({0}), and this server requires it")]
    StatusUnknown(String),
    #[error(
        "a zero-knowledge proof cannot show the credential's status, which this server requires"
    )]
    ZkStatusRequired,
}
