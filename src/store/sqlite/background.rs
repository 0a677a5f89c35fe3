//! The writer and checkpoint threads yield the CPU to the threads that answer requests.
//!
//! On Linux they run under `SCHED_BATCH` (sched(7)): the same share of CPU time as any
//! other thread, but woken (a job queued, an fsync done, a snapshot to end) such a thread
//! does not preempt the one running on its CPU; it runs when that one waits or its time
//! slice ends. With a CPU to spare nothing changes: the woken thread gets the idle CPU at
//! once. With every CPU busy, the runtime's threads finish the requests in hand first,
//! and the writer, coming a little later, finds more jobs queued and commits them at
//! once, so a commit's fixed cost (the WAL's fsync, the kernel's block requests) is
//! shared by more creates. Measured on one core (BENCHMARKS.md, `bench/ab.sh`, 10
//! pairs): mixed reads and creates 1.206× (10 of 10 pairs faster), creates from 8
//! clients 1.118×, from 64 clients 1.032×, status reads alone 1.014×; the mixed
//! workload's p99 (its creates') rose from 8–17 ms to about 20 ms.
//!
//! Elsewhere (or where the call is refused) the threads keep the default policy.

/// Puts the calling thread under `SCHED_BATCH`, at its current nice value.
pub fn yield_to_requests() {
    if let Err(e) = set_batch_policy() {
        tracing::debug!(error = %e, "the thread keeps the default scheduling policy");
    }
}

#[cfg(target_os = "linux")]
fn set_batch_policy() -> Result<(), String> {
    use thread_priority::unix::{
        set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
        ThreadSchedulePolicy,
    };
    use thread_priority::{ThreadPriority, ThreadPriorityValue};
    let batch = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch);
    let nice = rustix::process::getpriority_process(None).map_err(|e| e.to_string())?;
    // The crate sets a nice value along with the policy, given on its own 0–99 scale:
    // the value that maps to the thread's nice value leaves that unchanged.
    let priority = (*ThreadPriorityValue::MIN..=*ThreadPriorityValue::MAX)
        .filter_map(|p| ThreadPriorityValue::try_from(p).ok())
        .map(ThreadPriority::Crossplatform)
        .find(|p| p.to_posix(batch).ok() == Some(nice))
        .ok_or_else(|| format!("no priority value maps to nice {nice}"))?;
    set_thread_priority_and_policy(thread_native_id(), priority, batch).map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn set_batch_policy() -> Result<(), String> {
    Err("SCHED_BATCH is Linux's".into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use thread_priority::unix::{
        thread_schedule_policy, NormalThreadSchedulePolicy, ThreadSchedulePolicy,
    };

    #[test]
    fn a_thread_that_yields_runs_as_batch_at_its_nice_value() {
        std::thread::spawn(|| {
            // A nice value of its own (raising it needs no privilege) that must stay.
            let nice = rustix::process::getpriority_process(None).unwrap() + 3;
            rustix::process::setpriority_process(None, nice).unwrap();
            set_batch_policy().unwrap();
            assert_eq!(
                thread_schedule_policy().unwrap(),
                ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Batch)
            );
            assert_eq!(rustix::process::getpriority_process(None).unwrap(), nice);
        })
        .join()
        .unwrap();
    }
}
