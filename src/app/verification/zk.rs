//! Zero-knowledge answers (docs/zk.md#zero-knowledge-proofs): the site's policy, the
//! cheap checks of [`crate::mdoc::zk`] on the proof lane, then the proof on the bounded
//! pool, both off the async runtime's threads. A full pool leaves the invite and its live request as they were.

use std::time::Instant;

use super::answering::{Answering, Refusal};
use super::{AnswerError, Opened};
use crate::domain::PresentationRequest;
use crate::mdoc::zk::{self, ZkChecked, ZkExpected};
use crate::mdoc::{AgeProof, PresentationError};
use crate::zk::{RunError, Zk};

/// An answer that passed every check, with the circuit its proof was checked against
/// when it was a zero-knowledge one.
pub(super) struct Proven {
    pub(super) proof: AgeProof,
    /// `circuit_hash`, for the receipt.
    pub(super) zk_circuit: Option<String>,
}

impl Answering<'_> {
    /// A plain answer is refused where the request offered only a proof.
    pub(super) fn plain_allowed(&self, request: &PresentationRequest) -> Result<(), Refusal> {
        match &request.zk {
            Some(offer) if offer.required => Err(PresentationError::ZkRequired.into()),
            _ => Ok(()),
        }
    }

    /// Every check of a zero-knowledge answer, the proof last, on `zk`'s pool.
    pub(super) async fn verify_zk(
        &self,
        zk: Option<&Zk>,
        opened: Opened,
        request: &PresentationRequest,
    ) -> Result<Proven, AnswerError> {
        // A request made without circuits offered none: nothing to check a proof against.
        let (Some(zk), Some(offer)) = (zk, request.zk.as_ref()) else {
            return Err(self.refuse(opened.kind, PresentationError::ZkNotOffered));
        };
        let offered = offer.circuits.clone();
        let min_age = request.required_age(self.gateway.min_age).get();
        let now = self.now;
        let anchors = match opened.kind {
            Some(kind) => self.anchors.only(kind),
            None => self.anchors.clone(),
        };
        let device_response = opened.device_response;
        // The cheap checks too run on the lane: a proof's CBOR and MSO are 320 KB and more.
        let checks = zk.lane.run(async move {
            let expected = ZkExpected {
                offered: &offered,
                min_age,
                now,
            };
            zk::check_zk_response(&device_response, &expected, &anchors)
        });
        let checked = checks
            .await
            .map_err(|_| AnswerError::CheckPanicked)?
            .map_err(|reason| self.refuse(opened.kind, reason))?;
        // Offered by this request but no longer loaded (a restart with fewer circuits).
        let Some(circuit) = zk.circuits.by_hash(&checked.circuit_hash).cloned() else {
            let reason = PresentationError::ZkCircuitNotOffered(checked.circuit_hash.clone());
            return Err(self.refuse(Some(checked.kind), reason));
        };
        let kind = Some(checked.kind);
        let transcript = opened.transcript;
        let job = move || {
            let started = Instant::now();
            let verdict = checked.verify(&circuit, &transcript);
            (checked, verdict, started.elapsed())
        };
        let (checked, verdict, took) = match zk.pool.run(job).await {
            Ok(done) => done,
            Err(RunError::Full) => {
                tracing::info!(invite_id = %self.id, "zero-knowledge proof pool full");
                self.count(kind, "busy");
                return Err(AnswerError::Busy);
            }
            Err(RunError::Panicked) => return Err(AnswerError::CheckPanicked),
        };
        self.metrics.zk_verify_seconds.observe(took.as_secs_f64());
        verdict.map_err(|reason| self.refuse(Some(checked.kind), reason))?;
        Ok(Proven {
            proof: proved(&checked),
            zk_circuit: Some(checked.circuit_hash),
        })
    }

    fn refuse(&self, kind: Option<crate::domain::Kind>, reason: PresentationError) -> AnswerError {
        self.refusal(Refusal { kind, reason })
    }
}

/// What the receipt and the logs say of a verified proof: the claim is the request's
/// `age_over_NN` exactly (a circuit proves the one attribute it was given).
fn proved(checked: &ZkChecked) -> AgeProof {
    AgeProof {
        kind: checked.kind,
        doc_type: checked.doc_type,
        age_over: checked.age_over,
        issuer_anchor: checked.issuer_anchor,
        status: crate::mdoc::status::StatusClaim::Hidden,
    }
}
