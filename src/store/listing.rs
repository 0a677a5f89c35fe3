//! Listing a site's invites, newest first, for every backend. A page is the merge of a
//! few *slices*: each is one stored status of the site's invites (optionally of one
//! customId), read from an index in (created, inviteId) order starting after the
//! cursor, at most one more than the page. Every slice is an index range scan, so a page
//! costs the same however many invites the site has; backends only run the slices.
//!
//! Status is decided at `now` exactly as a GET decides it ([`Status::at`]): a stored
//! `pending` invite past its `expires` is listed, and filtered, as `expired`.

use std::ops::Range;

use super::InviteRecord;
use crate::clock::UnixTime;
use crate::domain::invite::INVITE_LIFETIME_SECS;
use crate::domain::{Cursor, CustomId, ListQuery, PageSize, Status};

/// One index range of a site's invites, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteSlice {
    /// The status as stored.
    pub stored: Status,
    pub custom_id: Option<CustomId>,
    /// `expires_at` within this range.
    pub expires: Range<UnixTime>,
    /// `created_at` at least this.
    pub created_from: UnixTime,
    /// `(created_at, invite_id)` below this, compared as (integer, bytes).
    pub before: (UnixTime, String),
    /// Rows at most.
    pub limit: usize,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvitePage {
    pub invites: Vec<InviteRecord>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

const EVERY_TIME: Range<UnixTime> = UnixTime::MIN..UnixTime::MAX;

/// The slices whose merge is the page `query` asks for at `now`.
pub fn plan(query: &ListQuery, now: UnixTime) -> Vec<InviteSlice> {
    let before = query
        .after
        .as_ref()
        .map_or((UnixTime::MAX, String::new()), |c| {
            (c.created, c.invite.as_str().to_owned())
        });
    let slice = |stored| InviteSlice {
        stored,
        custom_id: query.custom_id.clone(),
        expires: EVERY_TIME,
        created_from: UnixTime::MIN,
        before: before.clone(),
        limit: query.limit.get() + 1,
    };
    // A pending invite expires at created + lifetime, so "expired by now" and "not yet"
    // are also ranges of `created_at`: bounding the scan by them keeps it exact, where
    // a filter on `expires_at` alone would walk past a day's pending invites.
    let first_alive = now + 1 - INVITE_LIFETIME_SECS;
    let pending_alive = InviteSlice {
        expires: now + 1..UnixTime::MAX,
        created_from: first_alive,
        ..slice(Status::Pending)
    };
    let pending_expired = InviteSlice {
        expires: UnixTime::MIN..now + 1,
        before: before.clone().min((first_alive, String::new())),
        ..slice(Status::Pending)
    };
    match query.status {
        None => vec![
            slice(Status::Pending),
            slice(Status::Verified),
            slice(Status::Expired),
        ],
        Some(Status::Pending) => vec![pending_alive],
        Some(Status::Verified) => vec![slice(Status::Verified)],
        Some(Status::Expired) => vec![slice(Status::Expired), pending_expired],
    }
}

/// Merges what the slices found into one page of at most `limit`.
pub fn page(found: Vec<Vec<InviteRecord>>, limit: PageSize) -> InvitePage {
    let mut invites: Vec<InviteRecord> = found.into_iter().flatten().collect();
    invites.sort_by(|a, b| {
        (b.created_at, b.id.as_str().as_bytes()).cmp(&(a.created_at, a.id.as_str().as_bytes()))
    });
    invites.dedup_by(|a, b| a.id == b.id);
    let more = invites.len() > limit.get();
    invites.truncate(limit.get());
    let next = more.then(|| invites.last()).flatten().map(|last| Cursor {
        created: last.created_at,
        invite: last.id.clone(),
    });
    InvitePage { invites, next }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{InviteId, SiteId};

    fn invite(created_at: UnixTime, stored: Status) -> InviteRecord {
        InviteRecord {
            id: InviteId::generate(created_at * 1000),
            site_id: SiteId::generate(),
            custom_id: None,
            stored_status: stored,
            created_at,
            expires_at: created_at + INVITE_LIFETIME_SECS,
            method: None,
        }
    }

    #[test]
    fn an_expired_filter_reads_pending_invites_only_where_they_have_expired() {
        let query = ListQuery::parse("status=expired").unwrap();
        let now = 1_000_000;
        let slices = plan(&query, now);
        assert_eq!(slices.len(), 2);
        let pending = &slices[1];
        assert_eq!(pending.stored, Status::Pending);
        // Created at now - lifetime expires exactly now: included; a second later is not.
        let last = now - INVITE_LIFETIME_SECS;
        assert!((last, "A".to_owned()) < pending.before);
        assert!((last + 1, String::new()) >= pending.before);
        assert!(pending.expires.contains(&now));
        let alive = &plan(&ListQuery::parse("status=pending").unwrap(), now)[0];
        assert_eq!(alive.created_from, last + 1);
        assert!(!alive.expires.contains(&now));
    }

    #[test]
    fn pages_are_newest_first_and_say_where_to_go_on() {
        let a = invite(10, Status::Pending);
        let b = invite(12, Status::Verified);
        let c = invite(11, Status::Expired);
        let page2 = page(
            vec![vec![a.clone()], vec![b.clone()], vec![c.clone()]],
            PageSize::parse("2").unwrap(),
        );
        assert_eq!(page2.invites, vec![b, c.clone()]);
        assert_eq!(
            page2.next,
            Some(Cursor {
                created: 11,
                invite: c.id
            })
        );
        let all = page(vec![vec![a.clone()]], PageSize::DEFAULT);
        assert_eq!(all.invites, vec![a]);
        assert_eq!(all.next, None);
    }

    #[test]
    fn equal_times_are_ordered_by_invite_id_bytes_descending() {
        let mut x = invite(5, Status::Pending);
        let mut y = invite(5, Status::Pending);
        x.id = InviteId::parse("BAAAAAAAAAAAAAAAAAAAAA").unwrap();
        y.id = InviteId::parse("aAAAAAAAAAAAAAAAAAAAAA").unwrap();
        let p = page(vec![vec![x.clone(), y.clone()]], PageSize::DEFAULT);
        assert_eq!(p.invites, vec![y, x]);
    }
}
