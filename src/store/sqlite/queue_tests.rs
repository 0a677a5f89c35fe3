//! The queue's rules: who leads a batch, when the writer takes it, pacing.

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

fn queued(queue: &Queue<u32>, jobs: &[u32]) {
    for &job in jobs {
        let _ = queue.push(job);
    }
    queue.wake();
}

#[test]
fn only_small_batches_among_small_ones_right_after_the_last_one_are_paced() {
    let now = Instant::now();
    let just = Some(now - PACE / 3);
    let until = just.map(|t| t + PACE);
    assert_eq!(pace_until(just, 2, 3.0, now), until);
    assert_eq!(pace_until(just, PACED_BELOW - 1, 3.0, now), until);
    assert_eq!(pace_until(just, 1, 3.0, now), None, "a lone job");
    assert_eq!(
        pace_until(just, PACED_BELOW, 3.0, now),
        None,
        "a large batch"
    );
    assert_eq!(
        pace_until(just, 2, 10.0, now),
        until,
        "paced batches are larger"
    );
    assert_eq!(pace_until(just, 2, 30.0, now), None, "among large batches");
    assert_eq!(
        pace_until(Some(now - PACE), 2, 3.0, now),
        None,
        "the pace is past"
    );
    assert_eq!(pace_until(None, 2, 3.0, now), None, "no batch before");
}

#[test]
fn while_saturated_a_small_batch_right_after_another_waits_for_the_pace_and_takes_what_joined() {
    let queue = Queue::pacing_by(Saturation::fixed(true));
    queued(&queue, &[1, 2]);
    let before = Instant::now();
    assert_eq!(taken(&queue), [1, 2], "the first batch is not paced");
    queued(&queue, &[3, 4]);
    let batch = std::thread::scope(|s| {
        let writer = s.spawn(|| taken(&queue));
        let _ = queue.push(5);
        writer.join().unwrap()
    });
    assert!(before.elapsed() >= PACE, "{:?}", before.elapsed());
    assert!(batch.starts_with(&[3, 4]));
}

#[test]
fn with_a_cpu_to_spare_small_batches_are_not_paced() {
    let queue = Queue::pacing_by(Saturation::fixed(false));
    let before = Instant::now();
    for round in 0..20 {
        queued(&queue, &[round, round + 100]);
        assert_eq!(taken(&queue), [round, round + 100]);
    }
    // Paced, twenty batches would take 19 paces.
    assert!(before.elapsed() < PACE * 10, "{:?}", before.elapsed());
}

#[test]
fn only_a_batch_that_empties_the_queue_sets_the_pace() {
    let queue = Queue::new();
    queued(&queue, &[0, 1, 2, 3, 4]);
    let mut batch = Vec::new();
    assert_eq!(queue.take(&mut batch, 3, None), Taken::Jobs);
    assert_eq!(batch, [0, 1, 2]);
    assert_eq!(queue.lock().last_taken, None, "the rest follows unpaced");
    batch.clear();
    assert_eq!(queue.take(&mut batch, 3, None), Taken::Jobs);
    assert_eq!(batch, [3, 4]);
    assert!(queue.lock().last_taken.is_some());
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
