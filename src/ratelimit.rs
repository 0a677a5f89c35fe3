//! Per-key token buckets (docs/api.md#rate-limit: at most N authenticated requests per second
//! per site, bursts up to N). Pure: the caller passes the time, so tests need no sleep
//! and every decision follows from the injectable clock.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// What the limiter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    /// Refused; a token is back after this many whole seconds (at least 1).
    Limited {
        retry_after_secs: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Tokens left, in thousandths (integer arithmetic: no float drift).
    milli_tokens: u64,
    updated_ms: i64,
}

pub struct RateLimiter<K> {
    per_second: u64,
    buckets: Mutex<HashMap<K, Bucket>>,
}

/// Bound on remembered keys; a full bucket carries no state worth keeping, so those go
/// first when the bound is reached.
const MAX_KEYS: usize = 100_000;

impl<K: Hash + Eq + Copy> RateLimiter<K> {
    /// `None` for 0, which means no limit.
    pub fn new(per_second: u32) -> Option<Self> {
        (per_second > 0).then(|| Self {
            per_second: u64::from(per_second),
            buckets: Mutex::new(HashMap::new()),
        })
    }

    /// Takes a token from `key`'s bucket at `now_ms`, if it has one.
    pub fn check(&self, key: K, now_ms: i64) -> Decision {
        let capacity = self.per_second * 1000;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(&key) {
            let per_second = self.per_second;
            buckets.retain(|_, b| refill(*b, now_ms, per_second, capacity) < capacity);
            if buckets.len() >= MAX_KEYS {
                // Every remembered key is active: forget them all rather than grow.
                buckets.clear();
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            milli_tokens: capacity,
            updated_ms: now_ms,
        });
        bucket.milli_tokens = refill(*bucket, now_ms, self.per_second, capacity);
        bucket.updated_ms = bucket.updated_ms.max(now_ms);
        if bucket.milli_tokens >= 1000 {
            bucket.milli_tokens -= 1000;
            Decision::Allowed
        } else {
            // Refill is `per_second` tokens a second, i.e. `per_second` milli-tokens a ms.
            let missing_ms = (1000 - bucket.milli_tokens).div_ceil(self.per_second);
            Decision::Limited {
                retry_after_secs: missing_ms.div_ceil(1000).max(1),
            }
        }
    }
}

/// The bucket's tokens at `now_ms`; time running backwards adds nothing.
fn refill(bucket: Bucket, now_ms: i64, per_second: u64, capacity: u64) -> u64 {
    let elapsed = u64::try_from(now_ms.saturating_sub(bucket.updated_ms)).unwrap_or(0);
    bucket
        .milli_tokens
        .saturating_add(elapsed.saturating_mul(per_second))
        .min(capacity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn zero_means_no_limit() {
        assert!(RateLimiter::<u8>::new(0).is_none());
    }

    #[test]
    fn a_burst_of_n_is_allowed_then_refused_with_retry_after() {
        let rl = RateLimiter::new(5).unwrap();
        for _ in 0..5 {
            assert_eq!(rl.check(1, 0), Decision::Allowed);
        }
        assert_eq!(
            rl.check(1, 0),
            Decision::Limited {
                retry_after_secs: 1
            }
        );
        // One token comes back every 200 ms.
        assert_eq!(
            rl.check(1, 199),
            Decision::Limited {
                retry_after_secs: 1
            }
        );
        assert_eq!(rl.check(1, 200), Decision::Allowed);
    }

    #[test]
    fn keys_are_independent() {
        let rl = RateLimiter::new(1).unwrap();
        assert_eq!(rl.check("a", 0), Decision::Allowed);
        assert_ne!(rl.check("a", 0), Decision::Allowed);
        assert_eq!(rl.check("b", 0), Decision::Allowed);
    }

    #[test]
    fn an_idle_bucket_refills_to_n_only() {
        let rl = RateLimiter::new(2).unwrap();
        assert_eq!(rl.check(1, 0), Decision::Allowed);
        let allowed = (0..5)
            .filter(|_| rl.check(1, 60_000) == Decision::Allowed)
            .count();
        assert_eq!(allowed, 2);
    }

    #[test]
    fn a_clock_going_backwards_refills_nothing() {
        let rl = RateLimiter::new(1).unwrap();
        assert_eq!(rl.check(1, 10_000), Decision::Allowed);
        assert_ne!(rl.check(1, 5_000), Decision::Allowed);
        assert_ne!(rl.check(1, 10_500), Decision::Allowed);
        assert_eq!(rl.check(1, 11_000), Decision::Allowed);
    }

    proptest! {
        /// Over any window, at most N + N × seconds requests pass, and Retry-After is
        /// never 0.
        #[test]
        fn never_more_than_burst_plus_rate(
            n in 1u32..50,
            steps in proptest::collection::vec(0i64..400, 1..300),
        ) {
            let rl = RateLimiter::new(n).unwrap();
            let mut now = 0i64;
            let mut allowed = 0u64;
            for step in steps {
                now += step;
                match rl.check(7u8, now) {
                    Decision::Allowed => allowed += 1,
                    Decision::Limited { retry_after_secs } => prop_assert!(retry_after_secs >= 1),
                }
            }
            let bound = u64::from(n) + (now as u64 * u64::from(n)) / 1000;
            prop_assert!(allowed <= bound, "{allowed} > {bound}");
        }
    }
}
