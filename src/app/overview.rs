//! What the operator reads about the deployment as a whole: the console's overview (the
//! daily tallies, the webhook backlog, how many sites) and, for `trust show` and the
//! practice statement, the trust lists and credential status lists kept in the database.

use std::ops::Range;
use std::sync::Arc;

use super::Services;
use crate::clock::UnixTime;
use crate::store::{StoreError, StoredStatusList, Tally};
use crate::trust::{refresh::Outcome, Fetcher, TrustFiles, TrustHandle};

/// The deployment's figures and trust material.
pub struct Overview<'a>(&'a Services);

impl Services {
    pub fn overview(&self) -> Overview<'_> {
        Overview(self)
    }
}

impl Overview<'_> {
    /// Every tally of the days in `days` (day numbers since the epoch).
    pub async fn tallies(&self, days: Range<i64>) -> Result<Vec<Tally>, StoreError> {
        self.0.store.tallies(days).await
    }

    /// Webhook events waiting to be delivered.
    pub async fn webhook_backlog(&self) -> Result<u64, StoreError> {
        self.0.store.webhook_backlog().await
    }

    /// How many sites there are.
    pub async fn site_count(&self) -> Result<usize, StoreError> {
        Ok(self.0.store.sites().await?.len())
    }

    /// The credential status lists kept in the database.
    pub async fn status_lists(&self) -> Result<Vec<StoredStatusList>, StoreError> {
        self.0.store.status_lists().await
    }

    /// The trust anchors and lists of `files`, lists fetched or taken from the database
    /// ([`TrustHandle::start`]).
    pub async fn trust(
        &self,
        files: TrustFiles,
        fetcher: &Fetcher,
        now: UnixTime,
    ) -> Result<(Arc<TrustHandle>, Vec<Outcome>), String> {
        TrustHandle::start(files, self.0.store.as_ref(), fetcher, now).await
    }
}
