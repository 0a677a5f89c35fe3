//! The last good copy of each credential status list (docs/credential-status.md): every
//! node keeps what it fetched and verified here, so the nodes sharing a database share
//! one copy (a list is fetched once for all of them within its `ttl`), and a node whose
//! list host is down still reads the list. A copy is never replaced by an older one.

use super::rows::Columns;
use super::StoreResult;
use crate::clock::UnixTime;

/// A status list or identifier list token as fetched (checked again whenever it is
/// read back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredStatusList {
    /// `status_list` or `identifier_list`.
    pub form: String,
    pub uri: String,
    pub body: Vec<u8>,
    /// The token's `iat`.
    pub iat: i64,
    /// The token's `exp`, if it has one.
    pub exp: Option<i64>,
    /// When a node last fetched it.
    pub fetched_at: UnixTime,
}

/// The columns [`stored_status_list`] reads, in order.
pub(crate) const STORED_STATUS_LIST_COLUMNS: &str = "form, uri, body, iat, exp, fetched_at";

pub(crate) fn stored_status_list(row: &dyn Columns) -> StoreResult<StoredStatusList> {
    Ok(StoredStatusList {
        form: row.text(0)?,
        uri: row.text(1)?,
        body: row.bytes(2)?,
        iat: row.int(3)?,
        exp: row.opt_int(4)?,
        fetched_at: row.int(5)?,
    })
}

#[async_trait::async_trait]
pub trait StatusListStore: Send + Sync + 'static {
    /// The copy kept of the `form` list at `uri`, if any.
    async fn status_list(&self, form: &str, uri: &str) -> StoreResult<Option<StoredStatusList>>;

    /// Keeps `copy` unless the one kept was issued later (then it stays: the database
    /// never goes backwards, whichever node writes).
    async fn save_status_list(&self, copy: StoredStatusList) -> StoreResult<()>;

    /// Every copy kept, by uri (for `trust show`).
    async fn status_lists(&self) -> StoreResult<Vec<StoredStatusList>>;
}
