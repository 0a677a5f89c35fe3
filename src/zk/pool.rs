//! A bounded pool of threads for proof checks: a check takes a core for a third of a
//! second, so they run off the async runtime, at most `workers` at once with as many
//! waiting; beyond that the caller is told the pool is full (503 with Retry-After).

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

#[cfg(test)]
mod tests {
    use super::*;

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
