//! Batching of the hot single statements: what callers ask while one statement is at
//! PostgreSQL goes to it together as the next one. For creates this is group commit — one
//! multi-row INSERT, one transaction, one WAL flush for every invite in it, as the SQLite
//! backend's writer does — and nobody is answered before the commit that holds their
//! invite returned, so a 200 still means stored durably. For reads by key it is one
//! `= ANY($1)` lookup instead of one statement each. On one machine most of a statement's
//! cost is not the work but the round trip: the wake-ups of two processes and
//! PostgreSQL's per-statement overhead; a batch pays them once.
//!
//! Each kind runs on one task with a connection of its own (a commit waits for the disk,
//! reads should not queue behind it), taken from the pool and replaced when it breaks.
//! The task ends when its [`Batcher`] is dropped.

use deadpool_postgres::{Object, Pool};
use tokio::sync::{mpsc, oneshot};

use crate::store::{StoreError, StoreResult};

/// The most requests in one statement; a batch rarely reaches it (one per waiting request).
const MAX_BATCH: usize = 512;

/// One kind of statement that can serve many requests at once.
#[async_trait::async_trait]
pub trait Batch: Send + 'static {
    type In: Send + Sync + 'static;
    type Out: Send + 'static;

    /// All items in one statement: one result per item, in the items' order.
    async fn run_all(
        client: &Object,
        items: &[Self::In],
    ) -> StoreResult<Vec<StoreResult<Self::Out>>>;

    /// One item on its own: when the whole statement failed for a reason of the data,
    /// each caller then hears only of its own item.
    async fn run_one(client: &Object, item: &Self::In) -> StoreResult<Self::Out>;
}

/// [`Batch::run_all`], or everyone's error when PostgreSQL is away, or each item on its
/// own when something in the data failed the whole statement.
async fn run<B: Batch>(client: &Object, items: &[B::In]) -> Vec<StoreResult<B::Out>> {
    match B::run_all(client, items).await {
        Ok(results) => results,
        Err(e @ (StoreError::Unavailable(_) | StoreError::Closed)) => {
            items.iter().map(|_| Err(e.clone())).collect()
        }
        Err(_) => {
            let mut results = Vec::with_capacity(items.len());
            for item in items {
                results.push(B::run_one(client, item).await);
            }
            results
        }
    }
}

type Pending<B> = (
    <B as Batch>::In,
    oneshot::Sender<StoreResult<<B as Batch>::Out>>,
);

pub struct Batcher<B: Batch> {
    queue: mpsc::UnboundedSender<Pending<B>>,
}

impl<B: Batch> Batcher<B> {
    /// Starts the task that runs the queued requests (on the current runtime). One batch
    /// in flight per kind: with two, batches get smaller and each pays its own round trip
    /// or flush (measured: creates 23 k → 20 k req/s, reads 43 k → 41 k; again on
    /// 2026-11-27, two in flight on two connections: creates 0.893×, BENCHMARKS.md).
    pub fn start(pool: Pool) -> Self {
        let (queue, waiting) = mpsc::unbounded_channel();
        tokio::spawn(run_batches::<B>(pool, waiting));
        Self { queue }
    }

    /// Queues `item` for the next batch and waits for its result.
    pub async fn call(&self, item: B::In) -> StoreResult<B::Out> {
        let (done, answer) = oneshot::channel();
        self.queue
            .send((item, done))
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

/// Takes what has queued up (at least one), runs it, answers; until the queue closes.
async fn run_batches<B: Batch>(pool: Pool, mut waiting: mpsc::UnboundedReceiver<Pending<B>>) {
    let mut connection: Option<Object> = None;
    let mut batch = Vec::new();
    while waiting.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (items, answers): (Vec<_>, Vec<_>) = batch.drain(..).unzip();
        if connection.as_ref().is_none_or(|c| c.is_closed()) {
            connection = match pool.get().await {
                Ok(c) => Some(c),
                Err(e) => {
                    let e = StoreError::from(e);
                    answers
                        .into_iter()
                        .for_each(|a| drop(a.send(Err(e.clone()))));
                    continue;
                }
            };
        }
        let Some(client) = connection.as_ref() else {
            continue;
        };
        let results = run::<B>(client, &items).await;
        debug_assert_eq!(results.len(), answers.len());
        // A caller may have gone (its request was dropped); what it asked is done anyway.
        for (answer, result) in answers.into_iter().zip(results) {
            let _ = answer.send(result);
        }
    }
}
