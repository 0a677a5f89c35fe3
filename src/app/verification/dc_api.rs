//! The Digital Credentials API's answers (docs/dc-api.md#the-answers): the protocol the
//! script names, and the answer decrypted with the request's key and bound to the
//! origin, down to its DeviceResponse and session transcript.

use serde_json::Value;

use super::answering::Answering;
use super::refusal::DcApiRefusal;
use super::{AnswerError, Opened, Verification};
use crate::dcapi::jwk::ResponseKey;
use crate::dcapi::request::{
    self, PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_OPENID4VP_UNSIGNED,
};
use crate::dcapi::response::{self, OpenId4VpAnswer, ResponseError};
use crate::dcapi::transcript;
use crate::domain::{Kind, PresentationRequest};

/// The protocols of the DC API requests (docs/dc-api.md#the-requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    /// R1, signed or not: answered alike, with an encrypted vp_token.
    OpenId4Vp,
    /// R2, ISO/IEC 18013-7 Annex C.
    AnnexC,
}

impl Protocol {
    pub(super) fn parse(name: &str) -> Result<Self, DcApiRefusal> {
        match name {
            PROTOCOL_OPENID4VP_UNSIGNED | PROTOCOL_OPENID4VP_SIGNED => Ok(Protocol::OpenId4Vp),
            PROTOCOL_ANNEX_C => Ok(Protocol::AnnexC),
            other => Err(DcApiRefusal::UnknownProtocol(shown(other))),
        }
    }
}

/// Client text in a message: at most 64 characters (Debug-escaped where shown).
fn shown(text: &str) -> String {
    text.chars().take(64).collect()
}

impl Verification<'_> {
    /// A DC API answer decrypted with the request's key (on the proof lane when it is
    /// handled there) and bound to the origin: its DeviceResponse, session transcript, and
    /// kind when the answer names it.
    pub(super) async fn open_dc_api(
        &self,
        answering: &Answering<'_>,
        request: &PresentationRequest,
        protocol: Protocol,
        data: &Value,
    ) -> Result<Opened, AnswerError> {
        // A request an older release made has no key: its page offered no DC API request.
        let secrets = request.dc_api.as_ref().ok_or(AnswerError::NotLive)?;
        let origin = self.dc_api_origin;
        let (data, key) = (data.clone(), secrets.response_key.clone());
        Ok(match protocol {
            Protocol::OpenId4Vp => {
                let decrypted = self
                    .decode(move || response::openid4vp(&data, &key))
                    .await?;
                open_openid4vp(answering, origin, request, &secrets.response_key, decrypted)?
            }
            Protocol::AnnexC => {
                // The text exactly as R2 carried it: the transcript hashes it.
                let info = request::encryption_info(&key, secrets.encryption_nonce.as_bytes());
                let transcript = transcript::annex_c(&info, origin);
                let hashed = transcript.clone();
                let opened = self
                    .decode(move || response::annex_c(&data, &key, &hashed))
                    .await?;
                // R2 asked for each kind's docType: the DeviceResponse's document says which.
                Opened {
                    device_response: answering.refused_if(opened)?,
                    transcript,
                    kind: None,
                }
            }
        })
    }
}

/// An OpenID4VP answer, decrypted: the credential it presents must be one requested.
fn open_openid4vp(
    answering: &Answering<'_>,
    origin: &str,
    request: &PresentationRequest,
    key: &ResponseKey,
    decrypted: Result<OpenId4VpAnswer, ResponseError>,
) -> Result<Opened, AnswerError> {
    let opened = answering.refused_if(decrypted)?;
    let id = &opened.credential_id;
    let Some(kind) = Kind::by_dcql_id(id)
        .or_else(|| Kind::by_zk_dcql_id(id).map(|(kind, _)| kind))
        .filter(|k| answering.anchors.get(*k).is_some())
    else {
        let refusal = DcApiRefusal::UnrequestedCredential(shown(&opened.credential_id));
        return Err(answering.refused(refusal));
    };
    let transcript = transcript::openid4vp(origin, &request.nonce, &key.thumbprint());
    Ok(Opened {
        device_response: opened.device_response,
        transcript,
        kind: Some(kind),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_and_unknown_ones_are_named() {
        assert_eq!(
            Protocol::parse("openid4vp-v1-unsigned"),
            Ok(Protocol::OpenId4Vp)
        );
        assert_eq!(
            Protocol::parse("openid4vp-v1-signed"),
            Ok(Protocol::OpenId4Vp)
        );
        assert_eq!(Protocol::parse("org-iso-mdoc"), Ok(Protocol::AnnexC));
        let refusal = Protocol::parse("openid4vp").unwrap_err();
        assert_eq!(refusal.outcome(), "unknown_protocol");
        assert!(refusal
            .to_string()
            .starts_with("unknown protocol \"openid4vp\""));
        let long = "x".repeat(500);
        assert!(Protocol::parse(&long).unwrap_err().to_string().len() < 200);
    }
}
