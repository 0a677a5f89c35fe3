//! Site credentials are generated secrets with 256 bits of entropy, so a fast digest
//! (SHA-256) compared in constant time is the right check; a slow password hash would
//! only cost every request without adding safety.

use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The public half of a credential (the Basic-auth username).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Username(String);

impl Username {
    pub fn generate() -> Self {
        Self(format!("key_{}", super::random_token(12)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The secret half of a credential. Shown once at creation, never stored.
pub struct Password(String);

impl Password {
    pub fn generate() -> Self {
        Self(super::random_token(32))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn digest(&self) -> PasswordDigest {
        PasswordDigest::of(&self.0)
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

/// What the database keeps of a password.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PasswordDigest(pub [u8; 32]);

impl PasswordDigest {
    pub fn of(password: &str) -> Self {
        Self(Sha256::digest(password.as_bytes()).into())
    }

    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// Constant-time check of a presented password against this digest.
    pub fn matches(&self, presented: &str) -> bool {
        Self::of(presented).0.ct_eq(&self.0).into()
    }
}

impl std::fmt::Debug for PasswordDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordDigest(..)")
    }
}

/// A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes.
/// Unlike a password it must be kept as is, because the server signs with it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    pub const PREFIX: &'static str = "whsec_";

    pub fn generate() -> Self {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        Self(format!(
            "{}{}",
            Self::PREFIX,
            base64::engine::general_purpose::STANDARD.encode(key)
        ))
    }

    pub fn from_stored(s: String) -> Self {
        Self(s)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The HMAC key: the base64-decoded part after the prefix.
    pub fn key(&self) -> Option<Vec<u8>> {
        let b64 = self.0.strip_prefix(Self::PREFIX)?;
        base64::engine::general_purpose::STANDARD.decode(b64).ok()
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_passwords_have_256_bits() {
        let p = Password::generate();
        // 32 bytes in unpadded base64url.
        assert_eq!(p.expose().len(), 43);
        assert_ne!(p.expose(), Password::generate().expose());
    }

    #[test]
    fn digest_matches_only_the_same_password() {
        let p = Password::generate();
        let d = p.digest();
        assert!(d.matches(p.expose()));
        assert!(!d.matches("wrong"));
        assert!(!d.matches(""));
    }

    #[test]
    fn usernames_are_unique_and_colon_free() {
        let u = Username::generate();
        assert!(u.as_str().starts_with("key_"));
        assert!(!u.as_str().contains(':'));
        assert_ne!(u, Username::generate());
    }

    #[test]
    fn webhook_secret_decodes_to_32_byte_key() {
        let s = WebhookSecret::generate();
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(s.key().unwrap().len(), 32);
    }

    #[test]
    fn secrets_do_not_leak_through_debug() {
        assert_eq!(format!("{:?}", Password::generate()), "Password(..)");
        assert_eq!(
            format!("{:?}", WebhookSecret::generate()),
            "WebhookSecret(..)"
        );
    }
}
