//! Why a Digital Credentials API answer was refused before its DeviceResponse was read:
//! its own file, so that the answer's path (`answering.rs`) and the DC API's envelope
//! (`dc_api.rs`) both name it without naming each other.

use crate::dcapi::response::ResponseError;

/// Why a DC API answer could not be taken apart to its DeviceResponse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DcApiRefusal {
    #[error(
        "unknown protocol {0:?} (expected openid4vp-v1-unsigned, openid4vp-v1-signed or org-iso-mdoc)"
    )]
    UnknownProtocol(String),
    #[error("{0}")]
    Response(#[from] ResponseError),
    #[error("the response presents the credential {0:?}, which was not requested")]
    UnrequestedCredential(String),
}

impl DcApiRefusal {
    /// The refusal as one stable word, for `agegate_presentations_total`.
    pub fn outcome(&self) -> &'static str {
        match self {
            DcApiRefusal::UnknownProtocol(_) => "unknown_protocol",
            DcApiRefusal::Response(ResponseError::WalletError(_)) => "wallet_error",
            DcApiRefusal::Response(
                ResponseError::Unencrypted | ResponseError::UnencryptedByReference,
            ) => "unencrypted",
            DcApiRefusal::Response(ResponseError::Jwe(_) | ResponseError::Hpke(_)) => {
                "undecryptable"
            }
            DcApiRefusal::Response(_) => "malformed",
            DcApiRefusal::UnrequestedCredential(_) => "wrong_credential",
        }
    }
}
