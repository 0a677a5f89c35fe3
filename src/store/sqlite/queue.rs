//! Where writes wait for the writer thread, and when it takes them.
//!
//! A commit costs an fsync, so the writer takes every waiting job as one batch (group
//! commit), and how long jobs gather decides both the batch size and the latency. With a
//! channel, the first job woke the writer and the batch was whatever had queued by the
//! time the kernel gave the writer the core. Here the gathering follows the async
//! runtime: the job that finds the queue empty leads; it lets the runtime run the tasks
//! that are ready (one turn of its run queue, in which other requests get as far as their
//! own writes) and only then wakes the writer, which takes everything queued by then.
//! Jobs that arrive while the writer commits are taken as soon as it is done. Measured
//! against the channel (BENCHMARKS.md): with creates and reads mixed, a lower p90 and
//! p99 in every paired series; throughput the same within the machine's noise.
//!
//! Small batches in quick succession are paced ([`pace_until`]) while the process uses
//! most of its CPU (`cpu`) and batches have been small lately: a batch of a few jobs that
//! would begin less than [`PACE`] after the last one waits for the rest of that time,
//! and takes what joined it meanwhile. When creates are a tenth of the requests, a
//! commit's fixed cost (the WAL's fsync, the kernel's block requests, the threads it
//! wakes) is most of what a create costs, paid on the cores that serve the reads.
//! Never paced: a lone job (one client waiting for each answer), a large batch, small
//! batches among large ones (creates alone: the writer is what they wait for, and a
//! pause only idles their clients), and any batch while a CPU is to spare (a few
//! clients creating in a loop: a pause would only add latency).

use super::cpu::Saturation;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The longest the writer waits for a leader's wake-up once jobs are queued; a safety net
/// only (a leader always wakes the writer, also when its request is dropped).
const GATHER_LIMIT: Duration = Duration::from_millis(5);
/// The least time between the beginnings of two small batches.
const PACE: Duration = Duration::from_millis(3);
/// Batches of fewer jobs than this (and more than one) are small.
const PACED_BELOW: usize = 8;
/// Batches hold more than this many jobs on average when creates alone keep the writer
/// busy (about 30 at 64 clients); paced batches among reads hold about 7.
const LARGE_MEAN: f64 = 16.0;
/// The weight of a new batch in the running mean of batch sizes.
const MEAN_WEIGHT: f64 = 0.125;

/// Until when `queued` jobs wait before they are taken, if the last batch was taken at
/// `last_taken`, batches held `mean` jobs lately and it is `now`; `None`: take them now.
/// Only asked while the process is saturated.
fn pace_until(
    last_taken: Option<Instant>,
    queued: usize,
    mean: f64,
    now: Instant,
) -> Option<Instant> {
    let until = last_taken? + PACE;
    ((2..PACED_BELOW).contains(&queued) && mean < LARGE_MEAN && now < until).then_some(until)
}

pub struct Queue<J> {
    state: Mutex<State<J>>,
    ready: Condvar,
}

struct State<J> {
    jobs: Vec<J>,
    /// A leader is letting the runtime run before it wakes the writer.
    gathering: bool,
    /// The writer is waiting for jobs.
    idle: bool,
    /// Something besides jobs wants the writer's attention ([`Queue::nudge`]).
    nudged: bool,
    closed: bool,
    /// When the writer last took a batch that emptied the queue (the rest of one too
    /// large for a batch follows at once).
    last_taken: Option<Instant>,
    /// The running mean of batch sizes.
    mean_batch: f64,
    saturation: Saturation,
}

/// What [`Queue::take`] brought the writer.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// Jobs, in the batch.
    Jobs,
    /// No jobs, but the wait's limit passed or the writer was nudged.
    Idle,
    /// The queue is closed and empty: the writer stops.
    Closed,
}

/// What [`Queue::push`] asks of the caller.
#[must_use]
pub enum Pushed<J> {
    /// The job leads its batch: let the runtime run its ready tasks, then [`Queue::wake`].
    Lead,
    /// Another job leads the batch this one joined.
    Joined,
    /// The queue is closed; the job is handed back.
    Closed(J),
}

impl<J> Queue<J> {
    pub fn new() -> Self {
        Self::pacing_by(Saturation::new())
    }

    fn pacing_by(saturation: Saturation) -> Self {
        Self {
            state: Mutex::new(State {
                jobs: Vec::new(),
                gathering: false,
                idle: false,
                nudged: false,
                closed: false,
                last_taken: None,
                mean_batch: 0.0,
                saturation,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<J>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn push(&self, job: J) -> Pushed<J> {
        let mut state = self.lock();
        if state.closed {
            return Pushed::Closed(job);
        }
        let lead = state.jobs.is_empty() && !state.gathering;
        state.jobs.push(job);
        if lead {
            state.gathering = true;
            Pushed::Lead
        } else {
            Pushed::Joined
        }
    }

    /// Ends the gathering: the writer may take the queued jobs.
    pub fn wake(&self) {
        let mut state = self.lock();
        state.gathering = false;
        let wake = state.idle && !state.jobs.is_empty();
        drop(state);
        if wake {
            self.ready.notify_one();
        }
    }

    /// Wakes an idle writer without a job (its [`Queue::take`] answers [`Taken::Idle`]).
    pub fn nudge(&self) {
        let mut state = self.lock();
        state.nudged = true;
        let wake = state.idle;
        drop(state);
        if wake {
            self.ready.notify_one();
        }
    }

    /// The writer stops once the jobs queued so far are taken.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }

    /// Closes the queue and hands back what was waiting, for a writer that cannot run it.
    pub fn close_and_drain(&self) -> Vec<J> {
        let mut state = self.lock();
        state.closed = true;
        std::mem::take(&mut state.jobs)
    }

    /// For the writer: waits until jobs may be taken (gathered, and paced if few) and
    /// moves up to `max` of them into `batch`; with no jobs, waits at most `idle_limit`
    /// (for ever with `None`) or until nudged.
    pub fn take(&self, batch: &mut Vec<J>, max: usize, idle_limit: Option<Duration>) -> Taken {
        let mut state = self.lock();
        loop {
            let gathered = !state.gathering || state.closed;
            if !state.jobs.is_empty() && gathered {
                let now = Instant::now();
                let paced = pace_until(state.last_taken, state.jobs.len(), state.mean_batch, now)
                    .filter(|_| !state.closed && state.saturation.saturated(now));
                if let Some(until) = paced {
                    // Not idle: leaders joining meanwhile need not wake the writer.
                    state = self
                        .ready
                        .wait_timeout(state, until - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    continue;
                }
                let n = state.jobs.len().min(max);
                batch.extend(state.jobs.drain(..n));
                state.last_taken = state.jobs.is_empty().then_some(now);
                state.mean_batch += MEAN_WEIGHT * (n as f64 - state.mean_batch);
                return Taken::Jobs;
            }
            if state.jobs.is_empty() && state.closed {
                return Taken::Closed;
            }
            if state.jobs.is_empty() && std::mem::take(&mut state.nudged) {
                return Taken::Idle;
            }
            state.idle = true;
            let limit = if state.jobs.is_empty() {
                idle_limit
            } else {
                Some(GATHER_LIMIT)
            };
            state = match limit {
                None => self
                    .ready
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(limit) => {
                    let (mut state, timeout) = self
                        .ready
                        .wait_timeout(state, limit)
                        .unwrap_or_else(PoisonError::into_inner);
                    if timeout.timed_out() {
                        if state.jobs.is_empty() {
                            state.idle = false;
                            return Taken::Idle;
                        }
                        state.gathering = false;
                    }
                    state
                }
            };
            state.idle = false;
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().jobs.len()
    }
}

/// Wakes the writer when dropped: a leader's request may be dropped (its client went
/// away) while it lets the runtime run, and the jobs behind it must not wait for that.
pub struct WakeOnDrop<'a, J>(pub &'a Queue<J>);

impl<J> Drop for WakeOnDrop<'_, J> {
    fn drop(&mut self) {
        self.0.wake();
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
