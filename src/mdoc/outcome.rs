//! Refusals as stable words, for the presentation metrics (docs/evidence.md#effectiveness-agegate_presentations_total).

use super::PresentationError;
use PresentationError as E;

impl PresentationError {
    /// The refusal as one stable word, for metrics (`agegate_presentations_total`):
    /// operators see how often and why checks fail without any personal data.
    pub fn outcome(&self) -> &'static str {
        match self {
            E::VpTokenNotJson
            | E::VpTokenShape
            | E::TooLarge
            | E::NotBase64Url
            | E::MalformedDeviceResponse(_)
            | E::MalformedIssuerAuth(_)
            | E::MissingCertificate
            | E::MalformedCertificate
            | E::MalformedMso(_)
            | E::MalformedDeviceKey
            | E::MissingDeviceSignature
            | E::MalformedDeviceSignature(_) => "malformed",
            E::StatusNotZero(_) => "wallet_error",
            E::NoDocument => "no_document",
            E::UnrequestedCredential(_) => "wrong_credential",
            E::WrongDocType(_) | E::WrongMsoDocType => "wrong_doctype",
            E::UnsupportedAlgorithm
            | E::UnsupportedIssuerKey
            | E::UnsupportedDigestAlgorithm
            | E::DeviceMacUnsupported
            | E::UnsupportedDeviceAlgorithm => "unsupported",
            E::UntrustedIssuer => "untrusted_issuer",
            E::CertificateNotYetValid(_) | E::CertificateExpired(_) => "certificate_validity",
            E::IssuerSignatureInvalid => "issuer_signature",
            E::MsoNotYetValid | E::MsoExpired => "credential_validity",
            E::DigestMissing | E::DigestMismatch => "digest_mismatch",
            E::DeviceSignatureInvalid => "device_signature",
            E::AgeClaimMissing(_) => "age_claim_missing",
            E::AgeClaimFalse => "age_not_proven",
            E::MalformedZkDocument(_) => "malformed",
            E::ZkNotOffered => "zk_not_offered",
            E::ZkCircuitNotOffered(_) => "zk_circuit",
            E::ZkRequired => "zk_required",
            E::ZkTimestamp => "zk_timestamp",
            E::ZkClaimNotListed(_) => "age_claim_missing",
            E::ZkDeviceSigned => "zk_device_signed",
            E::ZkProofInvalid => "zk_proof",
            E::CredentialRevoked => "revoked",
            E::CredentialSuspended => "suspended",
            E::CredentialStatusNotValid(_) | E::StatusIndexOutOfRange => "status_invalid",
            E::StatusUnknown(_) | E::ZkStatusRequired => "status_unknown",
        }
    }
}
