//! Pause points: places in a check, a fraction of a millisecond of work apart, where the
//! caller's hook runs (a server's proof worker offers its CPU back there, see
//! [`with_pause_hook`]). The crate itself never sleeps, yields or reads a clock.

use std::cell::Cell;

thread_local! {
    static HOOK: Cell<Option<fn()>> = const { Cell::new(None) };
}

/// Runs `f` on this thread with `hook` called at every pause point it reaches; the hook
/// that was set before is restored afterwards, also when `f` panics.
pub fn with_pause_hook<R>(hook: fn(), f: impl FnOnce() -> R) -> R {
    struct Restore(Option<fn()>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HOOK.with(|h| h.set(self.0));
        }
    }
    let _restore = Restore(HOOK.with(|h| h.replace(Some(hook))));
    f()
}

/// A pause point: runs the hook, if one is set.
#[inline]
pub(crate) fn point() {
    if let Some(hook) = HOOK.with(Cell::get) {
        hook();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);
    fn count() {
        CALLS.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn the_hook_runs_only_inside_with_pause_hook_and_is_restored_after_a_panic() {
        point();
        assert_eq!(CALLS.load(Ordering::Relaxed), 0);
        with_pause_hook(count, || {
            point();
            point();
        });
        assert_eq!(CALLS.load(Ordering::Relaxed), 2);
        let panicked = std::panic::catch_unwind(|| with_pause_hook(count, || panic!("check")));
        assert!(panicked.is_err());
        point();
        assert_eq!(CALLS.load(Ordering::Relaxed), 2);
    }
}
