//! A bounded pool of threads for proof checks: a check takes a core for a third of a
//! second, so they run off the async runtime, at most `workers` at once with as many
//! waiting; beyond that the caller is told the pool is full (503 with Retry-After).
//!
//! On Linux the workers run under `SCHED_IDLE` (sched(7)): only on CPU time that no other
//! thread wants, so a busy pool leaves the routes that answer people their latency
//! (BENCHMARKS.md#measured-design-choices, `bench/zk.sh`: with the pool full on one core
//! the gateway page's p99 was 2.09× idle under the default policy, 1.06× under this one).

use crossbeam_channel::{Sender, TrySendError};

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Debug)]
pub struct ZkPool {
    jobs: Sender<Job>,
    workers: usize,
}

/// The pool and its queue are full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolFull;

impl ZkPool {
    /// `workers` threads (at least one) and a queue as long.
    pub fn new(workers: usize) -> Self {
        let workers = workers.max(1);
        let (jobs, rx) = crossbeam_channel::bounded::<Job>(workers);
        for i in 0..workers {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("zk-{i}"))
                .spawn(move || {
                    run_when_idle();
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                })
                .expect("spawn a ZK worker thread");
        }
        Self { jobs, workers }
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Queues `f` for a worker, or `PoolFull` at once when every worker is busy and the
    /// queue is full; the receiver yields its result.
    pub fn submit<R, F>(&self, f: F) -> Result<tokio::sync::oneshot::Receiver<R>, PoolFull>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        match self.jobs.try_send(job) {
            Ok(()) => Ok(rx),
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => Err(PoolFull),
        }
    }

    /// Runs `f` on a worker and awaits its result (see [`ZkPool::submit`]).
    pub async fn run<R, F>(&self, f: F) -> Result<R, PoolFull>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.submit(f)?.await.map_err(|_| PoolFull)
    }
}

/// Puts the calling thread under `SCHED_IDLE`; elsewhere, or where the call is refused,
/// it keeps the default policy.
fn run_when_idle() {
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
}
