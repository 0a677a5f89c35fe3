//! A wallet's answer to one of an invite's presentation requests, by any transport: the
//! link's `direct_post` (OpenID4VP), the Digital Credentials API, and whatever comes
//! next. Each transport only takes its answer apart down to a DeviceResponse and the
//! session transcript that binds it; which invite, which live request, every check of
//! docs/presentations.md#what-is-checked and the acceptance are the same for all, here. Inputs
//! are plain values and the result a typed outcome; the HTTP edge maps [`AnswerError`]
//! to statuses and error bodies.

mod answering;
mod by_reference;
mod dc_api;
mod refusal;
mod status;
mod zk;

use serde_json::Value;

use super::invites::announce_verified;
use crate::domain::invite::gateway_url;
use crate::domain::presentation::{self, PresentationRequest};
use crate::domain::{InviteId, Kind, Status, VerifyMethod};
use crate::mdoc::{self, KindAnchors, PresentationError};
use crate::metrics::Metrics;
use crate::receipt::{Evidence, Presented, Transport};
use crate::store::{AnswerOutcome, GatewayInvite, StoreError};
use crate::trust::TrustHandle;
use answering::{Answering, Refusal};
use dc_api::Protocol;
use zk::Proven;

pub use refusal::DcApiRefusal;

/// A wallet's answer as its transport received it.
pub enum Answer<'a> {
    /// The link's `direct_post` form (OpenID4VP 1.0 section 8.2).
    Link { state: &'a str, vp_token: &'a str },
    /// A link form without a non-empty `state` or `vp_token`: refused once the invite
    /// is known to be answerable.
    MalformedLink,
    /// A `direct_post.jwt` form's `response`: the answer to a signed request by reference.
    ByReference { response: &'a str },
    /// What the gateway page's script posted from `navigator.credentials.get`.
    DcApi {
        state: &'a str,
        protocol: &'a str,
        data: &'a Value,
    },
}

impl Answer<'_> {
    fn transport(&self) -> Transport {
        match self {
            Answer::Link { .. } | Answer::MalformedLink | Answer::ByReference { .. } => {
                Transport::OpenId4Vp
            }
            Answer::DcApi { .. } => Transport::DcApi,
        }
    }
}

/// An accepted answer: the invite is verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    /// By this answer.
    Now(Kind),
    /// Already, by another answer to the same request a moment ago.
    Already(Kind),
}

/// Why an answer was not accepted. Every refusal leaves the invite and the request as
/// they were.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("no such invite")]
    NoSuchInvite,
    /// The invite's site accepts no credential kind the server has on.
    #[error("no wallet method for this invite")]
    WalletOff,
    #[error("the invite has expired")]
    Expired,
    /// The link's form lacks `state` or `vp_token`.
    #[error("the answer lacks state or vp_token")]
    Malformed,
    /// The `state` names no live request of this invite (or it was used a moment ago).
    #[error("the request answered is not live")]
    NotLive,
    /// The DeviceResponse failed a check.
    #[error("presentation refused: {0}")]
    Refused(PresentationError),
    /// A DC API answer could not be taken apart to its DeviceResponse.
    #[error("presentation refused: {0}")]
    DcApi(DcApiRefusal),
    /// Every proof checker is busy and as many checks wait: try again in a moment.
    #[error("the zero-knowledge proof checks are all busy")]
    Busy,
    /// The proof check panicked (a fault of ours, logged by the pool; its worker was
    /// replaced). Nothing was written.
    #[error("the zero-knowledge proof check panicked")]
    CheckPanicked,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The kinds an invite's wallet requests ask for now: those its site accepts under the
/// anchors the server holds (empty: no wallet method for this site).
pub fn requested(trust: &TrustHandle, gateway: &GatewayInvite) -> KindAnchors {
    trust
        .current()
        .anchors
        .restricted_to(gateway.accept.kinds())
}

/// What a transport's answer comes down to: the DeviceResponse, the session transcript
/// that binds it, and its kind when the answer names it.
struct Opened {
    device_response: Vec<u8>,
    transcript: Vec<u8>,
    kind: Option<Kind>,
}

/// The service, borrowing what a server holds.
pub struct Verification<'a> {
    /// The store, the clock, and the webhook worker woken when an acceptance wrote the
    /// `invite.verified` event.
    pub services: &'a super::Services,
    pub trust: &'a TrustHandle,
    pub metrics: &'a Metrics,
    /// `--public-url`: gateway URLs, the link's response URI and receipts' issuer.
    pub public_url: &'a str,
    /// The origin DC API answers are bound to (from `--public-url`, never a request).
    pub dc_api_origin: &'a str,
    /// `--zk-circuits`: the circuits and the pool proofs are checked on; `None` is off.
    pub zk: Option<&'a crate::zk::Zk>,
    /// The signing identity of requests by reference; `None`: there are none to answer.
    pub signer: Option<&'a crate::dcapi::RequestSigner>,
    /// `--credential-status`, and the status lists in hand.
    pub status_mode: crate::domain::StatusMode,
    pub status_lists: &'a std::sync::Arc<crate::trust::status_lists::StatusLists>,
    /// Where this answer's decoding runs: the proof lane for an answer taken for a proof
    /// (see [`Verification::on_lane`]), the calling thread otherwise.
    pub lane: Option<crate::zk::ProofLane>,
}

impl Verification<'_> {
    /// The answer is one taken for a proof (its length said so): its decoding, the
    /// milliseconds of CPU a proof's 320 KB and more cost before the check, runs on the
    /// proof lane, off the threads that answer every other request.
    pub fn on_lane(mut self, lane: Option<crate::zk::ProofLane>) -> Self {
        self.lane = lane;
        self
    }

    /// Runs `work`, pure CPU on an answer's bytes (it takes no lock another thread waits
    /// on: the lane's thread runs only when no other wants the CPU), on the proof lane if
    /// this answer is handled there.
    async fn decode<R, F>(&self, work: F) -> Result<R, AnswerError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        crate::zk::ProofLane::decode_on(self.lane.as_ref(), work)
            .await
            .map_err(|_| AnswerError::CheckPanicked)
    }

    /// Takes `answer` to invite `id` through every rule: accepted, the request is used up
    /// and the invite verified in one transaction (single use across transports).
    pub async fn answer(&self, id: &InviteId, answer: Answer<'_>) -> Result<Verified, AnswerError> {
        let answering = self.load(id, answer.transport()).await?;
        let (request, opened) = match answer {
            Answer::MalformedLink => {
                answering.count(None, "malformed");
                return Err(AnswerError::Malformed);
            }
            Answer::Link { state, vp_token } => {
                self.refuse_unencrypted(&answering, state).await?;
                let request = self.live_request(&answering, state).await?;
                let response_uri = presentation::response_uri(&gateway_url(self.public_url, id));
                let client_id = presentation::client_id(&response_uri);
                let transcript =
                    mdoc::session_transcript(&client_id, &request.nonce, &response_uri);
                let (vp_token, anchors) = (vp_token.to_owned(), answering.anchors.clone());
                let decoded = self
                    .decode(move || mdoc::device_response_bytes(&vp_token, &anchors))
                    .await?;
                let (kind, device_response) = answering.check(decoded)?;
                let opened = Opened {
                    device_response,
                    transcript,
                    kind: Some(kind),
                };
                (request, opened)
            }
            Answer::ByReference { response } => {
                self.open_by_reference(&answering, response).await?
            }
            Answer::DcApi {
                state,
                protocol,
                data,
            } => {
                let protocol = answering.refused_if(Protocol::parse(protocol))?;
                let request = self.live_request(&answering, state).await?;
                let opened = self
                    .open_dc_api(&answering, &request, protocol, data)
                    .await?;
                (request, opened)
            }
        };
        let proven = if mdoc::zk::is_zk_response(&opened.device_response) {
            // Its status is hidden with its MSO: refused before the costly proof check.
            if self.status_mode == crate::domain::StatusMode::Require {
                return Err(answering.refusal(Refusal {
                    kind: opened.kind,
                    reason: PresentationError::ZkStatusRequired,
                }));
            }
            answering.verify_zk(self.zk, opened, &request).await?
        } else {
            answering.check(answering.plain_allowed(&request))?;
            let proof = answering.check(answering.verify(
                &opened.device_response,
                &request,
                &opened.transcript,
                opened.kind,
            ))?;
            Proven {
                proof,
                zk_circuit: None,
            }
        };
        let status = answering
            .credential_status(self.status_mode, self.status_lists, &proven.proof)
            .await?;
        self.accept(&answering, &request, proven, status).await
    }

    /// The invite `id`, answerable: it exists, its site accepts a kind the server has on,
    /// and it has not expired.
    async fn load(
        &self,
        id: &InviteId,
        transport: Transport,
    ) -> Result<Answering<'_>, AnswerError> {
        let gateway = self
            .services
            .store
            .gateway_invite(id)
            .await?
            .ok_or(AnswerError::NoSuchInvite)?;
        let anchors = requested(self.trust, &gateway);
        if anchors.on().is_empty() {
            return Err(AnswerError::WalletOff);
        }
        let now = self.services.clock.now();
        if gateway.invite.status_at(now) == Status::Expired {
            return Err(AnswerError::Expired);
        }
        Ok(Answering {
            anchors,
            id: id.clone(),
            gateway,
            now,
            transport,
            metrics: self.metrics,
        })
    }

    /// The live request of this invite that `request_state` names.
    async fn live_request(
        &self,
        answering: &Answering<'_>,
        request_state: &str,
    ) -> Result<PresentationRequest, AnswerError> {
        let live = self
            .services
            .store
            .request(&answering.id, request_state)
            .await?
            .filter(|r| r.is_live(answering.now));
        live.ok_or_else(|| {
            answering.count(None, "not_live");
            AnswerError::NotLive
        })
    }

    /// A verified presentation: the request is used up and the invite verified, in one
    /// transaction.
    async fn accept(
        &self,
        answering: &Answering<'_>,
        request: &PresentationRequest,
        Proven { proof, zk_circuit }: Proven,
        credential_status: crate::domain::CredentialStatus,
    ) -> Result<Verified, AnswerError> {
        let id = &answering.id;
        let evidence = Evidence {
            issuer: self.public_url.to_owned(),
            min_age: request.required_age(answering.gateway.min_age).get(),
            presented: Some(Presented {
                kind: proof.kind,
                doc_type: proof.doc_type,
                issuer_anchor: proof.issuer_anchor,
                transport: answering.transport,
                nonce: request.nonce.clone(),
                zk_circuit,
                credential_status,
            }),
        };
        let outcome = self
            .services
            .store
            .answer_request(id, &request.state, evidence, answering.now)
            .await?;
        answering.count(
            Some(proof.kind),
            match outcome {
                AnswerOutcome::Verified(_) | AnswerOutcome::AlreadyVerified(_) => "accepted",
                AnswerOutcome::NotLive => "not_live",
                AnswerOutcome::NotFound | AnswerOutcome::Expired => "invite_gone",
            },
        );
        match outcome {
            AnswerOutcome::Verified(_) => {
                tracing::debug!(invite_id = %id, age_over = proof.age_over, "wallet answer accepted");
                announce_verified(
                    self.metrics,
                    &self.services.deliveries,
                    id,
                    VerifyMethod::Wallet(proof.kind),
                );
                Ok(Verified::Now(proof.kind))
            }
            AnswerOutcome::AlreadyVerified(_) => Ok(Verified::Already(proof.kind)),
            AnswerOutcome::NotFound => Err(AnswerError::NoSuchInvite),
            AnswerOutcome::Expired => Err(AnswerError::Expired),
            // Another node (or transport) accepted this state a moment ago: single use.
            AnswerOutcome::NotLive => Err(AnswerError::NotLive),
        }
    }
}
