//! SQL of the trust lists' last good copies (src/store/trust_lists.rs).

use rusqlite::params;

use super::{one, SqliteStore};
use crate::store::trust_lists::{sequence_column, stored_list, StoredList, STORED_LIST_COLUMNS};
use crate::store::{StoreResult, TrustListStore};

#[async_trait::async_trait]
impl TrustListStore for SqliteStore {
    async fn trust_list(&self, list: &str, location: &str) -> StoreResult<Option<StoredList>> {
        let (list, location) = (list.to_owned(), location.to_owned());
        self.pool
            .read(move |conn| {
                one(
                    conn,
                    &format!(
                        "SELECT {STORED_LIST_COLUMNS} FROM trust_lists
                         WHERE list = ?1 AND location = ?2"
                    ),
                    params![list, location],
                    stored_list,
                )
            })
            .await
    }

    async fn save_trust_list(&self, copy: StoredList) -> StoreResult<()> {
        self.pool
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO trust_lists
                         (list, location, body, sequence, issued, next_update, last_success)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (list, location) DO UPDATE SET
                         body = excluded.body, sequence = excluded.sequence,
                         issued = excluded.issued, next_update = excluded.next_update,
                         last_success = excluded.last_success
                     WHERE excluded.sequence >= trust_lists.sequence",
                )?
                .execute(params![
                    copy.list,
                    copy.location,
                    copy.body,
                    sequence_column(copy.sequence),
                    copy.issued,
                    copy.next_update,
                    copy.last_success
                ])?;
                Ok(())
            })
            .await
    }
}
