//! Listing a site's invites (interface §8): the query a client may send, parsed whole
//! into these types before anything else happens, and the opaque keyset cursor.

use base64::Engine;
use std::fmt;

use super::{CustomId, InviteId, Status};
use crate::clock::UnixTime;

/// A page's size: 1 to 500 invites, 50 unless the client says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSize(u16);

impl PageSize {
    pub const DEFAULT: PageSize = PageSize(50);
    pub const MAX: u16 = 500;

    /// Decimal digits only (no sign, no spaces), 1 to 500.
    pub fn parse(s: &str) -> Option<Self> {
        if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u16 = s.parse().ok()?;
        (1..=Self::MAX).contains(&n).then_some(Self(n))
    }

    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

/// A position in the newest-first order of a site's invites: the last one a page showed.
/// Clients see it as opaque text (base64url of `{created}.{inviteId}`); only the exact
/// text this server writes is accepted back.
#[derive(Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created: UnixTime,
    pub invite: InviteId,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let plain = format!("{}.{}", self.created, self.invite);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(plain)
    }

    pub fn parse(s: &str) -> Option<Self> {
        // Bounds the work on garbage: a real cursor is at most 20 + 1 + 22 bytes, encoded.
        if s.len() > 64 {
            return None;
        }
        let plain = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s)
            .ok()?;
        let plain = std::str::from_utf8(&plain).ok()?;
        let (created, invite) = plain.split_once('.')?;
        let created: UnixTime = created.parse().ok()?;
        let cursor = Self {
            created,
            invite: InviteId::parse(invite)?,
        };
        // One spelling per position: no signs, leading zeros or other encodings.
        (created >= 0 && cursor.encode() == s).then_some(cursor)
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cursor({}, {})", self.created, self.invite)
    }
}

/// What a list request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// Only invites with this status, as a GET would report it now.
    pub status: Option<Status>,
    /// Only invites with exactly this customId.
    pub custom_id: Option<CustomId>,
    pub limit: PageSize,
    /// Start after this position; `None` starts with the newest.
    pub after: Option<Cursor>,
}

/// Which parameter of a list request is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ListQueryError {
    #[error("status must be pending, verified or expired")]
    Status,
    #[error("customId must be at most 128 characters")]
    CustomIdTooLong,
    #[error("limit must be a whole number from 1 to 500")]
    Limit,
    #[error("cursor is not one this server gave out")]
    Cursor,
    #[error("a query parameter appears more than once")]
    Repeated,
}

impl ListQuery {
    /// Parses a query string (without `?`). Unknown parameters are ignored, as unknown
    /// body fields are; each known one may appear once.
    pub fn parse(query: &str) -> Result<Self, ListQueryError> {
        let mut parsed = Self {
            status: None,
            custom_id: None,
            limit: PageSize::DEFAULT,
            after: None,
        };
        let mut seen = [false; 4];
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match name.as_ref() {
                "status" => 0,
                "customId" => 1,
                "limit" => 2,
                "cursor" => 3,
                _ => continue,
            };
            if std::mem::replace(&mut seen[slot], true) {
                return Err(ListQueryError::Repeated);
            }
            match slot {
                0 => parsed.status = Some(Status::parse(&value).ok_or(ListQueryError::Status)?),
                1 => {
                    let custom_id = CustomId::parse(value.into_owned())
                        .map_err(|_| ListQueryError::CustomIdTooLong)?;
                    parsed.custom_id = Some(custom_id);
                }
                2 => parsed.limit = PageSize::parse(&value).ok_or(ListQueryError::Limit)?,
                _ => parsed.after = Some(Cursor::parse(&value).ok_or(ListQueryError::Cursor)?),
            }
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes_are_1_to_500_in_plain_digits() {
        assert_eq!(PageSize::parse("1").map(PageSize::get), Some(1));
        assert_eq!(PageSize::parse("500").map(PageSize::get), Some(500));
        for bad in [
            "0",
            "501",
            "",
            "+5",
            "-1",
            " 5",
            "5.0",
            "1e2",
            "99999999999",
        ] {
            assert_eq!(PageSize::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn cursors_round_trip_and_refuse_anything_else() {
        let cursor = Cursor {
            created: 1_800_000_000,
            invite: InviteId::generate(),
        };
        assert_eq!(Cursor::parse(&cursor.encode()), Some(cursor.clone()));
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let id = cursor.invite.as_str();
        for bad in [
            String::new(),
            "!!!".into(),
            format!("{}=", cursor.encode()),
            b64(&format!("-5.{id}")),
            b64(&format!("+5.{id}")),
            b64(&format!("05.{id}")),
            b64(&format!("5.{id}x")),
            b64(&format!("5{id}")),
            b64("5.short"),
            "A".repeat(65),
        ] {
            assert_eq!(Cursor::parse(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn queries_parse_every_parameter_once() {
        let q = ListQuery::parse("status=expired&customId=user%2042&limit=7&other=x").unwrap();
        assert_eq!(q.status, Some(Status::Expired));
        assert_eq!(q.custom_id.as_ref().map(CustomId::as_str), Some("user 42"));
        assert_eq!(q.limit.get(), 7);
        assert_eq!(q.after, None);
        assert_eq!(ListQuery::parse("").unwrap().limit, PageSize::DEFAULT);
        assert_eq!(
            ListQuery::parse("status=Pending"),
            Err(ListQueryError::Status)
        );
        assert_eq!(ListQuery::parse("limit=0"), Err(ListQueryError::Limit));
        assert_eq!(ListQuery::parse("cursor=abc"), Err(ListQueryError::Cursor));
        assert_eq!(
            ListQuery::parse("limit=1&limit=2"),
            Err(ListQueryError::Repeated)
        );
        let long = "x".repeat(129);
        assert_eq!(
            ListQuery::parse(&format!("customId={long}")),
            Err(ListQueryError::CustomIdTooLong)
        );
    }
}
