//! RFC 3339 date-time text (CBOR tag 0, as ISO/IEC 18013-5 `tdate`) to Unix time, by
//! the `time` crate. Total: any input gives a value or None, never a panic.

use std::borrow::Cow;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// An instant with sub-second precision, so "now" (whole seconds) compares exactly
/// against a fractional `validFrom`/`validUntil`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Instant {
    pub secs: i64,
    pub nanos: u32,
}

impl Instant {
    pub(crate) fn from_secs(secs: i64) -> Instant {
        Instant { secs, nanos: 0 }
    }
}

/// Parses `YYYY-MM-DD"T"hh:mm:ss[.frac]("Z"|±hh:mm)`; `T` and `Z` may be lowercase
/// (RFC 3339 section 5.6 note). A leap second (`:60`) is accepted and counts as the next second.
/// Digits of a fraction beyond nanoseconds are accepted and ignored.
pub(crate) fn parse_rfc3339(s: &str) -> Option<Instant> {
    // `time` takes any character between the date and the time; RFC 3339 only `T`.
    if !matches!(s.as_bytes().get(10), Some(b'T' | b't')) {
        return None;
    }
    // `time` reads `:60` as the last nanosecond of `:59`, and only where a leap second
    // may fall (a month's last minute, UTC): parse `:59` and add the second here.
    let (text, leap) = match s.get(17..19) {
        Some("60") => (Cow::Owned(format!("{}59{}", &s[..17], &s[19..])), 1),
        _ => (Cow::Borrowed(s), 0),
    };
    let t = OffsetDateTime::parse(&text, &Rfc3339).ok()?;
    Some(Instant {
        secs: t.unix_timestamp() + leap,
        nanos: t.nanosecond(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> Option<i64> {
        parse_rfc3339(s).map(|i| i.secs)
    }

    #[test]
    fn rfc3339_parses_utc_offsets_and_fractions() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(secs("2024-01-01T00:00:00Z"), Some(1_704_067_200));
        assert_eq!(secs("2024-02-29T12:34:56z"), Some(1_709_210_096));
        assert_eq!(secs("2024-01-01T01:00:00+01:00"), Some(1_704_067_200));
        assert_eq!(secs("2023-12-31T19:00:00-05:00"), Some(1_704_067_200));
        assert_eq!(secs("2024-01-01t00:00:00+00:00"), Some(1_704_067_200));
        assert_eq!(
            parse_rfc3339("2024-01-01T00:00:00.5Z"),
            Some(Instant {
                secs: 1_704_067_200,
                nanos: 500_000_000
            })
        );
        assert_eq!(
            parse_rfc3339("2024-01-01T00:00:00.1234567891234Z"),
            Some(Instant {
                secs: 1_704_067_200,
                nanos: 123_456_789
            })
        );
        assert_eq!(secs("1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(secs("2016-12-31T23:59:60Z"), Some(1_483_228_800));
        assert_eq!(secs("9999-12-31T23:59:59Z"), Some(253_402_300_799));
    }

    #[test]
    fn rfc3339_leap_seconds_and_extreme_offsets() {
        // A leap second counts as the next second, wherever it falls.
        assert_eq!(secs("2024-01-01T00:00:60Z"), Some(1_704_067_260));
        assert_eq!(
            parse_rfc3339("2016-12-31T23:59:60.25+00:00"),
            Some(Instant {
                secs: 1_483_228_800,
                nanos: 250_000_000
            })
        );
        assert_eq!(secs("0000-01-01T00:00:00Z"), Some(-62_167_219_200));
        assert_eq!(secs("0000-01-01T00:00:00+23:59"), Some(-62_167_305_540));
        assert_eq!(secs("9999-12-31T23:59:60-23:59"), Some(253_402_387_140));
    }

    #[test]
    fn rfc3339_rejects_malformed_text() {
        for bad in [
            "",
            "2024-01-01",
            "2024-01-01T00:00:00",
            "2024-01-01 00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01T00:00:61Z",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00ZZ",
            "2024-01-01T00:00:00+0100",
            "2024-01-01T00:00:00+24:00",
            "+024-01-01T00:00:00Z",
            "2024-01-01T00:00:00Z ",
            "２０２４-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn rfc3339_never_panics_on_prefixes() {
        let full = "2024-01-01T00:00:00.123456+01:30";
        for i in 0..full.len() {
            let _ = parse_rfc3339(&full[..i]);
        }
    }
}
