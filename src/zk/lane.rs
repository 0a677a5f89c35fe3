//! The lane where wallet answers taken for proofs are decoded (docs/zk.md#the-proof-pool):
//! one thread under `SCHED_IDLE`, as the proof checkers, running its own single-threaded
//! runtime. An answer of 320 KB or more costs milliseconds of CPU before its proof is
//! checked (the link's form decoded, the JWE decrypted, base64 and CBOR taken apart, the
//! issuer's signature checked); on the runtime's workers that held status reads queued
//! behind it: with the pool busy their p99 was 1.24–1.77 ms at 2,000 reads a second, 0.91
//! with this lane, against 0.3 idle (`bench/zk_phases.sh`). Here that work runs on CPU
//! time nothing else wants, as the check that follows it does. Plain answers stay on the
//! workers: they are small, and under `SCHED_IDLE` a busy server would starve them. (The
//! DC API's JSON body is still parsed where it arrives, by its extractor.)

use std::future::Future;
use tokio::runtime::{Builder, Handle};

/// A handle on the lane; cloning it shares the one thread, which ends with the last handle.
#[derive(Debug, Clone)]
pub struct ProofLane {
    handle: Handle,
    /// Never sent on: the thread runs until every handle, and so every sender, is gone.
    _alive: tokio::sync::mpsc::Sender<()>,
}

/// The work panicked; the lane runs on (a task's panic ends the task, not the runtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LanePanicked;

impl ProofLane {
    /// Starts the lane's thread, `zk-lane`.
    pub fn start() -> std::io::Result<Self> {
        let runtime = Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (alive, mut ended) = tokio::sync::mpsc::channel::<()>(1);
        std::thread::Builder::new()
            .name("zk-lane".into())
            .spawn(move || {
                super::pool::run_when_idle();
                // Tasks are spawned onto it through `handle` and run while this waits.
                runtime.block_on(async move { ended.recv().await });
            })?;
        Ok(Self {
            handle,
            _alive: alive,
        })
    }

    /// Runs `work`, pure CPU on an answer's bytes, on `lane` when there is one, here
    /// otherwise: where an answer is decoded.
    pub async fn decode_on<R, F>(lane: Option<&ProofLane>, work: F) -> Result<R, LanePanicked>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match lane {
            None => Ok(work()),
            Some(lane) => lane.run(async move { work() }).await,
        }
    }

    /// Runs `work` on the lane and awaits its output.
    pub async fn run<F>(&self, work: F) -> Result<F::Output, LanePanicked>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(work).await.map_err(|_| LanePanicked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_the_lane_thread_and_a_panic_leaves_the_lane_running() {
        let lane = ProofLane::start().unwrap();
        let name = lane
            .run(async { std::thread::current().name().map(str::to_owned) })
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("zk-lane"));
        let panicked = lane.run(async { panic!("a bug in an answer's handling") });
        assert_eq!(panicked.await, Err::<(), _>(LanePanicked));
        assert_eq!(lane.run(async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn the_lane_thread_ends_with_its_last_handle() {
        let lane = ProofLane::start().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        // Held by a task on the lane: dropped when its runtime is, as the thread ends.
        lane.run(async move {
            let task = tokio::spawn(async move {
                std::future::pending::<()>().await;
                drop(tx)
            });
            drop(task);
        })
        .await
        .unwrap();
        drop(lane);
        let ended = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(ended, Err(std::sync::mpsc::RecvTimeoutError::Disconnected));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_lane_runs_under_sched_idle() {
        use thread_priority::unix::{
            thread_schedule_policy, NormalThreadSchedulePolicy, ThreadSchedulePolicy,
        };
        let lane = ProofLane::start().unwrap();
        let policy = lane.run(async { thread_schedule_policy() }).await.unwrap();
        assert_eq!(
            policy.unwrap(),
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle)
        );
    }
}
