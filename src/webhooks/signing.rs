//! Standard Webhooks signatures: `v1,` + base64 of HMAC-SHA256 over
//! `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's decoded bytes; and
//! the everprotec format's: lowercase hex HMAC-SHA256 over the body alone, keyed with the
//! secret's text (`whsec_…` as UTF-8).

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

/// Lowercase hex HMAC-SHA256 of `body`, keyed with the UTF-8 bytes of `secret` as the
/// site was given it (`X-Everprotec-SHA256`).
pub fn hex_hmac(secret: &WebhookSecret, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes())
        .expect("HMAC takes keys of any length");
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    fn everprotec_signatures_are_lowercase_hex_hmac_keyed_with_the_secret_text() {
        // RFC 4231 test case 2: key "Jefe".
        let secret = WebhookSecret::from_stored("Jefe".into());
        assert_eq!(
            hex_hmac(&secret, b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
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
