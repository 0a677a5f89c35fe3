//! agegate's global allocator, mimalloc, and the one option it changes; a crate of its
//! own so that the call into mimalloc's C API stays outside the server's
//! `forbid(unsafe_code)`.

use libmimalloc_sys::mi_option_t;
pub use mimalloc::MiMalloc;

/// mimalloc v3's `mi_option_purge_delay`, by its position in `mi_option_t` (the bindings
/// name it no constant); a test checks it by its default, 1000 ms.
const PURGE_DELAY: mi_option_t = 15;

/// Keeps freed memory for reuse instead of returning it to the kernel a second after it
/// was freed (mimalloc's purge), unless `MIMALLOC_PURGE_DELAY` is set. A proof answer
/// allocates and frees megabytes; purged, that memory was given back with `madvise` and
/// faulted in again for the next answer, 2–4 ms at a time on whichever request thread next
/// called the allocator, and status reads waited behind it (BENCHMARKS.md). What is kept
/// is bounded by the most memory in use at once.
///
/// Call it first thing in `main`, before any other thread starts: the option is a plain
/// word the allocator reads without synchronisation.
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: stores one in-range integer option (mi_option_set checks the index).
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, -1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(unsafe_code)]
    fn the_option_set_is_the_purge_delay_and_freed_memory_is_then_kept() {
        // SAFETY: reads one integer option.
        let get = || unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(), 1000, "mi_option_t has moved: find purge_delay again");
        }
        keep_freed_memory();
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(get(), -1);
        }
    }
}
