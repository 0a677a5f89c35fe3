//! Time comes from an injectable clock so expiry rules can be tested without sleeping,
//! and so every backend and node decide expiry alike (never the database's clock).

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Unix time in whole seconds.
pub type UnixTime = i64;

/// Unix time in milliseconds: when webhook attempts are made and due, and what orders
/// invite ids. A type of its own, so seconds and milliseconds cannot be mixed up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixMillis(pub i64);

impl UnixMillis {
    pub fn get(self) -> i64 {
        self.0
    }

    /// The whole second this falls in.
    pub fn seconds(self) -> UnixTime {
        self.0.div_euclid(1000)
    }

    /// This time plus `d` (saturating).
    pub fn after(self, d: std::time::Duration) -> Self {
        Self(
            self.0
                .saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        )
    }

    /// How long from `earlier` to this, or zero if it is not later.
    pub fn since(self, earlier: Self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::try_from(self.0 - earlier.0).unwrap_or(0))
    }
}

pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> UnixTime;

    /// Unix time in milliseconds, for scheduling webhook attempts and ordering ids.
    fn now_millis(&self) -> UnixMillis {
        UnixMillis(self.now() * 1000)
    }
}

/// The process's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixTime {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    fn now_millis(&self) -> UnixMillis {
        UnixMillis(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0),
        )
    }
}

/// A clock that only moves when told to; for tests.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: UnixTime) -> Self {
        Self(AtomicI64::new(start))
    }

    pub fn advance(&self, seconds: i64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> UnixTime {
        self.0.load(Ordering::SeqCst)
    }
}

/// RFC 3339 rendering of a Unix time, for human- and machine-readable output.
pub fn rfc3339(t: UnixTime) -> String {
    let t = UNIX_EPOCH + std::time::Duration::from_secs(t.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}
