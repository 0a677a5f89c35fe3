//! The operator console's accounts and sessions (docs/console.md#security-properties), free of I/O: names,
//! generated passwords and their Argon2id hashes, session ids (only their digests are
//! stored), the CSRF token derived from a session, and the sign-in throttle's rule.

use argon2::password_hash::{PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::OnceLock;
use subtle::ConstantTimeEq;

use crate::clock::UnixTime;

/// A session ends this long after sign-in (or at sign-out).
pub const SESSION_LIFETIME_SECS: i64 = 12 * 3600;

/// A console account's name: 1 to 64 of `a-z 0-9 . _ - @`. Letters are taken in lower
/// case, so `Alice` and `alice` are one account.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConsoleUsername(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsoleUsernameError {
    #[error("a console user name must not be empty")]
    Empty,
    #[error("a console user name must be at most 64 characters")]
    TooLong,
    #[error("a console user name may hold only letters a-z, digits and . _ - @")]
    Character,
}

impl ConsoleUsername {
    pub const MAX_LEN: usize = 64;

    pub fn parse(s: &str) -> Result<Self, ConsoleUsernameError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(ConsoleUsernameError::Empty);
        }
        if s.len() > Self::MAX_LEN {
            return Err(ConsoleUsernameError::TooLong);
        }
        if !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'))
        {
            return Err(ConsoleUsernameError::Character);
        }
        Ok(Self(s.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConsoleUsername {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A console account's password: generated (256 bits), shown once, never stored.
pub struct ConsolePassword(String);

impl ConsolePassword {
    pub fn generate() -> Self {
        Self(super::random_token(32))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its Argon2id hash with a fresh salt (slow on purpose: about 20 MiB and two passes).
    pub fn hash(&self) -> Result<PasswordHash, PasswordHashError> {
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        let hash = Argon2::default()
            .hash_password(self.0.as_bytes(), &salt)
            .map_err(|e| PasswordHashError(e.to_string()))?;
        Ok(PasswordHash(hash.to_string()))
    }
}

impl fmt::Debug for ConsolePassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConsolePassword(..)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("password hash: {0}")]
pub struct PasswordHashError(pub String);

/// What the database keeps of a console password: a PHC string (`$argon2id$v=19$...`).
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl PasswordHash {
    /// A stored hash, if it is a PHC string.
    pub fn parse(s: &str) -> Option<Self> {
        argon2::PasswordHash::new(s).ok()?;
        Some(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is the password: recomputes the hash with the stored salt and
    /// parameters and compares in constant time (argon2's `Output` comparison).
    pub fn verify(&self, presented: &str) -> bool {
        argon2::PasswordHash::new(&self.0).is_ok_and(|hash| {
            Argon2::default()
                .verify_password(presented.as_bytes(), &hash)
                .is_ok()
        })
    }

    /// A hash no password is known for: a sign-in under an unknown name checks against
    /// it, so that it takes as long as one under a known name.
    pub fn decoy() -> &'static PasswordHash {
        static DECOY: OnceLock<PasswordHash> = OnceLock::new();
        DECOY.get_or_init(|| {
            ConsolePassword::generate()
                .hash()
                .unwrap_or_else(|_| PasswordHash(String::new()))
        })
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

/// A session's secret id, as the cookie carries it: 32 random bytes, base64url.
pub struct SessionId(String);

/// Length of an encoded [`SessionId`].
const SESSION_ID_LEN: usize = 43;

impl SessionId {
    pub fn generate() -> Self {
        Self(super::random_token(32))
    }

    /// A cookie's value, if it can be a session id at all.
    pub fn parse(s: &str) -> Option<Self> {
        let well_formed = s.len() == SESSION_ID_LEN
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        well_formed.then(|| Self(s.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the database keeps: finding a session needs the id, which is never stored.
    pub fn digest(&self) -> SessionDigest {
        SessionDigest(Sha256::digest(self.0.as_bytes()).into())
    }

    /// The CSRF token of this session: a one-way function of the id under its own
    /// prefix, so it is tied to the session, needs no storage, gives nothing of the id
    /// away in a page, and cannot be made from the stored digest.
    pub fn csrf_token(&self) -> CsrfToken {
        let token = Sha256::new()
            .chain_update(b"agegate console csrf v1\0")
            .chain_update(self.0.as_bytes())
            .finalize();
        CsrfToken(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token))
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionId(..)")
    }
}

/// The SHA-256 digest of a session id: the sessions table's key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionDigest(pub [u8; 32]);

impl SessionDigest {
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }
}

impl fmt::Debug for SessionDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionDigest(..)")
    }
}

/// The token every state-changing form of a session carries.
#[derive(Clone, PartialEq, Eq)]
pub struct CsrfToken(String);

impl CsrfToken {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with what a form sent.
    pub fn matches(&self, presented: &str) -> bool {
        self.0.as_bytes().ct_eq(presented.as_bytes()).into()
    }
}

impl fmt::Debug for CsrfToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CsrfToken(..)")
    }
}

/// Failed sign-ins in a row for one name from one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failures {
    pub count: u32,
    pub last_at: UnixTime,
}

/// Failures allowed in a row before sign-in is refused for a while.
pub const FREE_FAILURES: u32 = 5;
/// How long the first refusal lasts; each further failure doubles it, up to the cap.
pub const LOCK_SECS: i64 = 60;
pub const MAX_LOCK_SECS: i64 = 3600;
/// A streak whose last failure is older than this is forgotten.
pub const STREAK_SECS: i64 = 24 * 3600;

impl Failures {
    /// The streak after one more failure at `now`.
    pub fn after(previous: Option<Failures>, now: UnixTime) -> Failures {
        let count = previous
            .filter(|f| f.last_at > now - STREAK_SECS)
            .map_or(0, |f| f.count);
        Failures {
            count: count.saturating_add(1),
            last_at: now,
        }
    }

    /// Seconds until sign-in is allowed again, or `None` when it is allowed at `now`:
    /// from the sixth attempt after five failures in a row, for 60 s after the last
    /// failure, doubling with each failure past the fifth (one hour at most).
    pub fn locked_for(&self, now: UnixTime) -> Option<u64> {
        if self.count < FREE_FAILURES || self.last_at <= now - STREAK_SECS {
            return None;
        }
        let doublings = (self.count - FREE_FAILURES).min(6);
        let lock = (LOCK_SECS << doublings).min(MAX_LOCK_SECS);
        let left = self.last_at + lock - now;
        u64::try_from(left).ok().filter(|&s| s > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_short_plain_and_lower_case() {
        assert_eq!(ConsoleUsername::parse(" Alice ").unwrap().as_str(), "alice");
        assert_eq!(
            ConsoleUsername::parse("ops.team-1_@x").unwrap().as_str(),
            "ops.team-1_@x"
        );
        assert_eq!(ConsoleUsername::parse(""), Err(ConsoleUsernameError::Empty));
        assert_eq!(
            ConsoleUsername::parse(&"a".repeat(65)),
            Err(ConsoleUsernameError::TooLong)
        );
        for bad in ["a b", "é", "a:b", "a/b", "a\0"] {
            assert_eq!(
                ConsoleUsername::parse(bad),
                Err(ConsoleUsernameError::Character),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_password_verifies_against_its_hash_only() {
        let password = ConsolePassword::generate();
        assert_eq!(password.expose().len(), 43);
        let hash = password.hash().unwrap();
        assert!(hash.as_str().starts_with("$argon2id$"));
        assert!(hash.verify(password.expose()));
        assert!(!hash.verify("wrong"));
        assert!(!PasswordHash::decoy().verify(password.expose()));
        assert_eq!(PasswordHash::parse(hash.as_str()), Some(hash));
        assert_eq!(PasswordHash::parse("plain"), None);
    }

    #[test]
    fn session_ids_parse_only_as_generated() {
        let id = SessionId::generate();
        assert!(SessionId::parse(id.expose()).is_some());
        for bad in [
            "",
            "short",
            &"a".repeat(44),
            &format!("{}=", &id.expose()[1..]),
        ] {
            assert!(SessionId::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn csrf_tokens_are_tied_to_their_session() {
        let (a, b) = (SessionId::generate(), SessionId::generate());
        let token = a.csrf_token();
        assert!(token.matches(a.csrf_token().as_str()));
        assert!(!token.matches(b.csrf_token().as_str()));
        assert!(!token.matches(""));
        assert_ne!(token.as_str(), a.expose());
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn the_sixth_attempt_after_five_failures_is_refused_for_a_minute() {
        let mut streak = None;
        for _ in 0..4 {
            streak = Some(Failures::after(streak, 100));
            assert_eq!(streak.unwrap().locked_for(100), None);
        }
        let fifth = Failures::after(streak, 100);
        assert_eq!(fifth.count, 5);
        assert_eq!(fifth.locked_for(100), Some(60));
        assert_eq!(fifth.locked_for(159), Some(1));
        assert_eq!(fifth.locked_for(160), None);
        let sixth = Failures::after(Some(fifth), 160);
        assert_eq!(sixth.locked_for(160), Some(120));
        let many = Failures {
            count: 40,
            last_at: 0,
        };
        assert_eq!(many.locked_for(0), Some(3600));
    }

    #[test]
    fn an_old_streak_is_forgotten() {
        let old = Failures {
            count: 9,
            last_at: 0,
        };
        assert_eq!(old.locked_for(STREAK_SECS), None);
        assert_eq!(Failures::after(Some(old), STREAK_SECS).count, 1);
        assert_eq!(Failures::after(Some(old), STREAK_SECS - 1).count, 10);
    }
}
