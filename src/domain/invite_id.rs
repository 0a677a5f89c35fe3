//! Invite identifiers. Clients see opaque URL-safe text with 128 random bits; the store
//! sees a key that grows with time, so new invites land at the right edge of every
//! B-tree keyed by the id instead of dirtying a random page of it per insert.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// An invite id: 8 characters of creation order (48 bits: 2^47 plus a sixteenth-of-a-
/// millisecond tick since the Unix epoch, in base64url's alphabet taken in ASCII order so
/// that text order is that order) followed by base64url of 16 random bytes, 30
/// characters in all. Within one process the ticks of successive ids strictly increase
/// (an id made in the same tick as the last takes the next one), so ids sort in the order
/// they were made even when many are made in one millisecond; a burst of more than 16
/// ids a millisecond borrows ticks ahead of the clock, which costs nothing but the
/// prefix's likeness to a time (order is all it is used for). Ids made before the
/// time prefix (the 22 random characters alone) stay valid. Only one spelling of given
/// bytes is an id: the last random character carries 2 bits, so it is one of `A`, `Q`,
/// `g`, `w` ([`INVITE_ID_PATTERN`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InviteId(String);

pub const INVITE_ID_RANDOM_BYTES: usize = 16;
/// Bytes of the time prefix.
const TIME_BYTES: usize = 6;
/// Characters of the time prefix.
const TIME_LEN: usize = 8;
/// Characters of the random part: base64url of 16 bytes.
const RANDOM_LEN: usize = 22;
/// Shortest and longest id: without and with the time prefix.
pub const INVITE_ID_MIN_LEN: usize = RANDOM_LEN;
pub const INVITE_ID_MAX_LEN: usize = TIME_LEN + RANDOM_LEN;
/// Exactly the strings [`InviteId::parse`] accepts, for the OpenAPI document.
pub const INVITE_ID_PATTERN: &str = "^(?:[A-Za-z0-9_-]{8})?[A-Za-z0-9_-]{21}[AQgw]$";

/// base64url's 64 characters in ASCII order.
const ORDERED: &[u8; 64] = b"-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
/// Each byte's place in [`ORDERED`]; 64 for a byte that is not in it.
const ORDERED_VALUE: [u8; 256] = {
    let mut table = [64u8; 256];
    let mut i = 0;
    while i < ORDERED.len() {
        table[ORDERED[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// An id's bytes, decoded: the first `len` of `bytes` (16, or 22 with the time prefix).
struct Decoded {
    bytes: [u8; TIME_BYTES + INVITE_ID_RANDOM_BYTES],
    len: usize,
}

/// Added to the ticks, so that ids do not start with `-` (the alphabet's zero), which
/// command lines and some tools would take for an option. 2^47 ticks after 1970 is the
/// year 2248.
const TIME_BIAS: u64 = 1 << 47;
/// Ticks per millisecond.
const TICKS_PER_MS: u64 = 16;
/// The tick of the last id this process made.
static LAST_TICK: AtomicU64 = AtomicU64::new(0);

/// The tick for an id made at `now_millis`: the clock's, or the one after the last id's
/// if that is not earlier.
fn next_tick(now_millis: i64) -> u64 {
    let clock = u64::try_from(now_millis)
        .unwrap_or(0)
        .saturating_mul(TICKS_PER_MS)
        .min(TIME_BIAS - 1);
    let mut last = LAST_TICK.load(Ordering::Relaxed);
    loop {
        let next = clock.max(last + 1).min(TIME_BIAS - 1);
        match LAST_TICK.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

impl InviteId {
    /// A new id for an invite created at `now_millis`, after every id this process made
    /// before. The random bits come from the thread's CSPRNG (ChaCha, seeded by the OS),
    /// which spares a system call per id.
    pub fn generate(now_millis: i64) -> Self {
        let mut random = [0u8; INVITE_ID_RANDOM_BYTES];
        rand::thread_rng().fill_bytes(&mut random);
        let time = TIME_BIAS + next_tick(now_millis);
        let mut bytes = [0u8; TIME_BYTES + INVITE_ID_RANDOM_BYTES];
        bytes[..TIME_BYTES].copy_from_slice(&time.to_be_bytes()[2..]);
        bytes[TIME_BYTES..].copy_from_slice(&random);
        Self::from_bytes(&bytes).expect("22 bytes are an id")
    }

    /// The id spelled by `bytes`: 16 random bytes (an id without time prefix) or 6 bytes
    /// of time then 16 random bytes. `None` for any other length.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        match bytes.len() {
            INVITE_ID_RANDOM_BYTES => Some(Self(URL_SAFE_NO_PAD.encode(bytes))),
            22 => {
                let (time, random) = bytes.split_at(TIME_BYTES);
                let mut bits = time.iter().fold(0u64, |acc, b| acc << 8 | u64::from(*b));
                let mut text = [0u8; TIME_LEN];
                for c in text.iter_mut().rev() {
                    *c = ORDERED[(bits & 63) as usize];
                    bits >>= 6;
                }
                let mut s = String::with_capacity(INVITE_ID_MAX_LEN);
                s.extend(text.iter().map(|&b| char::from(b)));
                URL_SAFE_NO_PAD.encode_string(random, &mut s);
                Some(Self(s))
            }
            _ => None,
        }
    }

    /// `None` for anything that cannot be an invite id (see [`INVITE_ID_PATTERN`]);
    /// callers treat that as "not found".
    pub fn parse(s: &str) -> Option<Self> {
        Self::decode(s).map(|_| Self(s.to_owned()))
    }

    /// The bytes `s` spells, decoded on the stack (every status read parses an id).
    fn decode(s: &str) -> Option<Decoded> {
        let (time, random) = match s.len() {
            INVITE_ID_MIN_LEN => ("", s),
            INVITE_ID_MAX_LEN => s.split_at_checked(TIME_LEN)?,
            _ => return None,
        };
        let mut out = Decoded {
            bytes: [0; TIME_BYTES + INVITE_ID_RANDOM_BYTES],
            len: 0,
        };
        if !time.is_empty() {
            let mut bits = 0u64;
            for c in time.bytes() {
                let digit = ORDERED_VALUE[usize::from(c)];
                if usize::from(digit) >= ORDERED.len() {
                    return None;
                }
                bits = bits << 6 | u64::from(digit);
            }
            out.bytes[..TIME_BYTES].copy_from_slice(&bits.to_be_bytes()[2..]);
            out.len = TIME_BYTES;
        }
        // The engine refuses padding, other alphabets and non-zero trailing bits. Its
        // estimate of 22 characters' bytes is 18, so the buffer has room for 18.
        let mut random_bytes = [0u8; INVITE_ID_RANDOM_BYTES + 2];
        let n = URL_SAFE_NO_PAD
            .decode_slice(random, &mut random_bytes)
            .ok()?;
        if n != INVITE_ID_RANDOM_BYTES {
            return None;
        }
        out.bytes[out.len..out.len + n].copy_from_slice(&random_bytes[..n]);
        out.len += n;
        Some(out)
    }

    /// The id's bytes: 16, or 22 with the time prefix.
    pub fn to_bytes(&self) -> Vec<u8> {
        let decoded = Self::decode(&self.0).expect("an InviteId holds a valid spelling");
        decoded.bytes[..decoded.len].to_vec()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id's text, without a copy.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for InviteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn new_ids_are_30_url_safe_chars_distinct_and_ordered_by_time() {
        let a = InviteId::generate(1_795_000_000_000);
        let b = InviteId::generate(1_795_000_000_000);
        let later = InviteId::generate(1_795_000_000_001);
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 30);
        assert_eq!(InviteId::parse(a.as_str()), Some(a.clone()));
        assert!(
            a.as_str()[..8] < b.as_str()[..8],
            "made in the same millisecond"
        );
        assert!(b.as_str()[..8] < later.as_str()[..8]);
        assert!(!a.as_str().starts_with('-'), "{a}");
        // Out-of-range clocks still give ids (the prefix is clamped).
        // (Not i64::MAX: the clamped tick would leave this process no later tick.)
        assert!(InviteId::parse(InviteId::generate(-5).as_str()).is_some());
    }

    #[test]
    fn malformed_invite_ids_are_rejected() {
        for bad in [
            "",
            "short",
            "aaaaaaaaaaaaaaaaaaaaa/",
            "aaaaaaaaaaaaaaaaaaaaaaa",
            // 22 characters of the alphabet, but not the spelling of any 16 bytes.
            "aaaaaaaaaaaaaaaaaaaaab",
            "aaaaaaa=aaaaaaaaaaaaaaaaaaaaaA",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            "ééééaaaaaaaaaaaaaaaaaaaaaA",
        ] {
            assert_eq!(InviteId::parse(bad), None, "{bad:?}");
        }
    }

    /// [`INVITE_ID_PATTERN`], by hand.
    fn matches_pattern(s: &str) -> bool {
        let b64 = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        let n = s.chars().count();
        (n == 22 || n == 30) && s.chars().take(n - 1).all(b64) && s.ends_with(['A', 'Q', 'g', 'w'])
    }

    proptest! {
        /// Every string of the documented pattern is an invite id, and only those.
        #[test]
        fn invite_ids_are_exactly_the_documented_pattern(
            s in prop_oneof![
                proptest::string::string_regex(
                    INVITE_ID_PATTERN.trim_start_matches('^').trim_end_matches('$')
                ).unwrap(),
                "[A-Za-z0-9_=+/-]{20,31}",
                ".{0,32}",
            ]
        ) {
            prop_assert_eq!(InviteId::parse(&s).is_some(), matches_pattern(&s));
        }

        /// An id is its bytes, in one spelling, with or without the time prefix.
        #[test]
        fn invite_ids_round_trip_through_their_bytes(
            bytes in prop_oneof![
                proptest::collection::vec(any::<u8>(), 16),
                proptest::collection::vec(any::<u8>(), 22),
            ]
        ) {
            let id = InviteId::from_bytes(&bytes).unwrap();
            prop_assert!(matches_pattern(id.as_str()));
            prop_assert_eq!(id.to_bytes(), bytes);
            prop_assert_eq!(InviteId::parse(id.as_str()), Some(id));
        }

        /// Text order is the order ids were made in, whatever the clock said and
        /// whatever the random part.
        #[test]
        fn ids_sort_in_the_order_they_were_made(times in proptest::collection::vec(0i64..(1 << 43), 1..20)) {
            let ids: Vec<InviteId> = times.iter().map(|&t| InviteId::generate(t)).collect();
            for pair in ids.windows(2) {
                prop_assert!(pair[0].as_str()[..8] < pair[1].as_str()[..8], "{} {}", pair[0], pair[1]);
            }
        }
    }
}
