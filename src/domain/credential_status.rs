//! Whether a presented credential is still valid by its issuer's word
//! (docs/credential-status.md): how hard the server looks (`--credential-status`) and
//! what a verification records of it (a receipt's `credentialStatus`).

use std::fmt;

/// `serve --credential-status`: what the server does with a credential's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StatusMode {
    /// Nothing is fetched; every verification records `unchecked`.
    Off,
    /// Revoked and suspended credentials are refused; a list that cannot be had leaves
    /// the answer accepted as `unknown`.
    #[default]
    Check,
    /// As `check`, and an `unknown` is refused too (so is a zero-knowledge proof, whose
    /// status is hidden with its MSO).
    Require,
}

impl StatusMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusMode::Off => "off",
            StatusMode::Check => "check",
            StatusMode::Require => "require",
        }
    }
}

impl fmt::Display for StatusMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a verification records of its credential's status. Revoked and suspended
/// credentials are never verified, so they have no value here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CredentialStatus {
    /// Its issuer's list says valid.
    Valid,
    /// Its list could not be had, or could not be trusted (accepted under `check`).
    Unknown,
    /// `--credential-status off`: not looked at.
    Unchecked,
    /// The credential names no status list.
    None,
}

impl CredentialStatus {
    /// Every value, in the order the console shows them.
    pub const ALL: [CredentialStatus; 4] = [
        CredentialStatus::Valid,
        CredentialStatus::Unknown,
        CredentialStatus::Unchecked,
        CredentialStatus::None,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CredentialStatus::Valid => "valid",
            CredentialStatus::Unknown => "unknown",
            CredentialStatus::Unchecked => "unchecked",
            CredentialStatus::None => "none",
        }
    }
}

impl fmt::Display for CredentialStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
