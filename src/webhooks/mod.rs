//! Webhooks: events are written to an outbox in the same transaction as the change they
//! report (see the store); here they are signed and delivered, at least once.

pub mod client;
pub mod formats;
pub mod guard;
pub mod signing;
pub mod sweeper;
pub mod worker;

use serde::Serialize;

use crate::clock::rfc3339;
use crate::domain::webhook::EventType;
use crate::domain::Status;
use crate::store::DueEvent;

/// The JSON body of an event. Built from immutable facts of the event and invite, so
/// every attempt of one event sends the same body.
#[derive(Serialize)]
struct Payload<'a> {
    #[serde(rename = "type")]
    event_type: &'static str,
    timestamp: String,
    data: PayloadData<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PayloadData<'a> {
    site_id: String,
    invite_id: &'a str,
    url: String,
    status: Status,
    custom_id: Option<&'a str>,
    /// How the invite was verified (`eu-av`, `sandbox`, `verifier`); null when expired.
    method: Option<&'static str>,
    /// The verification's receipt (docs/evidence.md#receipts), in `invite.verified` events only.
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt: Option<&'a str>,
}

/// The body of `event`, whose invite's gateway page lives under `public_url`.
pub fn payload(event: &DueEvent, public_url: &str) -> Vec<u8> {
    let invite = &event.invite;
    let body = Payload {
        event_type: event.event_type.as_str(),
        timestamp: rfc3339(event.occurred_at),
        data: PayloadData {
            site_id: invite.site_id.to_string(),
            invite_id: invite.id.as_str(),
            url: crate::domain::invite::gateway_url(public_url, &invite.id),
            status: event.event_type.status(),
            custom_id: invite.custom_id.as_deref(),
            method: match event.event_type {
                EventType::InviteVerified => invite.method.map(|m| m.as_str()),
                EventType::InviteExpired => None,
            },
            receipt: match event.event_type {
                EventType::InviteVerified => event.receipt.as_deref(),
                EventType::InviteExpired => None,
            },
        },
    };
    serde_json::to_vec(&body).expect("a payload serializes")
}
