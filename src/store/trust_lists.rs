//! The last good copy of each signed trust list (docs/trust.md#where-trust-anchors-come-from):
//! every node keeps what it verified here, so a node whose source is down starts from it
//! and all nodes sharing a database agree. A copy is never replaced by an older one.

use super::rows::Columns;
use super::StoreResult;
use crate::clock::UnixTime;

/// A verified list, as fetched (its bytes are checked again whenever they are read back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredList {
    /// What kind of list (`eu-av-trusted-list`, `eudi-pid-lote`, `mdl-lote`, `mdl-vical`).
    pub list: String,
    /// Its file path or URL.
    pub location: String,
    pub body: Vec<u8>,
    pub sequence: u64,
    pub issued: i64,
    pub next_update: Option<i64>,
    /// When a node last fetched and verified it.
    pub last_success: UnixTime,
}

/// The columns [`stored_list`] reads, in order.
pub(crate) const STORED_LIST_COLUMNS: &str =
    "list, location, body, sequence, issued, next_update, last_success";

pub(crate) fn stored_list(row: &dyn Columns) -> StoreResult<StoredList> {
    Ok(StoredList {
        list: row.text(0)?,
        location: row.text(1)?,
        body: row.bytes(2)?,
        sequence: u64::try_from(row.int(3)?).unwrap_or(0),
        issued: row.int(4)?,
        next_update: row.opt_int(5)?,
        last_success: row.int(6)?,
    })
}

/// A sequence number as the databases' 64-bit signed integer.
pub(crate) fn sequence_column(sequence: u64) -> i64 {
    i64::try_from(sequence).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
pub trait TrustListStore: Send + Sync + 'static {
    /// The copy kept of `list` from `location`, if any.
    async fn trust_list(&self, list: &str, location: &str) -> StoreResult<Option<StoredList>>;

    /// Keeps `copy` unless the one kept has a higher sequence number (then it stays: the
    /// database never goes backwards, whichever node writes).
    async fn save_trust_list(&self, copy: StoredList) -> StoreResult<()>;
}
