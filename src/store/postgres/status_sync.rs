//! The status cache on PostgreSQL, where several nodes change invites: a status read the
//! node has already made is answered from memory ([`InviteCache`]) once the node has
//! *synced*, and a read never answers older than a change committed before it began, on
//! any node or by any client of the database.
//!
//! - Every change of an invite notifies (`invite_changed`, a trigger of migration 0009:
//!   `pg_notify` with the invite's id, on every UPDATE and DELETE of the table). So every
//!   writer is covered by construction: this node, another node, the command line, psql.
//! - Each node keeps one connection that `LISTEN`s, and takes each notification off it in
//!   order: the invite's entry goes ([`InviteCache::changed`]).
//! - A *sync* is a protocol `Sync` message on that connection. PostgreSQL answers it with
//!   `ReadyForQuery`, and an idle backend sends every notification signalled to it so far
//!   before that (postgres.c, "so the client sees them before ReadyForQuery"). A commit
//!   signals the listeners before it returns, so once a sync *sent after* a commit has
//!   come back, that commit's notifications have been taken off.
//! - A read of a kept invite therefore waits for a sync sent after it began, then looks
//!   again. One sync is in flight at a time and serves every read that arrived before it
//!   was sent: the cost of a batch of reads is one `Sync`, not a query.
//! - A read that misses takes a ticket before it reads the table, and its record is kept
//!   only if no notification came meanwhile (the read may have seen the old row).
//! - While the connection is down nothing is answered from memory; when it is back (it
//!   reconnects by itself) everything kept is dropped, since notifications were missed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::time::Duration;

use futures_util::future::poll_fn;
use tokio::sync::{watch, Notify};
use tokio_postgres::{AsyncMessage, Config, NoTls};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::domain::{InviteId, SiteId};
use crate::store::invite_cache::{self, InviteCache, Ticket};
use crate::store::InviteRecord;

/// The channel the `invite_changed` trigger notifies on (migration 0009).
const CHANNEL: &str = "agegate_invite_changed";
/// The longest a read waits for a sync before it reads the table instead.
const SYNC_WAIT: Duration = Duration::from_secs(1);
/// Pause before connecting again after a connection that was listening failed; it
/// doubles after every attempt that did not get as far, up to [`RECONNECT_AT_MOST`], so
/// that a database down for minutes is not asked (and logged about) twice a second.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);
const RECONNECT_AT_MOST: Duration = Duration::from_secs(8);
/// Pause before trying again on a connection that did not hear its own notification.
const DEAF_RETRY: Duration = Duration::from_secs(60);
/// A node's probe: the payload it notifies itself with after `LISTEN`, and a token.
const PROBE: &str = "agegate-probe ";

/// What the listening connection has done, for the reads waiting on it.
#[derive(Clone, Copy, Default)]
struct Synced {
    /// Whether it is listening, and everything kept dates from after it began to.
    up: bool,
    /// The last sync sent, and the last one back.
    sent: u64,
    done: u64,
}

/// What the reads and the listening task share.
struct Shared {
    cache: InviteCache,
    synced: watch::Sender<Synced>,
    /// The highest sync a read waits for; the listener sends syncs until it is done.
    wanted: AtomicU64,
    wake: Notify,
    /// The token of this node's probe, and whether the connection has heard it.
    probe: AtomicU64,
    probe_heard: AtomicBool,
}

/// The status cache of one node; its listening task ends when this is dropped.
pub struct StatusSync {
    shared: Arc<Shared>,
    /// The connection's settings until the listener starts, at the first status read (a
    /// command-line run never makes one).
    config: Mutex<Option<Config>>,
    started: Once,
    stop: CancellationToken,
    _stop: DropGuard,
}

impl StatusSync {
    /// Listens on a connection of its own, made from `config`, from the first status
    /// read on.
    pub fn new(config: Config) -> Self {
        let stop = CancellationToken::new();
        Self {
            shared: Arc::new(Shared {
                cache: InviteCache::new(invite_cache::CAPACITY),
                synced: watch::Sender::new(Synced::default()),
                wanted: AtomicU64::new(0),
                wake: Notify::new(),
                probe: AtomicU64::new(0),
                probe_heard: AtomicBool::new(false),
            }),
            config: Mutex::new(Some(config)),
            started: Once::new(),
            _stop: stop.clone().drop_guard(),
            stop,
        }
    }

    fn start(&self) {
        self.started.call_once(|| {
            let taken = self
                .config
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let Some(config) = taken else { return };
            let (shared, stop) = (self.shared.clone(), self.stop.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = listen(shared, config) => {}
                }
            });
        });
    }

    /// The record of `id` for `site` if one is kept, after a sync sent since this call
    /// began has come back; `None` (read the table) otherwise.
    pub async fn cached(&self, site: SiteId, id: &InviteId) -> Option<InviteRecord> {
        self.shared.cached(site, id).await
    }

    /// Before a read of the table: see [`Self::fill`].
    pub fn ticket(&self) -> Ticket {
        self.start();
        self.shared.cache.ticket()
    }

    /// Keeps `record`, read after `ticket` was taken, if no change was notified since.
    pub fn fill(&self, ticket: Ticket, record: InviteRecord) {
        self.shared.cache.fill(ticket, record);
    }
}

impl Shared {
    async fn cached(&self, site: SiteId, id: &InviteId) -> Option<InviteRecord> {
        if !self.cache.holds(site, id) {
            return None;
        }
        let target = {
            let now = self.synced.borrow();
            if !now.up {
                return None;
            }
            now.sent + 1
        };
        self.wanted.fetch_max(target, Ordering::AcqRel);
        self.wake.notify_one();
        let mut rx = self.synced.subscribe();
        let back = tokio::time::timeout(SYNC_WAIT, rx.wait_for(|s| s.done >= target || !s.up));
        match back.await {
            Ok(Ok(s)) if s.up => {}
            _ => return None,
        }
        self.cache.peek(site, id)
    }

    fn notified(&self, payload: &str) {
        if let Some(token) = payload.strip_prefix(PROBE) {
            // A node checking that it hears its own notifications; another's is no change.
            if token.parse() == Ok(self.probe.load(Ordering::Acquire)) {
                self.probe_heard.store(true, Ordering::Release);
            }
            return;
        }
        match InviteId::parse(payload) {
            Some(id) => self.cache.changed(&id),
            // Not an id (a client's own NOTIFY on the channel): trust nothing kept.
            None => self.cache.external_change(),
        }
    }
}

/// Connects, listens and syncs on demand, again after every failure.
async fn listen(shared: Arc<Shared>, mut config: Config) {
    if config.get_application_name().is_none_or(|n| n == "agegate") {
        config.application_name("agegate-listener");
    }
    let mut pause = RECONNECT_AFTER;
    loop {
        let ended = match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let on_messages = shared.clone();
                // Notifications are applied as they arrive, in order, before anything
                // after them on the connection (a sync's answer) is handed on.
                let messages = async move {
                    loop {
                        match poll_fn(|cx| connection.poll_message(cx)).await {
                            Some(Ok(AsyncMessage::Notification(n))) => {
                                on_messages.notified(n.payload())
                            }
                            Some(Ok(_)) => {}
                            Some(Err(e)) => {
                                break tracing::warn!(error = %e, "status sync: connection lost")
                            }
                            None => break,
                        }
                    }
                };
                tokio::select! {
                    () = messages => Ended::Lost,
                    ended = serve_syncs(&shared, &client) => ended,
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "status sync: cannot connect; reads go to the table");
                Ended::Lost
            }
        };
        let mut was_up = false;
        shared
            .synced
            .send_modify(|s| was_up = std::mem::take(&mut s.up));
        pause = next_pause(pause, was_up);
        tokio::time::sleep(match ended {
            Ended::Lost => pause,
            Ended::Deaf => DEAF_RETRY,
        })
        .await;
    }
}

/// The pause before the next attempt: the first one after a connection that was
/// listening, twice the last one (at most [`RECONNECT_AT_MOST`]) after one that was not.
fn next_pause(last: Duration, was_up: bool) -> Duration {
    if was_up {
        RECONNECT_AFTER
    } else {
        (last * 2).min(RECONNECT_AT_MOST)
    }
}

enum Ended {
    /// The connection failed.
    Lost,
    /// It does not hear its own notifications (a pooler in transaction mode passes
    /// `LISTEN` to one server connection and the rest elsewhere): nothing can be kept.
    Deaf,
}

/// Listens, checks that it hears, drops what was kept, then sends syncs while reads
/// want them. Returns when the connection fails.
async fn serve_syncs(sync: &Shared, client: &tokio_postgres::Client) -> Ended {
    let token: u64 = rand::random();
    sync.probe.store(token, Ordering::Release);
    sync.probe_heard.store(false, Ordering::Release);
    let listen = format!("LISTEN {CHANNEL}; NOTIFY {CHANNEL}, '{PROBE}{token}'");
    // A session hears its own notifications before its statement's ReadyForQuery.
    if let Err(e) = client.batch_execute(&listen).await {
        tracing::warn!(error = %e, "status sync: LISTEN failed");
        return Ended::Lost;
    }
    if !sync.probe_heard.load(Ordering::Acquire) {
        tracing::warn!(
            "status sync: the connection does not hear its own notifications (a pooler in \
             transaction mode?); status reads go to the table"
        );
        return Ended::Deaf;
    }
    // Changes made before LISTEN took effect were not notified here.
    sync.cache.external_change();
    sync.synced.send_modify(|s| s.up = true);
    loop {
        let wake = sync.wake.notified();
        let sent = sync.synced.borrow().sent;
        if sync.wanted.load(Ordering::Acquire) <= sent {
            wake.await;
            continue;
        }
        // Published before the sync is written: a read that sees it waits for the next.
        sync.synced.send_modify(|s| s.sent = sent + 1);
        // A sync that hangs (a network cut without a reset) ends the connection, so that
        // reads go to the table at once rather than after their own wait.
        match tokio::time::timeout(SYNC_WAIT, client.check_connection()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "status sync: sync failed");
                return Ended::Lost;
            }
            Err(_) => {
                tracing::warn!("status sync: no answer to a sync; reconnecting");
                return Ended::Lost;
            }
        }
        sync.synced.send_modify(|s| s.done = sent + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnecting_backs_off_while_the_database_stays_away_and_starts_over_after_it_was_up() {
        let mut pause = RECONNECT_AFTER;
        let mut seen = Vec::new();
        for _ in 0..6 {
            pause = next_pause(pause, false);
            seen.push(pause.as_millis());
        }
        assert_eq!(seen, [1000, 2000, 4000, 8000, 8000, 8000]);
        assert_eq!(next_pause(pause, true), RECONNECT_AFTER);
    }
}
