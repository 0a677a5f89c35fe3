//! The application layer: the operations the edges share. The command line, the HTTP API
//! and the console call these; they call the domain rules, the store's capability traits
//! and the clock, and answer with typed errors each edge turns into its own words (an
//! exit message, a JSON error body, a console page). Nothing here knows HTTP or clap.
//!
//! The edges hold [`Services`], whose store is private to `app/`: they reach the database
//! only through the services of `app/` ([`Services::invites`], [`Services::sites`],
//! [`Services::receipts`], [`Services::overview`], [`Services::sessions`],
//! [`Services::accounts`], and the wallet flow's), and through [`HotReads`], the few
//! measured reads the API makes itself and nothing else (docs/invariants.md, rule 0).

pub mod accounts;
pub mod invites;
pub mod keys;
pub mod overview;
pub mod receipts;
pub mod sessions;
pub mod sites;
pub mod verification;
pub mod wallet_requests;

pub use sites::{create_site, CreatedSite, SiteError, SiteSettings};

use std::future::Future;
use std::sync::Arc;
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::domain::{InviteId, SiteId};
use crate::store::{
    CredentialRecord, DatabaseUrl, GatewayInvite, InviteRecord, Store, StoreResult,
};

/// The application's services over one database, clock and webhook worker.
#[derive(Clone)]
pub struct Services {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    /// Wakes this process's webhook worker after a change wrote or requeued an event
    /// (the command line's has no worker; another process's finds the event itself).
    deliveries: Arc<Notify>,
}

impl Services {
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, deliveries: Arc<Notify>) -> Self {
        Self {
            store,
            clock,
            deliveries,
        }
    }

    /// The services over the database `url` names, for one command of the command line:
    /// the system clock, and no webhook worker to wake (a running server's finds a
    /// requeued event itself).
    pub async fn open(url: &DatabaseUrl) -> StoreResult<Self> {
        let store = crate::store::open(url).await?;
        let clock = Arc::new(crate::clock::SystemClock);
        Ok(Self::new(store, clock, Arc::new(Notify::new())))
    }

    /// The reads the edges make themselves (see [`HotReads`]).
    pub fn hot_reads(&self) -> HotReads {
        HotReads {
            store: self.store.clone(),
        }
    }
}

/// The only store calls an edge makes itself: reads that decide nothing, on the paths
/// measured in BENCHMARKS.md, where a service in between would add nothing but a layer.
/// The status read (`invite`) and each request's credential (`credential`, behind the
/// API's cache) are the API's hottest paths; the gateway page's invite
/// (`gateway_invite`) has its latency measured by `bench/zk.sh`; `/healthz` asks the
/// database itself (`ping`). Each hands back the store's own future: no copy, no
/// allocation and no pointer more than calling the store.
#[derive(Clone)]
pub struct HotReads {
    store: Arc<dyn Store>,
}

impl HotReads {
    /// The site's invite (`GET /v1/website/{siteId}/invite/{inviteId}`).
    pub fn invite<'a>(
        &'a self,
        site: SiteId,
        id: &'a InviteId,
    ) -> impl Future<Output = StoreResult<Option<InviteRecord>>> + Send + 'a {
        self.store.invite(site, id)
    }

    /// The credential named `username`, read when the API's cache does not hold it.
    pub fn credential<'a>(
        &'a self,
        username: &'a str,
    ) -> impl Future<Output = StoreResult<Option<CredentialRecord>>> + Send + 'a {
        self.store.credential(username)
    }

    /// The invite of a gateway page, with what its site asks for.
    pub fn gateway_invite<'a>(
        &'a self,
        id: &'a InviteId,
    ) -> impl Future<Output = StoreResult<Option<GatewayInvite>>> + Send + 'a {
        self.store.gateway_invite(id)
    }

    /// Succeeds when the database accepts a write (`/healthz`).
    pub fn ping(&self) -> impl Future<Output = StoreResult<()>> + Send + '_ {
        self.store.ping()
    }
}
