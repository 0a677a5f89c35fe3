//! RFC 3339 date-time text (CBOR tag 0, as ISO/IEC 18013-5 `tdate`) to Unix time. Total:
//! any input gives a value or None, never a panic.

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
/// (RFC 3339 §5.6 note). A leap second (`:60`) is accepted and counts as the next second.
pub(crate) fn parse_rfc3339(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    let year = digits(b, 0, 4)?;
    byte_at(b, 4, b'-')?;
    let month = digits(b, 5, 2)?;
    byte_at(b, 7, b'-')?;
    let day = digits(b, 8, 2)?;
    if !matches!(b.get(10), Some(b'T' | b't')) {
        return None;
    }
    let hour = digits(b, 11, 2)?;
    byte_at(b, 13, b':')?;
    let minute = digits(b, 14, 2)?;
    byte_at(b, 16, b':')?;
    let second = digits(b, 17, 2)?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }

    let mut pos = 19;
    let mut nanos: u32 = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        let mut scale: u32 = 100_000_000;
        while let Some(&c) = b.get(pos).filter(|c| c.is_ascii_digit()) {
            // Digits beyond nanoseconds are accepted and ignored.
            nanos += u32::from(c - b'0') * scale;
            scale /= 10;
            pos += 1;
        }
        if pos == start {
            return None;
        }
    }

    let offset_secs: i64 = match b.get(pos) {
        Some(b'Z' | b'z') if b.len() == pos + 1 => 0,
        Some(&sign @ (b'+' | b'-')) if b.len() == pos + 6 => {
            let oh = digits(b, pos + 1, 2)?;
            byte_at(b, pos + 3, b':')?;
            let om = digits(b, pos + 4, 2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let off = oh * 3600 + om * 60;
            if sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };

    // All terms are small (|year| < 10^4), so this arithmetic cannot overflow i64.
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    Some(Instant { secs, nanos })
}

fn byte_at(b: &[u8], at: usize, c: u8) -> Option<()> {
    (b.get(at) == Some(&c)).then_some(())
}

/// `n` ASCII digits starting at `at`, as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let slice = b.get(at..at.checked_add(n)?)?;
    slice.iter().try_fold(0i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
