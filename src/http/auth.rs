//! Authentication extractors. A handler that takes [`SiteAuth`] only runs for a
//! request whose Basic credentials are valid *and* belong to the site in its path, so
//! every query a handler makes starts from an authenticated site.

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::{header, request::Parts, HeaderMap};
use base64::Engine;
use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use super::error::{ApiError, ErrorCode};
use super::AppState;
use crate::domain::{PasswordDigest, SiteId};
use crate::ratelimit::Decision;
use crate::store::{CredentialRecord, StoreError};

/// The site whose credentials the request carries, which is also the site in its path.
#[derive(Debug, Clone, Copy)]
pub struct SiteAuth {
    pub site_id: SiteId,
}

impl FromRequestParts<AppState> for SiteAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let credential_site = authenticate_basic(&parts.headers, state).await?;
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ErrorCode::InvalidPath)?;
        let path_site = params
            .iter()
            .find_map(|(name, value)| (name == "siteId").then_some(value))
            .ok_or(ErrorCode::InvalidPath)?;
        let path_site = SiteId::parse(path_site).map_err(|_| ErrorCode::InvalidSiteId)?;
        if path_site != credential_site {
            return Err(ErrorCode::WrongSite.into());
        }
        // Only authenticated requests count, so nobody can spend another site's budget.
        if let Some(limiter) = &state.rate_limiter {
            if let Decision::Limited { retry_after_secs } =
                limiter.check(credential_site, state.clock.now_millis().get())
            {
                return Err(ApiError::RateLimited { retry_after_secs });
            }
        }
        Ok(SiteAuth {
            site_id: credential_site,
        })
    }
}

/// Checks `Authorization: Basic ...` and returns the site the credential belongs to.
/// Unknown username, wrong password and revoked credential look exactly alike.
async fn authenticate_basic(headers: &HeaderMap, state: &AppState) -> Result<SiteId, ApiError> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or(ErrorCode::MissingCredentials)?;
    let basic = parse_basic(value.as_bytes()).ok_or(ErrorCode::InvalidCredentials)?;
    let record = state
        .credentials
        .lookup(&state.reads, basic.username())
        .await?;
    let valid = match &record {
        Some(r) => r.digest.matches(basic.password()) & !r.revoked,
        None => {
            // Spend the same work as a real comparison.
            let _ = UNKNOWN.matches(basic.password());
            false
        }
    };
    match record {
        Some(r) if valid => Ok(r.site_id),
        _ => Err(ErrorCode::InvalidCredentials.into()),
    }
}

const UNKNOWN: PasswordDigest = PasswordDigest([0; 32]);

/// A Basic credential, decoded: `username:password` in one buffer, split at its first
/// colon (a password may hold colons; a username may not).
struct Basic {
    decoded: String,
    colon: usize,
}

impl Basic {
    fn username(&self) -> &str {
        &self.decoded[..self.colon]
    }

    fn password(&self) -> &str {
        &self.decoded[self.colon + 1..]
    }
}

fn parse_basic(value: &[u8]) -> Option<Basic> {
    let value = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let colon = decoded.find(':')?;
    Some(Basic { decoded, colon })
}

/// The verification provider, authenticated by the bearer token given to `serve`.
pub struct VerifierAuth;

impl FromRequestParts<AppState> for VerifierAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let expected = state
            .verifier_token
            .as_ref()
            .ok_or(ErrorCode::VerifierUnauthorized)?;
        let presented = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .ok_or(ErrorCode::VerifierUnauthorized)?;
        if expected.matches(presented) {
            Ok(VerifierAuth)
        } else {
            Err(ErrorCode::VerifierUnauthorized.into())
        }
    }
}

/// Credentials as recently read from the store. An entry is trusted for [`Self::TTL`],
/// which bounds how long a revoked credential is still accepted (docs/operations.md#credentials-and-site-delete promises 5 s),
/// and saves a database round trip on almost every request.
pub struct CredentialCache {
    entries: RwLock<HashMap<String, (Instant, CredentialRecord)>>,
}

impl CredentialCache {
    pub const TTL: Duration = Duration::from_secs(2);
    /// Bound on entries; only existing credentials are cached, so this is rarely reached.
    const MAX_ENTRIES: usize = 100_000;

    pub fn new() -> Self {
        Self {
            entries: RwLock::new(HashMap::new()),
        }
    }

    pub async fn lookup(
        &self,
        reads: &crate::app::HotReads,
        username: &str,
    ) -> Result<Option<CredentialRecord>, StoreError> {
        if let Some((at, record)) = self.read().get(username) {
            if at.elapsed() < Self::TTL {
                return Ok(Some(record.clone()));
            }
        }
        let record = reads.credential(username).await?;
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        match &record {
            Some(r) => {
                if entries.len() >= Self::MAX_ENTRIES {
                    entries.clear();
                }
                entries.insert(username.to_owned(), (Instant::now(), r.clone()));
            }
            None => {
                entries.remove(username);
            }
        }
        Ok(record)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, (Instant, CredentialRecord)>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for CredentialCache {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    /// The credential's two halves, as the tests compare them.
    fn parse_basic(value: &[u8]) -> Option<(String, String)> {
        super::parse_basic(value).map(|b| (b.username().to_owned(), b.password().to_owned()))
    }

    #[test]
    fn basic_header_is_parsed() {
        // "user:pa:ss" — the password may itself contain colons.
        assert_eq!(
            parse_basic(b"Basic dXNlcjpwYTpzcw=="),
            Some(("user".into(), "pa:ss".into()))
        );
        assert_eq!(
            parse_basic(b"basic dXNlcjpwYTpzcw=="),
            Some(("user".into(), "pa:ss".into()))
        );
    }

    #[test]
    fn malformed_basic_headers_are_refused() {
        assert_eq!(parse_basic(b"Bearer abc"), None);
        assert_eq!(parse_basic(b"Basic !!!"), None);
        assert_eq!(parse_basic(b"Basic"), None);
        // "nocolon"
        assert_eq!(parse_basic(b"Basic bm9jb2xvbg=="), None);
    }

    mod properties {
        use super::parse_basic;
        use base64::Engine;
        use proptest::prelude::*;

        fn encode(text: &[u8]) -> String {
            base64::engine::general_purpose::STANDARD.encode(text)
        }

        proptest! {
            #[test]
            fn arbitrary_bytes_never_panic(value in proptest::collection::vec(any::<u8>(), 0..300)) {
                let _ = parse_basic(&value);
            }

            /// Arbitrary text after the scheme, including the base64 of arbitrary bytes.
            #[test]
            fn arbitrary_credentials_never_panic(
                text in ".{0,100}",
                decoded in proptest::collection::vec(any::<u8>(), 0..100),
            ) {
                let _ = parse_basic(format!("Basic {text}").as_bytes());
                let _ = parse_basic(format!("Basic {}", encode(&decoded)).as_bytes());
            }

            /// Any username without a colon and any password (colons included) come
            /// back as they were sent, whatever the scheme's case and the spaces around.
            #[test]
            fn valid_credentials_round_trip(
                user in "[^:]{0,40}",
                pass in ".{0,40}",
                scheme in "[bB][aA][sS][iI][cC]",
                before in " {0,2}",
                between in " {1,3}",
                after in " {0,2}",
            ) {
                let value = format!(
                    "{before}{scheme}{between}{}{after}",
                    encode(format!("{user}:{pass}").as_bytes())
                );
                prop_assert_eq!(parse_basic(value.as_bytes()), Some((user, pass)));
            }

            /// Only the Basic scheme is read.
            #[test]
            fn other_schemes_are_refused(scheme in "[A-Za-z]{1,10}", user in "[a-z]{1,8}") {
                prop_assume!(!scheme.eq_ignore_ascii_case("basic"));
                let value = format!("{scheme} {}", encode(format!("{user}:pw").as_bytes()));
                prop_assert_eq!(parse_basic(value.as_bytes()), None);
            }

            /// Without a colon in the decoded text there is no credential.
            #[test]
            fn credentials_without_a_colon_are_refused(text in "[^:]{0,60}") {
                let value = format!("Basic {}", encode(text.as_bytes()));
                prop_assert_eq!(parse_basic(value.as_bytes()), None);
            }
        }
    }
}
