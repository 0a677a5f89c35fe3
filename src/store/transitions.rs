//! What a state-changing store call writes, decided once for every backend by the domain
//! rules ([`crate::domain::invite::verify`], [`Status::at`], the request's liveness). A
//! backend reads what is stored (locking it), asks here, and writes what it is told in the
//! same transaction; it never decides itself which events follow from a change.

use super::{
    AnswerOutcome, CancelOutcome, InviteRecord, ReceiptKeyRecord, RevokeOutcome, StoreError,
    StoreResult, VerifyOutcome,
};
use crate::clock::UnixTime;
use crate::domain::invite::{self, CancelError, CancelTransition, VerifyTransition};
use crate::domain::{PresentationRequest, SiteId, Status, VerifyMethod};
use crate::receipt::{Evidence, Payload, ReceiptKey, Verified};

/// What verifying an invite writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyStep {
    /// Nothing: answer with this.
    Done(VerifyOutcome),
    /// Store the invite as verified (as this record says) with its `invite.verified`
    /// event; answer [`VerifyOutcome::Verified`] with it.
    Verify(InviteRecord),
}

pub fn verify(found: Option<InviteRecord>, method: VerifyMethod, now: UnixTime) -> VerifyStep {
    let Some(mut record) = found else {
        return VerifyStep::Done(VerifyOutcome::NotFound);
    };
    match invite::verify(record.status_at(now)) {
        Err(invite::VerifyError::Expired) => VerifyStep::Done(VerifyOutcome::Expired),
        Ok(VerifyTransition::AlreadyVerified) => {
            VerifyStep::Done(VerifyOutcome::AlreadyVerified(record))
        }
        Ok(VerifyTransition::Verify) => {
            record.stored_status = Status::Verified;
            record.method = Some(method);
            VerifyStep::Verify(record)
        }
    }
}

/// What signs the receipt of a verification: the current receipt key as stored (every
/// verifying transaction reads the newest whose signing time has come), or, where there
/// is none yet (a server that could not write one at start), a new one the transaction
/// stores first. No server has then served a key set with a key in it
/// (`http::receipts::jwks` never reuses an empty one), so it may sign at once.
pub fn receipt_key(
    stored: Option<Vec<u8>>,
    now: UnixTime,
) -> StoreResult<(ReceiptKey, Option<ReceiptKeyRecord>)> {
    match stored {
        Some(bytes) => Ok((
            ReceiptKey::from_bytes(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            None,
        )),
        None => {
            let key = ReceiptKey::generate();
            let record = ReceiptKeyRecord {
                kid: key.kid(),
                private_key: key.to_bytes(),
                created_at: now,
            };
            Ok((key, Some(record)))
        }
    }
}

/// The receipt of `record`, verified at `now`, signed with `key`.
pub fn receipt(
    record: &InviteRecord,
    evidence: &Evidence,
    now: UnixTime,
    key: &ReceiptKey,
) -> String {
    let verified = Verified {
        invite_id: record.id.as_str(),
        site_id: record.site_id.to_string(),
        custom_id: record.custom_id.as_deref(),
        at: now,
        method: record.method.map_or("", VerifyMethod::as_str),
    };
    key.sign(&Payload::new(&verified, evidence))
}

/// What cancelling an invite writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelStep {
    /// Nothing: answer with this.
    Done(CancelOutcome),
    /// Store the invite as expired now (as this record says) with its `invite.expired`
    /// event; answer [`CancelOutcome::Cancelled`] with it.
    Expire(InviteRecord),
}

/// `found` is the invite as stored, of whichever site; another site's is not found.
pub fn cancel(found: Option<InviteRecord>, site: SiteId, now: UnixTime) -> CancelStep {
    let Some(mut record) = found.filter(|r| r.site_id == site) else {
        return CancelStep::Done(CancelOutcome::NotFound);
    };
    match invite::cancel(record.status_at(now)) {
        Err(CancelError::Verified) => CancelStep::Done(CancelOutcome::Verified),
        Ok(CancelTransition::AlreadyExpired) => {
            CancelStep::Done(CancelOutcome::AlreadyExpired(record))
        }
        Ok(CancelTransition::Expire) => {
            record.stored_status = Status::Expired;
            CancelStep::Expire(record)
        }
    }
}

/// What answering a presentation request writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerStep {
    /// Nothing: answer with this.
    Done(AnswerOutcome),
    /// Mark the request answered (so its state cannot be replayed); answer with this.
    MarkAnswered(AnswerOutcome),
    /// Store the invite as verified by `eu-av` with its event, as [`VerifyStep::Verify`],
    /// and mark the request answered; answer [`AnswerOutcome::Verified`].
    VerifyAndMark(InviteRecord),
}

/// `invite` is the invite as stored; `request` its request named by the answer's `state`;
/// `method` how the answer verifies it (its credential's kind).
pub fn answer(
    invite: Option<InviteRecord>,
    request: Option<&PresentationRequest>,
    method: VerifyMethod,
    now: UnixTime,
) -> AnswerStep {
    let live = request.is_some_and(|r| r.is_live(now));
    // The invite's own state decides first: unknown → 404, expired → 409.
    if !live {
        return AnswerStep::Done(match invite.map(|i| i.status_at(now)) {
            None => AnswerOutcome::NotFound,
            Some(Status::Expired) => AnswerOutcome::Expired,
            Some(_) => AnswerOutcome::NotLive,
        });
    }
    match verify(invite, method, now) {
        VerifyStep::Done(VerifyOutcome::NotFound) => AnswerStep::Done(AnswerOutcome::NotFound),
        VerifyStep::Done(VerifyOutcome::Expired) => AnswerStep::Done(AnswerOutcome::Expired),
        VerifyStep::Done(VerifyOutcome::Verified(r) | VerifyOutcome::AlreadyVerified(r)) => {
            AnswerStep::MarkAnswered(AnswerOutcome::AlreadyVerified(r))
        }
        VerifyStep::Verify(r) => AnswerStep::VerifyAndMark(r),
    }
}

/// What revoking a credential does, given its `revoked_at` if it exists.
pub fn revoke(found: Option<Option<UnixTime>>) -> RevokeOutcome {
    match found {
        None => RevokeOutcome::NotFound,
        Some(Some(_)) => RevokeOutcome::AlreadyRevoked,
        Some(None) => RevokeOutcome::Revoked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{InviteId, SiteId};

    fn pending(expires_at: UnixTime) -> InviteRecord {
        InviteRecord {
            id: InviteId::generate(expires_at * 1000),
            site_id: SiteId::generate(),
            custom_id: None,
            stored_status: Status::Pending,
            created_at: expires_at - invite::INVITE_LIFETIME_SECS,
            expires_at,
            method: None,
        }
    }

    #[test]
    fn only_a_pending_invite_before_its_time_is_verified() {
        let step = verify(Some(pending(10)), VerifyMethod::Sandbox, 9);
        let VerifyStep::Verify(r) = step else {
            panic!("{step:?}")
        };
        assert_eq!(r.stored_status, Status::Verified);
        assert_eq!(r.method, Some(VerifyMethod::Sandbox));
        assert_eq!(
            verify(Some(pending(10)), VerifyMethod::Sandbox, 10),
            VerifyStep::Done(VerifyOutcome::Expired)
        );
        assert_eq!(
            verify(None, VerifyMethod::Verifier, 0),
            VerifyStep::Done(VerifyOutcome::NotFound)
        );
    }

    #[test]
    fn only_the_sites_own_pending_invite_is_cancelled() {
        let invite = pending(10);
        let site = invite.site_id;
        let CancelStep::Expire(r) = cancel(Some(invite.clone()), site, 9) else {
            panic!("a pending invite expires")
        };
        assert_eq!(r.stored_status, Status::Expired);
        assert_eq!(r.expires_at, 10, "expires is unchanged");
        assert_eq!(
            cancel(Some(invite.clone()), SiteId::generate(), 9),
            CancelStep::Done(CancelOutcome::NotFound)
        );
        assert!(matches!(
            cancel(Some(invite.clone()), site, 10),
            CancelStep::Done(CancelOutcome::AlreadyExpired(_))
        ));
        let mut verified = invite;
        verified.stored_status = Status::Verified;
        assert_eq!(
            cancel(Some(verified), site, 9),
            CancelStep::Done(CancelOutcome::Verified)
        );
    }

    #[test]
    fn an_answer_needs_a_live_request_and_uses_it_up() {
        let request = PresentationRequest::new(crate::domain::MinAge::DEFAULT, 0);
        let invite = pending(1000);
        assert_eq!(
            answer(Some(invite.clone()), None, VerifyMethod::EU_AV, 1),
            AnswerStep::Done(AnswerOutcome::NotLive)
        );
        assert_eq!(
            answer(
                Some(invite.clone()),
                Some(&request),
                VerifyMethod::EU_AV,
                2000
            ),
            AnswerStep::Done(AnswerOutcome::Expired)
        );
        assert!(matches!(
            answer(Some(invite.clone()), Some(&request), VerifyMethod::EU_AV, 1),
            AnswerStep::VerifyAndMark(_)
        ));
        let mut verified = invite;
        verified.stored_status = Status::Verified;
        assert!(matches!(
            answer(Some(verified), Some(&request), VerifyMethod::EU_AV, 1),
            AnswerStep::MarkAnswered(AnswerOutcome::AlreadyVerified(_))
        ));
        assert_eq!(
            answer(None, Some(&request), VerifyMethod::EU_AV, 1),
            AnswerStep::Done(AnswerOutcome::NotFound)
        );
    }
}
