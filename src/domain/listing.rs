//! Listing a site's invites (docs/api.md#finding-invites-list): the query a client may send, parsed whole
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
/// Clients see it as opaque text: base64url of the creation time (8 bytes, big-endian
/// two's complement) then the invite id's bytes (16, or 22 for an id with its time
/// prefix). 24 and 30 bytes are exactly 32 and 40 characters with no spare bits, so every
/// string of [`CURSOR_PATTERN`] is a position and the document can say exactly which
/// cursors are accepted.
#[derive(Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created: UnixTime,
    pub invite: InviteId,
}

/// Shortest and longest encoded cursor.
pub const CURSOR_MIN_LEN: usize = 32;
pub const CURSOR_MAX_LEN: usize = 40;
/// Exactly the strings [`Cursor::parse`] accepts, for the OpenAPI document.
pub const CURSOR_PATTERN: &str = "^[A-Za-z0-9_-]{32}(?:[A-Za-z0-9_-]{8})?$";

impl Cursor {
    pub fn encode(&self) -> String {
        let mut bytes = self.created.to_be_bytes().to_vec();
        bytes.extend_from_slice(&self.invite.to_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    pub fn parse(s: &str) -> Option<Self> {
        if s.len() != CURSOR_MIN_LEN && s.len() != CURSOR_MAX_LEN {
            return None;
        }
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s)
            .ok()?;
        let (created, invite) = bytes.split_at_checked(8)?;
        Some(Self {
            created: UnixTime::from_be_bytes(created.try_into().ok()?),
            invite: InviteId::from_bytes(invite)?,
        })
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
            invite: InviteId::generate(1_800_000_000_000),
        };
        assert_eq!(cursor.encode().len(), CURSOR_MAX_LEN);
        assert_eq!(Cursor::parse(&cursor.encode()), Some(cursor.clone()));
        for bad in [
            String::new(),
            "!!!".into(),
            format!("{}=", cursor.encode()),
            format!("{}AA", cursor.encode()),
            cursor.encode()[1..].to_owned(),
            format!("+{}", &cursor.encode()[1..]),
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

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// [`CURSOR_PATTERN`], by hand.
        fn matches_cursor_pattern(s: &str) -> bool {
            (s.len() == CURSOR_MIN_LEN || s.len() == CURSOR_MAX_LEN)
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        }

        proptest! {
            #[test]
            fn cursors_round_trip(
                created in any::<i64>(),
                invite in prop_oneof![
                    proptest::collection::vec(any::<u8>(), 16),
                    proptest::collection::vec(any::<u8>(), 22),
                ],
            ) {
                let cursor = Cursor { created, invite: InviteId::from_bytes(&invite).unwrap() };
                let text = cursor.encode();
                prop_assert!(matches_cursor_pattern(&text));
                prop_assert_eq!(Cursor::parse(&text), Some(cursor));
            }

            /// Every string of the documented pattern is a position, in exactly one
            /// spelling; nothing else is, and nothing panics.
            #[test]
            fn cursors_are_exactly_the_documented_pattern(
                s in prop_oneof![
                    proptest::string::string_regex(
                        CURSOR_PATTERN.trim_start_matches('^').trim_end_matches('$')
                    ).unwrap(),
                    "[A-Za-z0-9_=+/-]{30,42}",
                    ".{0,70}",
                ]
            ) {
                let parsed = Cursor::parse(&s);
                prop_assert_eq!(parsed.is_some(), matches_cursor_pattern(&s));
                if let Some(cursor) = parsed {
                    prop_assert_eq!(cursor.encode(), s);
                }
            }

            /// Any query string gives a query or one of the list's errors, never a panic;
            /// the page size is always 1 to 500.
            #[test]
            fn arbitrary_queries_never_panic(query in ".{0,120}") {
                if let Ok(parsed) = ListQuery::parse(&query) {
                    prop_assert!((1..=usize::from(PageSize::MAX)).contains(&parsed.limit.get()));
                }
            }

            /// `limit` is exactly the plain decimal numbers 1 to 500.
            #[test]
            fn page_sizes_are_plain_numbers_1_to_500(s in prop_oneof!["[0-9]{1,4}", ".{0,5}"]) {
                let plain = !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
                let expected = plain.then(|| s.parse::<usize>().unwrap()).filter(|n| (1..=500).contains(n));
                prop_assert_eq!(PageSize::parse(&s).map(PageSize::get), expected);
            }

            /// Every documented parameter, well formed, is read back as sent.
            #[test]
            fn well_formed_queries_round_trip(
                status in proptest::option::of(prop_oneof![
                    Just(Status::Pending), Just(Status::Verified), Just(Status::Expired)
                ]),
                custom_id in proptest::option::of(".{0,128}"),
                limit in proptest::option::of(1u16..=500),
                cursor in proptest::option::of((any::<i64>(), any::<[u8; 16]>())),
            ) {
                let cursor = cursor.map(|(created, id)| Cursor { created, invite: InviteId::from_bytes(&id).unwrap() });
                let mut query = url::form_urlencoded::Serializer::new(String::new());
                if let Some(s) = status { query.append_pair("status", s.as_str()); }
                if let Some(c) = &custom_id { query.append_pair("customId", c); }
                if let Some(l) = limit { query.append_pair("limit", &l.to_string()); }
                if let Some(c) = &cursor { query.append_pair("cursor", &c.encode()); }
                let parsed = ListQuery::parse(&query.finish()).unwrap();
                prop_assert_eq!(parsed.status, status);
                prop_assert_eq!(parsed.custom_id.as_ref().map(CustomId::as_str), custom_id.as_deref());
                prop_assert_eq!(parsed.limit.get(), limit.map_or(50, usize::from));
                prop_assert_eq!(parsed.after, cursor);
            }
        }
    }
}
