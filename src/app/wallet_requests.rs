//! Opening a wallet request and handing it out: the invite's live presentation request
//! (opened on the first visit of its pending page, the same on every reload and node),
//! and its signed request object by reference (docs/wallets.md#signed-requests-by-reference),
//! negotiated with the fetching wallet's metadata. The pages and the request-object route
//! call this; it calls the store, the clock, the domain and the pure `dcapi`.

use subtle::ConstantTimeEq;

use crate::dcapi::by_reference::{self, ByReference, MetadataError, Negotiated, RequestObject};
use crate::dcapi::RequestSigner;
use crate::domain::invite::gateway_url;
use crate::domain::presentation;
use crate::domain::{InviteId, KindSet, PresentationRequest, Status};
use crate::store::{GatewayInvite, StoreError};
use crate::trust::TrustHandle;

/// Why a request object is not handed out.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("no such invite")]
    NoSuchInvite,
    #[error("the invite has expired")]
    Expired,
    /// No such request id, or its request is no longer live (or the server signs none).
    #[error("no such request, or it is no longer live")]
    NoSuchRequest,
    #[error("{0}")]
    Metadata(#[from] MetadataError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A live request as a page offers it.
pub struct Opened {
    pub request: PresentationRequest,
    /// The kinds asked for: the site accepts them and the server has them on.
    pub kinds: KindSet,
}

/// The service, borrowing what a server holds.
pub struct WalletRequests<'a> {
    /// The store and the clock.
    pub services: &'a super::Services,
    pub trust: &'a TrustHandle,
    pub zk: Option<&'a crate::zk::Zk>,
    pub public_url: &'a str,
    /// The signing identity; `None`: no request by reference.
    pub signer: Option<&'a RequestSigner>,
}

impl WalletRequests<'_> {
    /// The invite's live request, opening one if it has none; `None` when the site
    /// accepts no kind the server has on. Reloads read; only the first visit (or one
    /// after 10 minutes) writes, and a visit to a request an older release made without
    /// the DC API's secrets.
    pub async fn live(&self, gateway: &GatewayInvite) -> Result<Option<Opened>, StoreError> {
        let kinds = super::verification::requested(self.trust, gateway).on();
        if kinds.is_empty() {
            return Ok(None);
        }
        let id = &gateway.invite.id;
        let now = self.services.clock.now();
        let request = match self.services.store.live_request(id, now).await? {
            Some(live) if live.dc_api.is_some() => live,
            _ => {
                let zk = self.zk.and_then(|zk| zk.offer(gateway.zk));
                let fresh = PresentationRequest::new(gateway.min_age, now).with_zk(zk);
                self.services.store.open_request(id, fresh).await?
            }
        };
        Ok(Some(Opened { request, kinds }))
    }

    /// The by-reference link of `request` (`None` without a signing identity):
    /// `{scheme}://authorize?client_id=…&request_uri=…&request_uri_method=post`.
    pub fn reference_link(
        &self,
        scheme: &str,
        id: &InviteId,
        request: &PresentationRequest,
    ) -> Option<String> {
        let signer = self.signer?;
        let secrets = request.dc_api.as_ref()?;
        let reference = ByReference::of(&secrets.response_key);
        let request_uri =
            presentation::request_uri(&gateway_url(self.public_url, id), &reference.request_id);
        Some(presentation::by_reference_uri(
            scheme,
            &signer.client_id(),
            &request_uri,
        ))
    }

    /// The signed request object of invite `id`'s live request named `request_id`,
    /// offered as `negotiated` says (docs/wallets.md#the-request-object).
    pub async fn request_object(
        &self,
        id: &InviteId,
        request_id: &str,
        negotiated: Result<Negotiated, MetadataError>,
    ) -> Result<String, FetchError> {
        let gateway = self
            .services
            .store
            .gateway_invite(id)
            .await?
            .ok_or(FetchError::NoSuchInvite)?;
        let now = self.services.clock.now();
        if gateway.invite.status_at(now) == Status::Expired {
            return Err(FetchError::Expired);
        }
        let kinds = super::verification::requested(self.trust, &gateway).on();
        let signer = self.signer.ok_or(FetchError::NoSuchRequest)?;
        if kinds.is_empty() {
            return Err(FetchError::NoSuchRequest);
        }
        let request = self
            .services
            .store
            .live_request(id, now)
            .await?
            .ok_or(FetchError::NoSuchRequest)?;
        let secrets = request.dc_api.as_ref().ok_or(FetchError::NoSuchRequest)?;
        let reference = ByReference::of(&secrets.response_key);
        let named = reference.request_id.as_bytes().ct_eq(request_id.as_bytes());
        if !bool::from(named) {
            return Err(FetchError::NoSuchRequest);
        }
        // Only a request that exists is negotiated: an unknown id is 404 whatever it posts.
        let negotiated = negotiated?;
        let zk = request.zk.as_ref().filter(|_| negotiated.zk);
        let age = request.required_age(gateway.min_age);
        let response_uri = presentation::response_uri(&gateway_url(self.public_url, id));
        let object = RequestObject {
            response_uri: &response_uri,
            nonce: &request.nonce,
            state: &reference.state,
            dcql_query: &presentation::dcql_query_value(kinds, age, zk),
            client_metadata: &presentation::client_metadata_value(),
            key: &reference.key,
            negotiated: &negotiated,
            iat: now,
            exp: request.expires_at,
        };
        Ok(by_reference::sign(&object, signer))
    }
}
