//! A bounded pool of threads for proof checks: a check takes a core for a third of a
//! second, so they run off the async runtime, at most `workers` at once with as many
//! waiting; beyond that the caller is told the pool is full (503 with Retry-After).
//!
//! On Linux the workers run under `SCHED_IDLE` (sched(7)): only on CPU time that no other
//! thread wants, so a busy pool leaves the routes that answer people their latency
//! (BENCHMARKS.md#measured-design-choices, `bench/zk.sh`: with the pool full on one core
//! the gateway page's p99 was 2.09× idle under the default policy, 1.06× under this one).
//! That alone is not enough: the scheduler picks who runs only at its own events, and a
//! request thread woken behind a check it cannot yet displace waited for the next one, up
//! to a tick (4 ms at 250 Hz). So a check offers its CPU back at its pause points
//! ([`agegate_zk::with_pause_hook`], [`offer_cpu`]): status p99 with the pool full went
//! from 2.4–3.1× idle to 0.98× (`bench/zk_phases.sh`).

//!
//! A check that panics ends its worker thread; the worker's guard starts a fresh one in
//! its place while the panic unwinds, so the pool stays at full strength, and the check's
//! caller is told it failed (a 500), never that the pool is full.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Debug)]
pub struct ZkPool {
    jobs: Sender<Job>,
    workers: usize,
    /// Checks running or waiting; at most twice `workers`. Counted apart from the queue,
    /// so a check waits whether or not a worker has yet taken the one before it.
    in_flight: Arc<AtomicUsize>,
    /// The test hook's checks still to panic (see [`ZkPool::panic_next`]).
    panics: Arc<AtomicU32>,
}

/// A check's place in the pool, given back when it ends, also by a panic.
struct Place(Arc<AtomicUsize>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The pool and its queue are full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolFull;

/// Why a check gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunError {
    /// Every worker was busy and as many checks waited; nothing ran.
    Full,
    /// The check panicked; its worker was replaced.
    Panicked,
}

impl From<PoolFull> for RunError {
    fn from(_: PoolFull) -> Self {
        RunError::Full
    }
}

impl ZkPool {
    /// `workers` threads (at least one) and a queue as long.
    pub fn new(workers: usize) -> Self {
        let workers = workers.max(1);
        // Never full: `in_flight` admits at most this many.
        let (jobs, rx) = crossbeam_channel::bounded::<Job>(2 * workers);
        let panics = Arc::new(AtomicU32::new(0));
        for i in 0..workers {
            // At start a failure to spawn is fatal, as any other resource the server lacks.
            spawn_worker(i, rx.clone(), panics.clone()).expect("spawn a ZK worker thread");
        }
        Self {
            jobs,
            workers,
            in_flight: Arc::new(AtomicUsize::new(0)),
            panics,
        }
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether every worker is busy and the queue is full: a check submitted now would
    /// be refused. Read before an answer's body is, to turn a proof away unread.
    pub fn is_full(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) >= 2 * self.workers
    }

    /// Test hook: the next `n` jobs panic in their worker instead of running. Reached only
    /// through `AGEGATE_TEST_ZK_PANICS`, which debug builds alone read (`crate::zk::Zk::new`).
    pub fn panic_next(&self, n: u32) {
        self.panics.store(n, Ordering::SeqCst);
    }

    /// Queues `f` for a worker, or `PoolFull` at once when every worker is busy and the
    /// queue is full; the receiver yields its result, or fails if `f` panicked.
    pub fn submit<R, F>(&self, f: F) -> Result<tokio::sync::oneshot::Receiver<R>, PoolFull>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let capacity = 2 * self.workers;
        self.in_flight
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < capacity).then_some(n + 1)
            })
            .map_err(|_| PoolFull)?;
        let place = Place(self.in_flight.clone());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let result = f();
            // Free before the result is seen, so its caller may at once send another.
            drop(place);
            let _ = tx.send(result);
        });
        match self.jobs.try_send(job) {
            Ok(()) => Ok(rx),
            // Dropping the job gave its place back.
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => Err(PoolFull),
        }
    }

    /// Runs `f` on a worker and awaits its result (see [`ZkPool::submit`]).
    pub async fn run<R, F>(&self, f: F) -> Result<R, RunError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        // The sender is dropped unsent only while its job unwinds.
        self.submit(f)?.await.map_err(|_| RunError::Panicked)
    }
}

/// Starts worker `i` on the shared queue.
fn spawn_worker(i: usize, rx: Receiver<Job>, panics: Arc<AtomicU32>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("zk-{i}"))
        .spawn(move || {
            let _replace = Replacement {
                i,
                rx: rx.clone(),
                panics: panics.clone(),
            };
            run_when_idle();
            while let Ok(job) = rx.recv() {
                let hooked = panics
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if hooked {
                    // Unwinding drops the job unrun, as a panic inside the check would.
                    panic!("ZK test hook: a proof check panics (AGEGATE_TEST_ZK_PANICS)");
                }
                agegate_zk::with_pause_hook(offer_cpu, job);
            }
        })
        .map(drop)
}

/// Time between two offers of the CPU: a request behind a check waits at most this and
/// one stretch between pause points (p99 ~0.15 ms); offering at every point costs the
/// check 2–4 % in system calls, this about 1 %.
const OFFER_EVERY: Duration = Duration::from_micros(50);

/// A check's pause hook: lets any thread waiting for this core run (`sched_yield`), at most
/// every [`OFFER_EVERY`]; with nothing waiting it returns at once.
fn offer_cpu() {
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    if LAST
        .with(Cell::get)
        .is_none_or(|last| now - last >= OFFER_EVERY)
    {
        std::thread::yield_now();
        LAST.with(|l| l.set(Some(now)));
    }
}

/// A worker's guard: dropped while its thread unwinds from a panic, it starts the worker
/// that takes the thread's place. (A thread that ends because the pool is gone does not.)
struct Replacement {
    i: usize,
    rx: Receiver<Job>,
    panics: Arc<AtomicU32>,
}

impl Drop for Replacement {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        tracing::error!(
            worker = self.i,
            "a ZK proof check panicked; its worker is replaced"
        );
        let spawned = spawn_worker(self.i, self.rx.clone(), self.panics.clone());
        if let Err(e) = spawned {
            // Nothing more to do from a dying thread: the pool is a worker short.
            tracing::error!(error = %e, "could not replace a ZK worker");
        }
    }
}

/// Puts the calling thread under `SCHED_IDLE`; elsewhere, or where the call is refused,
/// it keeps the default policy.
pub(super) fn run_when_idle() {
    if let Err(e) = idle_policy() {
        tracing::debug!(error = %e, "the ZK worker keeps the default scheduling policy");
    }
}

#[cfg(target_os = "linux")]
fn idle_policy() -> Result<(), String> {
    use thread_priority::unix::{
        set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
        ThreadSchedulePolicy,
    };
    let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
    set_thread_priority_and_policy(
        thread_native_id(),
        thread_priority::ThreadPriority::Min,
        idle,
    )
    .map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn idle_policy() -> Result<(), String> {
    Err("SCHED_IDLE is Linux's".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn workers_run_under_sched_idle() {
        use thread_priority::unix::{
            thread_schedule_policy, NormalThreadSchedulePolicy, ThreadSchedulePolicy,
        };
        let pool = ZkPool::new(1);
        let policy = pool.submit(thread_schedule_policy).unwrap();
        let policy = policy.blocking_recv().unwrap().unwrap();
        assert_eq!(
            policy,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle)
        );
    }

    #[tokio::test]
    async fn a_full_pool_refuses_at_once_and_a_free_one_runs() {
        let pool = ZkPool::new(1);
        let (release, wait) = crossbeam_channel::bounded::<()>(0);
        let (started_tx, started) = crossbeam_channel::bounded::<()>(1);
        let w = wait.clone();
        let busy = pool
            .submit(move || {
                started_tx.send(()).unwrap();
                w.recv().unwrap();
                1
            })
            .unwrap();
        started.recv().unwrap();
        let queued = pool
            .submit(move || wait.recv().map(|_| 2).unwrap())
            .unwrap();
        assert_eq!(
            pool.submit(|| 3).err(),
            Some(PoolFull),
            "worker busy, queue full"
        );
        release.send(()).unwrap();
        release.send(()).unwrap();
        assert_eq!(busy.await.unwrap(), 1);
        assert_eq!(queued.await.unwrap(), 2);
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }

    /// Holds `n` jobs running at once on `pool`, each started before any is released;
    /// returns what releases them and their receivers.
    fn hold(pool: &ZkPool, n: usize) -> (crossbeam_channel::Sender<()>, Vec<Receiver<usize>>) {
        let (release, wait) = crossbeam_channel::unbounded::<()>();
        let (started_tx, started) = crossbeam_channel::unbounded::<()>();
        let running = (0..n)
            .map(|i| {
                let (wait, started_tx) = (wait.clone(), started_tx.clone());
                pool.submit(move || {
                    started_tx.send(()).unwrap();
                    // Released when the sender is dropped.
                    let _ = wait.recv();
                    i
                })
                .unwrap()
            })
            .collect();
        for _ in 0..n {
            started
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("every worker takes a job at once");
        }
        (release, running)
    }

    type Receiver<T> = tokio::sync::oneshot::Receiver<T>;

    #[tokio::test]
    async fn a_check_that_panics_fails_alone_and_the_pool_keeps_its_full_strength() {
        let pool = ZkPool::new(2);
        // More panics than workers: without replacements no worker would be left.
        pool.panic_next(5);
        for _ in 0..5 {
            assert_eq!(pool.run(|| 1).await, Err(RunError::Panicked));
        }
        // Two checks run at once, two wait, the fifth is turned away: full strength.
        let (release, running) = hold(&pool, 2);
        let queued: Vec<_> = (0..2)
            .map(|i| pool.submit(move || 10 + i).unwrap())
            .collect();
        assert!(pool.is_full());
        assert_eq!(pool.submit(|| 0).err(), Some(PoolFull));
        drop(release);
        for (i, r) in running.into_iter().enumerate() {
            assert_eq!(r.await.unwrap(), i);
        }
        for (i, r) in queued.into_iter().enumerate() {
            assert_eq!(r.await.unwrap(), 10 + i);
        }
        assert!(!pool.is_full());
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }
}
