//! Whether this process is using all the CPU it may: the writer paces small commits only
//! then (`queue`), since pacing trades a create's latency for CPU that other requests
//! are waiting for, and with a core to spare it would only add latency.
//!
//! Read from `/proc/self/stat` (user and system time, in the kernel's fixed 100 ticks a
//! second) over windows of [`WINDOW`], against the CPUs this process may run on
//! (`available_parallelism` follows the affinity mask and cgroup quota). Where that file
//! does not exist (not Linux), the process never counts as saturated.

use std::time::{Duration, Instant};

/// How long a measurement lasts; the last one stands until the next ends.
const WINDOW: Duration = Duration::from_millis(200);
/// The share of the available CPU time from which the process is saturated. Measured on
/// one core (BENCHMARKS.md): 4 clients creating in a loop kept the process at 0.4–0.65
/// of it, reads mixed with creates at 0.7–1.0 per window.
const SATURATED_AT: f64 = 0.75;
/// `USER_HZ`: the unit of `/proc`'s CPU times, 100 on every Linux ABI.
const TICKS_PER_SECOND: f64 = 100.0;

pub struct Saturation {
    /// Tests: the answer, whatever the process does.
    fixed: Option<bool>,
    cpus: f64,
    /// The start of the current window: when, and the process's CPU ticks then.
    since: Option<(Instant, u64)>,
    saturated: bool,
}

impl Saturation {
    pub fn new() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            fixed: None,
            cpus: cpus as f64,
            since: None,
            saturated: false,
        }
    }

    #[cfg(test)]
    pub fn fixed(saturated: bool) -> Self {
        Self {
            fixed: Some(saturated),
            ..Self::new()
        }
    }

    /// Whether the process used at least [`SATURATED_AT`] of its CPUs over the last
    /// window that ended; cheap between windows (no file read).
    pub fn saturated(&mut self, now: Instant) -> bool {
        if let Some(fixed) = self.fixed {
            return fixed;
        }
        match self.since {
            Some((at, _)) if now.saturating_duration_since(at) < WINDOW => {}
            since => {
                let ticks = process_ticks();
                if let (Some((at, before)), Some(after)) = (since, ticks) {
                    let used = after.saturating_sub(before) as f64 / TICKS_PER_SECOND;
                    let available = now.saturating_duration_since(at).as_secs_f64() * self.cpus;
                    self.saturated = used >= SATURATED_AT * available;
                }
                self.since = ticks.map(|t| (now, t));
            }
        }
        self.saturated
    }
}

/// The process's user and system CPU time so far, in ticks.
fn process_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_ticks(&stat)
}

/// utime and stime of a `/proc/PID/stat` line: the 14th and 15th fields, counted after
/// the command name, which is in parentheses and may hold spaces or parentheses itself.
fn parse_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_ascii_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_are_read_after_a_command_name_with_spaces_and_parentheses() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 37 5 0 0 20 0 9 0";
        assert_eq!(parse_ticks(line), Some(42));
        assert_eq!(parse_ticks("4242 (x) S 1"), None);
        assert_eq!(parse_ticks("no parenthesis"), None);
    }

    #[test]
    fn a_process_that_keeps_a_cpu_busy_is_saturated_and_an_idle_one_is_not() {
        let mut gauge = Saturation::new();
        gauge.cpus = 0.5;
        let start = Instant::now();
        assert!(!gauge.saturated(start), "no window has ended yet");
        if process_ticks().is_none() {
            return; // not Linux: never saturated, as documented
        }
        // Busy for two windows on this thread: more than half a CPU's worth.
        let mut spins = 0u64;
        while start.elapsed() < WINDOW * 2 + WINDOW / 2 {
            spins = std::hint::black_box(spins.wrapping_add(1));
            gauge.saturated(Instant::now());
        }
        assert!(gauge.saturated(Instant::now()));
        gauge.cpus = 64.0;
        let idle_from = Instant::now();
        gauge.saturated(idle_from);
        std::thread::sleep(WINDOW + WINDOW / 4);
        assert!(!gauge.saturated(Instant::now()), "an idle window");
    }
}
