//! The credential's status (docs/credential-status.md), judged after every other check
//! has passed — so a list is only ever fetched for a credential whose issuer signature
//! verified, and its `uri` is the issuer's — under `--credential-status`.

use std::sync::Arc;

use super::answering::{Answering, Refusal};
use super::AnswerError;
use crate::domain::{CredentialStatus, StatusMode};
use crate::mdoc::status::StatusClaim;
use crate::mdoc::{AgeProof, PresentationError};
use crate::trust::status_lists::{ListSigner, StatusLists, Verdict};

use PresentationError as E;

impl Answering<'_> {
    /// What the verification records of `proof`'s credential status, or the refusal
    /// its status calls for.
    pub(super) async fn credential_status(
        &self,
        mode: StatusMode,
        lists: &Arc<StatusLists>,
        proof: &AgeProof,
    ) -> Result<CredentialStatus, AnswerError> {
        let kind = proof.kind;
        let counted = |status: &str| self.metrics.credential_status(kind.name(), status);
        let refuse = |status: &str, reason: PresentationError| {
            counted(status);
            self.refusal(Refusal {
                kind: Some(kind),
                reason,
            })
        };
        // Accepted as unknown under `check`; refused under `require`, naming why.
        let unknown = |why: String| {
            if mode == StatusMode::Require {
                return Err(refuse("unknown", E::StatusUnknown(why)));
            }
            tracing::info!(invite_id = %self.id, "credential status unknown: {why}");
            counted("unknown");
            Ok(CredentialStatus::Unknown)
        };
        if mode == StatusMode::Off {
            counted("unchecked");
            return Ok(CredentialStatus::Unchecked);
        }
        let status = match &proof.status {
            StatusClaim::Absent => {
                counted("none");
                return Ok(CredentialStatus::None);
            }
            StatusClaim::Hidden if mode == StatusMode::Require => {
                return Err(refuse("unknown", E::ZkStatusRequired));
            }
            StatusClaim::Hidden => {
                return unknown("a zero-knowledge proof hides it".into());
            }
            StatusClaim::Malformed(what) => {
                return unknown(format!("its status member is malformed: {what}"));
            }
            StatusClaim::Listed(status) => status,
        };
        let Some(anchors) = self.anchors.shared(kind) else {
            return unknown("its kind has no anchors".into());
        };
        let signer = ListSigner::of(status, anchors);
        match lists.status(status, signer).await {
            Verdict::Status(0) => {
                counted("valid");
                Ok(CredentialStatus::Valid)
            }
            Verdict::Status(1) => Err(refuse("revoked", E::CredentialRevoked)),
            Verdict::Status(2) => Err(refuse("suspended", E::CredentialSuspended)),
            Verdict::Status(other) => Err(refuse("invalid", E::CredentialStatusNotValid(other))),
            Verdict::OutOfRange => Err(refuse("invalid", E::StatusIndexOutOfRange)),
            Verdict::Unknown(why) => unknown(why),
        }
    }
}
