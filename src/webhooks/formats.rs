//! What one delivery attempt sends, in the site's webhook format (docs/webhooks.md#the-event, docs/webhooks.md#the-everprotec-format-drop-in-for-existing-receivers):
//! Standard Webhooks, or the `everprotec` format of the hosted service this API comes
//! from. Both go through the same outbox, retries and delivery log.

use serde::Serialize;

use super::{payload, signing};
use crate::domain::WebhookFormat;
use crate::store::DueEvent;

/// A request ready to go: its body and the headers besides `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// The everprotec header: lowercase hex HMAC-SHA256 of the body.
pub const EVERPROTEC_SIGNATURE: &str = "x-everprotec-sha256";

/// The everprotec body. Field order is the wire order, and serde_json's compact output
/// is what JavaScript's `JSON.stringify` writes for these values: no spaces, `"` `\`
/// and control characters escaped alike (`\n`, `\u001f`, …), everything else (non-ASCII,
/// U+2028, U+2029) as raw UTF-8.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Everprotec<'a> {
    invite_id: &'a str,
    custom_id: Option<&'a str>,
    timestamp: i64,
}

/// The request for an attempt at `timestamp` (Unix seconds), or why the event is not
/// sent at all (the site's format has no such event, or there is no secret to sign with).
pub fn outgoing(event: &DueEvent, public_url: &str, timestamp: i64) -> Result<Outgoing, String> {
    match event.webhook_format {
        WebhookFormat::Standard => {
            let body = payload(event, public_url);
            let signature = signing::signature_header(
                &event.secrets,
                event.event_id.as_str(),
                timestamp,
                &body,
            );
            Ok(Outgoing {
                headers: vec![
                    ("webhook-id", event.event_id.to_string()),
                    ("webhook-timestamp", timestamp.to_string()),
                    ("webhook-signature", signature),
                ],
                body,
            })
        }
        WebhookFormat::Everprotec => {
            if !WebhookFormat::Everprotec.sends(event.event_type) {
                return Err(format!(
                    "not sent: the site's webhook format (everprotec) carries no {}",
                    event.event_type.as_str()
                ));
            }
            // The current secret comes first; one header cannot carry a rotation's two.
            let secret = event
                .secrets
                .first()
                .ok_or("not sent: the site has no webhook secret")?;
            let body = everprotec_body(event);
            Ok(Outgoing {
                headers: vec![(EVERPROTEC_SIGNATURE, signing::hex_hmac(secret, &body))],
                body,
            })
        }
    }
}

/// `{"inviteId":…,"customId":…|null,"timestamp":<Unix seconds of the verification>}`.
pub fn everprotec_body(event: &DueEvent) -> Vec<u8> {
    let body = Everprotec {
        invite_id: event.invite.id.as_str(),
        custom_id: event.invite.custom_id.as_deref(),
        timestamp: event.occurred_at,
    };
    serde_json::to_vec(&body).expect("a payload serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::webhook::EventType;
    use crate::domain::{InviteId, SiteId, Status, VerifyMethod, WebhookSecret};
    use crate::store::InviteRecord;

    fn event(custom_id: Option<&str>, event_type: EventType) -> DueEvent {
        DueEvent {
            event_id: crate::domain::webhook::EventId::parse("evt_1").unwrap(),
            event_type,
            occurred_at: 1_800_000_123,
            attempts_in_round: 0,
            attempts: 0,
            invite: InviteRecord {
                id: InviteId::parse("SVz-7_1B797QMZt4A376og").unwrap(),
                site_id: SiteId::generate(),
                custom_id: custom_id.map(str::to_owned),
                stored_status: Status::Verified,
                created_at: 1_800_000_000,
                expires_at: 1_800_086_400,
                method: Some(VerifyMethod::Verifier),
            },
            webhook_url: Some("https://shop.example/hook".into()),
            webhook_format: WebhookFormat::Everprotec,
            secrets: vec![WebhookSecret::from_stored("whsec_new".into())],
            receipt: Some("a.b.c".into()),
        }
    }

    #[test]
    fn everprotec_bodies_are_written_as_json_stringify_writes_them() {
        let body = everprotec_body(&event(
            Some("a\"b\\c\n\u{1}\u{7f}é\u{2028}😀"),
            EventType::InviteVerified,
        ));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "{\"inviteId\":\"SVz-7_1B797QMZt4A376og\",\"customId\":\"a\\\"b\\\\c\\n\\u0001\u{7f}é\u{2028}😀\",\"timestamp\":1800000123}"
        );
        let body = everprotec_body(&event(None, EventType::InviteVerified));
        assert_eq!(
            body,
            br#"{"inviteId":"SVz-7_1B797QMZt4A376og","customId":null,"timestamp":1800000123}"#
        );
    }

    #[test]
    fn everprotec_signs_with_the_current_secret_as_text_and_skips_expiry() {
        let out = outgoing(&event(None, EventType::InviteVerified), "http://x", 5).unwrap();
        assert_eq!(out.headers.len(), 1);
        assert_eq!(out.headers[0].0, EVERPROTEC_SIGNATURE);
        let expected =
            signing::hex_hmac(&WebhookSecret::from_stored("whsec_new".into()), &out.body);
        assert_eq!(out.headers[0].1, expected);
        assert!(outgoing(&event(None, EventType::InviteExpired), "http://x", 5).is_err());
    }
}
