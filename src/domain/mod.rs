//! The rules of the product, free of I/O: identifiers, invites and their lifecycle,
//! sites and credentials. Everything else depends on this module, never the reverse
//! (it uses only the clock's types, the credential kinds table [`crate::kind`] and the
//! pure key type of [`crate::dcapi`]).

mod ask;
pub mod by_reference;
pub mod console;
pub mod credential;
pub mod credential_status;
pub mod dcql;
pub mod idempotency;
pub mod invite;
pub mod invite_id;
pub mod listing;
pub mod presentation;
pub mod site;
pub mod webhook;

// The kinds table sits below both the rules and the verifiers (`mdoc` reads it too),
// so that neither imports the other; its old path stays.
pub use crate::kind;

pub use credential::{Password, PasswordDigest, Username, WebhookSecret};
pub use credential_status::{CredentialStatus, StatusMode};
pub use idempotency::{BodyDigest, IdempotencyKey, IdempotentRequest};
pub use invite::{CustomId, CustomIdError, InviteId, Status, VerifyError, VerifyTransition};
pub use kind::{Accept, Kind, KindSet};
pub use listing::{Cursor, ListQuery, PageSize};
pub use presentation::{
    DcApiSecrets, EncryptionNonce, MinAge, PresentationRequest, VerifyMethod, ZkOffer,
};
pub use site::{SiteId, SiteName, SiteUrl, ZkPolicy, ZkPolicyError};
pub use webhook::WebhookFormat;

use base64::Engine;
use rand::RngCore;

/// `n` bytes from the operating system's CSPRNG, base64url without padding.
pub fn random_token(n: usize) -> String {
    let mut buf = [0u8; 64];
    let buf = &mut buf[..n];
    rand::rngs::OsRng.fill_bytes(buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}
