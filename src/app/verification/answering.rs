//! An answer on its way through the rules: counted, logged and refused alike whatever
//! its transport.

use super::refusal::DcApiRefusal;
use super::AnswerError;
use crate::clock::UnixTime;
use crate::domain::{InviteId, Kind, PresentationRequest};
use crate::mdoc::{self, KindAnchors, PresentationError};
use crate::metrics::Metrics;
use crate::receipt::Transport;
use crate::store::GatewayInvite;

/// An answer to an answerable invite, on its way through the rules.
pub(super) struct Answering<'a> {
    /// The kinds the answer may be, under their anchors: those the site accepts and the
    /// server has on now.
    pub(super) anchors: KindAnchors,
    pub(super) id: InviteId,
    pub(super) gateway: GatewayInvite,
    pub(super) now: UnixTime,
    /// How the answer came: the receipt and the metrics say so.
    pub(super) transport: Transport,
    pub(super) metrics: &'a Metrics,
}

/// A presentation refused, with its kind when the answer named it (for the metrics).
pub(super) struct Refusal {
    pub(super) kind: Option<Kind>,
    pub(super) reason: PresentationError,
}

impl From<PresentationError> for Refusal {
    fn from(reason: PresentationError) -> Self {
        Self { kind: None, reason }
    }
}

impl Answering<'_> {
    /// Counts this answer in `agegate_presentations_total` (`accepted`, or a refusal's
    /// word) under `kind`; when the answer never said which, the one kind asked for,
    /// or `unknown` when several were.
    pub(super) fn count(&self, kind: Option<Kind>, outcome: &str) {
        let asked = self.anchors.on();
        let single = (asked.len() == 1).then(|| asked.iter().next()).flatten();
        let kind = kind.or(single).map_or("unknown", Kind::name);
        self.metrics
            .presentation(kind, self.transport.as_str(), outcome);
    }

    /// Every check of docs/presentations.md#what-is-checked on the DeviceResponse, bound by
    /// `session_transcript`; when the answer named its credential (`kind`), only a
    /// document of that kind counts.
    pub(super) fn verify(
        &self,
        device_response: &[u8],
        request: &PresentationRequest,
        session_transcript: &[u8],
        kind: Option<Kind>,
    ) -> Result<mdoc::AgeProof, Refusal> {
        let expected = mdoc::Expected {
            session_transcript,
            min_age: request.required_age(self.gateway.min_age).get(),
            now: self.now,
        };
        let anchors = match kind {
            Some(kind) => self.anchors.only(kind),
            None => self.anchors.clone(),
        };
        mdoc::verify_device_response(device_response, &expected, &anchors)
            .map_err(|reason| Refusal { kind, reason })
    }

    /// A refusal of the DeviceResponse, logged and counted.
    pub(super) fn check<T>(&self, result: Result<T, impl Into<Refusal>>) -> Result<T, AnswerError> {
        result.map_err(|refusal| self.refusal(refusal))
    }

    /// A refusal of the presentation, logged and counted.
    pub(super) fn refusal(&self, refusal: impl Into<Refusal>) -> AnswerError {
        let Refusal { kind, reason } = refusal.into();
        tracing::info!(invite_id = %self.id, %reason, "presentation refused");
        self.count(kind, reason.outcome());
        AnswerError::Refused(reason)
    }

    /// A DC API refusal, logged and counted.
    pub(super) fn refused(&self, refusal: impl Into<DcApiRefusal>) -> AnswerError {
        let refusal = refusal.into();
        tracing::info!(invite_id = %self.id, reason = %refusal, "dc api answer refused");
        self.count(None, refusal.outcome());
        AnswerError::DcApi(refusal)
    }

    pub(super) fn refused_if<T, E: Into<DcApiRefusal>>(
        &self,
        result: Result<T, E>,
    ) -> Result<T, AnswerError> {
        result.map_err(|e| self.refused(e))
    }
}
