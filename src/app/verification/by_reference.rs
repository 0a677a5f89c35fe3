//! Answers to a signed request by reference (docs/wallets.md#signed-requests-by-reference):
//! `direct_post.jwt`, the form field `response` a JWE to the request's own key, down to
//! its DeviceResponse and the OpenID4VP 1.0 B.2.6.1 SessionTranscript with that key's
//! thumbprint; and the refusal of such an answer sent unencrypted.

use super::answering::Answering;
use super::refusal::DcApiRefusal;
use super::{AnswerError, Opened, Verification};
use crate::dcapi::by_reference::ByReference;
use crate::dcapi::jwe::Enc;
use crate::dcapi::response::{self, ResponseError};
use crate::dcapi::transcript;
use crate::domain::invite::gateway_url;
use crate::domain::{presentation, Kind, PresentationRequest};

impl Verification<'_> {
    /// The invite's live request, if it can be answered by reference (the server signs
    /// requests, and the request has its secrets), with its by-reference secrets.
    async fn by_reference(
        &self,
        answering: &Answering<'_>,
    ) -> Result<Option<(PresentationRequest, ByReference)>, AnswerError> {
        if self.signer.is_none() {
            return Ok(None);
        }
        let live = self
            .services
            .store
            .live_request(&answering.id, answering.now)
            .await?;
        Ok(live.and_then(|request| {
            let reference = ByReference::of(&request.dc_api.as_ref()?.response_key);
            Some((request, reference))
        }))
    }

    /// A `direct_post` answer whose `state` is the by-reference one: refused, since a
    /// request by reference is answered encrypted. Anything else passes.
    pub(super) async fn refuse_unencrypted(
        &self,
        answering: &Answering<'_>,
        state: &str,
    ) -> Result<(), AnswerError> {
        match self.by_reference(answering).await? {
            Some((_, reference)) if reference.state == state => Err(answering.refused(
                DcApiRefusal::Response(ResponseError::UnencryptedByReference),
            )),
            _ => Ok(()),
        }
    }

    /// The `direct_post.jwt` answer `jwe`: decrypted with the live request's key under an
    /// `enc` it offered, naming its state, down to what it presents and its transcript.
    pub(super) async fn open_by_reference(
        &self,
        answering: &Answering<'_>,
        jwe: &str,
    ) -> Result<(PresentationRequest, Opened), AnswerError> {
        let not_live = || {
            answering.count(None, "not_live");
            AnswerError::NotLive
        };
        let (Some(signer), Some((request, reference))) =
            (self.signer, self.by_reference(answering).await?)
        else {
            return Err(not_live());
        };
        let (jwe, key) = (jwe.to_owned(), reference.key.clone());
        let decrypted = self
            .decode(move || response::direct_post_jwt(&jwe, &key, &Enc::ALL))
            .await?;
        let (state, answer) = answering.refused_if(decrypted)?;
        if state.as_deref() != Some(reference.state.as_str()) {
            return Err(not_live());
        }
        let id = &answer.credential_id;
        let Some(kind) = Kind::by_dcql_id(id)
            .or_else(|| Kind::by_zk_dcql_id(id).map(|(kind, _)| kind))
            .filter(|k| answering.anchors.get(*k).is_some())
        else {
            let shown = id.chars().take(64).collect();
            return Err(answering.refused(DcApiRefusal::UnrequestedCredential(shown)));
        };
        let response_uri = presentation::response_uri(&gateway_url(self.public_url, &answering.id));
        let transcript = transcript::by_reference(
            &signer.client_id(),
            &request.nonce,
            &reference.key.thumbprint(),
            &response_uri,
        );
        let opened = Opened {
            device_response: answer.device_response,
            transcript,
            kind: Some(kind),
        };
        Ok((request, opened))
    }
}
