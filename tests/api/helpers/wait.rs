//! Waiting for a condition instead of sleeping for a guess: every poll of the suite goes
//! through here, with a deadline that is only ever reached when something is wrong.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is looked at again: short, so a wait ends soon after the
/// condition holds; the checks are cheap (an HTTP request, a row count).
const POLL: Duration = Duration::from_millis(20);

/// Runs `check` until it gives `Some`, for at most `within`; `None` if it never did.
pub async fn poll<T, F, Fut>(within: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Runs `check` until it gives `Ok`, for at most `within`; past that, its last `Err`,
/// which says what was seen instead of what was waited for.
pub async fn until<T, E, F, Fut>(within: Duration, mut check: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = Instant::now() + within;
    loop {
        let seen = check().await;
        if seen.is_ok() || Instant::now() >= deadline {
            return seen;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until `check` holds; fails the test, naming `what`, if it does not within
/// `within`.
pub async fn eventually<F, Fut>(what: &str, within: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let held = poll(within, || {
        let done = check();
        async move { done.await.then_some(()) }
    })
    .await;
    assert!(held.is_some(), "{what}: not within {within:?}");
}

/// [`poll`] for code that cannot await (a `Drop`, a `#[test]` without a runtime).
pub fn poll_blocking<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}
