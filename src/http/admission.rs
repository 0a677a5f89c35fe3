//! A wallet answer turned away at its headers while every proof checker is busy
//! (docs/zk.md#the-proof-pool): a flood of proofs then costs their request lines and
//! headers, never their bodies of up to 2 MiB.
//!
//! Whether an answer is a zero-knowledge one is written only in its body, which this must
//! not read: the link's form, a JWE in its `response` field (by value or by reference),
//! the DC API's JSON. Its size tells instead. A proof is 320 KB or more; a plain answer
//! (one `age_over_NN`, its issuer's chain, the MSO's digests, then encrypted) is a few
//! kilobytes. So an answer longer than [`PLAIN_ANSWER_MAX`], or of unknown length
//! (chunked), is taken for a proof and turned away while the pool is full; a plain answer
//! is never turned away by the pool. A proof that slips through (the pool filled while its
//! body arrived) is still refused by the pool itself, after its cheap checks.
//!
//! An answer admitted as a possible proof is decoded on the proof lane
//! ([`crate::zk::ProofLane`]), off the threads that answer every other request.

use axum::extract::FromRequestParts;
use axum::http::header::CONTENT_LENGTH;
use axum::http::request::Parts;
use axum::http::HeaderMap;

use super::body::BODY_LIMIT;
use super::error::{ApiError, ErrorCode};
use super::AppState;
use crate::zk::{LanePanicked, ProofLane};

/// Longest answer taken for a plain one: every other route's body limit, a dozen times a
/// plain answer and a fifth of the smallest proof.
pub const PLAIN_ANSWER_MAX: u64 = BODY_LIMIT as u64;

/// Admits a wallet answer to have its body read (an extractor placed before the body's),
/// and says where it is decoded.
pub struct ZkAdmission {
    /// The proof lane, for an answer that may be a proof.
    lane: Option<ProofLane>,
}

impl ZkAdmission {
    /// Where the answer is decoded ([`crate::app::verification::Verification::on_lane`]).
    pub fn lane(&self) -> Option<ProofLane> {
        self.lane.clone()
    }

    /// Runs `decode`, pure CPU on the answer's bytes, where the answer is decoded.
    pub async fn decode<R, F>(&self, decode: F) -> Result<R, ApiError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        ProofLane::decode_on(self.lane.as_ref(), decode)
            .await
            .map_err(|LanePanicked| ApiError::Internal("decoding a wallet answer panicked".into()))
    }
}

impl FromRequestParts<AppState> for ZkAdmission {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let zk = state.zk.as_deref();
        let Some(zk) = zk.filter(|_| may_be_a_proof(&parts.headers)) else {
            return Ok(Self { lane: None });
        };
        if zk.pool.is_full() {
            // Debug only: a flood must not become a flood of log lines.
            tracing::debug!("zero-knowledge proof pool full: an answer turned away unread");
            return Err(ErrorCode::ZkBusy.into());
        }
        Ok(Self {
            lane: Some(zk.lane.clone()),
        })
    }
}

/// Longer than a plain answer, or of unknown length.
fn may_be_a_proof(headers: &HeaderMap) -> bool {
    let length = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    length.is_none_or(|n| n > PLAIN_ANSWER_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_length(n: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(n) = n {
            h.insert(CONTENT_LENGTH, HeaderValue::from_str(n).unwrap());
        }
        h
    }

    #[test]
    fn answers_longer_than_a_plain_one_or_of_unknown_length_may_be_proofs() {
        assert!(!may_be_a_proof(&with_length(Some("0"))));
        assert!(!may_be_a_proof(&with_length(Some("14000"))));
        assert!(!may_be_a_proof(&with_length(Some("65536"))));
        assert!(may_be_a_proof(&with_length(Some("65537"))));
        assert!(may_be_a_proof(&with_length(Some("330000"))));
        assert!(may_be_a_proof(&with_length(None)));
    }
}
