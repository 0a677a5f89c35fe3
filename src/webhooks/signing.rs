//! Standard Webhooks signatures: `v1,` + base64 of HMAC-SHA256 over
//! `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's decoded bytes.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::WebhookSecret;

/// One `v1,...` signature.
pub fn sign(key: &[u8], webhook_id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(webhook_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

/// The `webhook-signature` header: one signature per valid secret, space-separated, so
/// a receiver that has either the new or the old secret (during rotation) can verify.
pub fn signature_header(
    secrets: &[WebhookSecret],
    webhook_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .filter_map(|s| s.key())
        .map(|key| sign(&key, webhook_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_the_standard_webhooks_test_vector() {
        let secret = WebhookSecret::from_stored("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into());
        assert_eq!(
            signature_header(
                &[secret],
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn every_secret_signs() {
        let a = WebhookSecret::generate();
        let b = WebhookSecret::generate();
        let header = signature_header(&[a.clone(), b.clone()], "evt_1", 10, b"{}");
        let parts: Vec<_> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], sign(&a.key().unwrap(), "evt_1", 10, b"{}"));
        assert_eq!(parts[1], sign(&b.key().unwrap(), "evt_1", 10, b"{}"));
    }
}
