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

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The longest the writer waits for a leader's wake-up once jobs are queued; a safety net
/// only (a leader always wakes the writer, also when its request is dropped).
const GATHER_LIMIT: Duration = Duration::from_millis(5);

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
        Self {
            state: Mutex::new(State {
                jobs: Vec::new(),
                gathering: false,
                idle: false,
                nudged: false,
                closed: false,
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

    /// For the writer: waits until jobs may be taken and moves up to `max` of them into
    /// `batch`; with no jobs, waits at most `idle_limit` (for ever with `None`) or until
    /// nudged.
    pub fn take(&self, batch: &mut Vec<J>, max: usize, idle_limit: Option<Duration>) -> Taken {
        let mut state = self.lock();
        loop {
            let gathered = !state.gathering || state.closed;
            if !state.jobs.is_empty() && gathered {
                let n = state.jobs.len().min(max);
                batch.extend(state.jobs.drain(..n));
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
mod tests {
    use super::*;
    use std::sync::Arc;

    fn taken(queue: &Queue<u32>) -> Vec<u32> {
        let mut batch = Vec::new();
        assert_eq!(queue.take(&mut batch, 10, None), Taken::Jobs);
        batch
    }

    #[test]
    fn the_first_job_leads_and_later_ones_join_until_the_writer_is_woken() {
        let queue = Queue::new();
        assert!(matches!(queue.push(1), Pushed::Lead));
        assert!(matches!(queue.push(2), Pushed::Joined));
        queue.wake();
        assert!(
            matches!(queue.push(3), Pushed::Joined),
            "jobs are still queued"
        );
        assert_eq!(taken(&queue), [1, 2, 3]);
        assert!(matches!(queue.push(4), Pushed::Lead), "an empty queue");
    }

    #[test]
    fn the_writer_waits_for_the_leader_then_takes_everything_queued() {
        let queue = Arc::new(Queue::new());
        assert!(matches!(queue.push(1), Pushed::Lead));
        let writer = std::thread::spawn({
            let queue = queue.clone();
            move || taken(&queue)
        });
        // The writer is waiting (not taking job 1 alone) while the leader gathers.
        while !queue.lock().idle {
            std::thread::yield_now();
        }
        assert!(matches!(queue.push(2), Pushed::Joined));
        queue.wake();
        assert_eq!(writer.join().unwrap(), [1, 2]);
    }

    #[test]
    fn a_batch_holds_at_most_max_jobs_and_the_rest_follow_at_once() {
        let queue = Queue::new();
        for i in 0..5 {
            let _ = queue.push(i);
        }
        queue.wake();
        let mut batch = Vec::new();
        assert_eq!(queue.take(&mut batch, 3, None), Taken::Jobs);
        assert_eq!(batch, [0, 1, 2]);
        batch.clear();
        assert_eq!(queue.take(&mut batch, 3, None), Taken::Jobs);
        assert_eq!(batch, [3, 4]);
    }

    #[test]
    fn a_leader_dropped_while_gathering_still_wakes_the_writer() {
        let queue = Queue::new();
        assert!(matches!(queue.push(1), Pushed::Lead));
        drop(WakeOnDrop(&queue));
        assert!(!queue.lock().gathering);
        assert_eq!(taken(&queue), [1]);
    }

    #[test]
    fn a_writer_left_without_a_wake_up_takes_the_jobs_after_the_gather_limit() {
        let queue = Queue::new();
        assert!(matches!(queue.push(1), Pushed::Lead));
        let started = std::time::Instant::now();
        assert_eq!(taken(&queue), [1]);
        assert!(started.elapsed() >= GATHER_LIMIT);
    }

    #[test]
    fn a_closed_queue_refuses_jobs_and_the_writer_finishes_what_was_queued() {
        let queue = Queue::new();
        assert!(matches!(queue.push(1), Pushed::Lead));
        queue.close();
        assert!(matches!(queue.push(2), Pushed::Closed(2)));
        assert_eq!(taken(&queue), [1], "queued jobs are still run");
        let mut batch = Vec::new();
        assert_eq!(
            queue.take(&mut batch, 10, None),
            Taken::Closed,
            "then the writer stops"
        );
    }

    #[test]
    fn an_idle_writer_wakes_at_its_limit_or_when_nudged() {
        let queue = Arc::new(Queue::<u32>::new());
        let mut batch = Vec::new();
        let limit = Duration::from_millis(5);
        let started = std::time::Instant::now();
        assert_eq!(queue.take(&mut batch, 10, Some(limit)), Taken::Idle);
        assert!(started.elapsed() >= limit);
        let writer = std::thread::spawn({
            let queue = queue.clone();
            move || queue.take(&mut Vec::new(), 10, None)
        });
        while !queue.lock().idle {
            std::thread::yield_now();
        }
        queue.nudge();
        assert_eq!(writer.join().unwrap(), Taken::Idle);
        queue.nudge();
        assert_eq!(
            queue.take(&mut batch, 10, None),
            Taken::Idle,
            "a nudge while busy is kept for the next wait"
        );
    }
}
