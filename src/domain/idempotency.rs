//! Idempotent create (docs/api.md#retrying-a-create-safely-idempotency-key): the client's `Idempotency-Key` and the rule that
//! decides what a repeat of a create means.

use sha2::{Digest, Sha256};
use std::fmt;

use super::InviteId;
use crate::clock::UnixTime;

/// How long a key is remembered, per site: 24 hours from the create that used it.
pub const IDEMPOTENCY_WINDOW_SECS: i64 = 24 * 60 * 60;

/// Longest accepted key, in bytes (= characters: only printable ASCII is allowed).
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;

/// A client's `Idempotency-Key`: 1 to 255 printable ASCII characters (0x20–0x7E).
/// Its `Debug` does not show the key, so it cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Idempotency-Key must be 1 to 255 printable ASCII characters")]
pub struct IdempotencyKeyError;

impl IdempotencyKey {
    /// Parses a header value's bytes.
    pub fn parse(value: &[u8]) -> Result<Self, IdempotencyKeyError> {
        let printable = value.iter().all(|b| (0x20..=0x7e).contains(b));
        if value.is_empty() || value.len() > IDEMPOTENCY_KEY_MAX_LEN || !printable {
            return Err(IdempotencyKeyError);
        }
        // Printable ASCII is UTF-8.
        String::from_utf8(value.to_vec())
            .map(Self)
            .map_err(|_| IdempotencyKeyError)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdempotencyKey(..)")
    }
}

/// SHA-256 of a request body's bytes exactly as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyDigest(pub [u8; 32]);

impl BodyDigest {
    pub fn of(body: &[u8]) -> Self {
        Self(Sha256::digest(body).into())
    }

    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }
}

/// A create that carries a key: what is remembered with the invite it makes.
#[derive(Debug, Clone)]
pub struct IdempotentRequest {
    pub key: IdempotencyKey,
    pub body: BodyDigest,
}

/// A key as remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedKey {
    pub body: BodyDigest,
    pub invite: InviteId,
    pub created_at: UnixTime,
}

/// What a create with a key does, given what is remembered under the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repeat {
    /// Nothing remembered within the window: create, and remember the key (replacing a
    /// stale entry).
    Create,
    /// The same body within the window: answer with this invite again, create nothing.
    Replay(InviteId),
    /// Another body within the window: refuse.
    Conflict,
}

pub fn repeat(remembered: Option<RememberedKey>, body: BodyDigest, now: UnixTime) -> Repeat {
    match remembered {
        Some(r) if now - r.created_at < IDEMPOTENCY_WINDOW_SECS => {
            if r.body == body {
                Repeat::Replay(r.invite)
            } else {
                Repeat::Conflict
            }
        }
        _ => Repeat::Create,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_1_to_255_printable_ascii() {
        assert!(IdempotencyKey::parse(b"a").is_ok());
        assert!(IdempotencyKey::parse(b" ~ spaces and tildes ~ ").is_ok());
        assert!(IdempotencyKey::parse(&[b'k'; 255]).is_ok());
        assert!(IdempotencyKey::parse(&[b'k'; 256]).is_err());
        assert!(IdempotencyKey::parse(b"").is_err());
        assert!(IdempotencyKey::parse(b"tab\there").is_err());
        assert!(IdempotencyKey::parse(b"del\x7f").is_err());
        assert!(IdempotencyKey::parse("caf\u{e9}".as_bytes()).is_err());
    }

    #[test]
    fn keys_do_not_show_in_debug_output() {
        let key = IdempotencyKey::parse(b"secret-ish").unwrap();
        assert!(!format!("{key:?}").contains("secret-ish"));
    }

    #[test]
    fn a_repeat_within_the_window_replays_or_conflicts() {
        let invite = InviteId::generate(0);
        let body = BodyDigest::of(b"{}");
        let remembered = |at| {
            Some(RememberedKey {
                body,
                invite: invite.clone(),
                created_at: at,
            })
        };
        assert_eq!(repeat(None, body, 10), Repeat::Create);
        assert_eq!(
            repeat(remembered(10), body, 10),
            Repeat::Replay(invite.clone())
        );
        assert_eq!(
            repeat(remembered(10), BodyDigest::of(b""), 10),
            Repeat::Conflict
        );
        let end = 10 + IDEMPOTENCY_WINDOW_SECS;
        assert_eq!(
            repeat(remembered(10), body, end - 1),
            Repeat::Replay(invite.clone())
        );
        assert_eq!(repeat(remembered(10), body, end), Repeat::Create);
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// A key is exactly 1 to 255 bytes of 0x20..=0x7E, kept as sent.
            #[test]
            fn keys_are_exactly_1_to_255_printable_ascii(
                value in prop_oneof![
                    proptest::collection::vec(0x20u8..=0x7e, 0..300),
                    proptest::collection::vec(any::<u8>(), 0..20),
                ]
            ) {
                let valid = (1..=IDEMPOTENCY_KEY_MAX_LEN).contains(&value.len())
                    && value.iter().all(|b| (0x20..=0x7e).contains(b));
                match IdempotencyKey::parse(&value) {
                    Ok(key) => {
                        prop_assert!(valid);
                        prop_assert_eq!(key.as_str().as_bytes(), &value[..]);
                    }
                    Err(_) => prop_assert!(!valid),
                }
            }
        }
    }
}
