//! SQL of the credential status lists' last good copies (src/store/status_lists.rs).

use rusqlite::params;

use super::{all, one, SqliteStore};
use crate::store::status_lists::{
    stored_status_list, StatusListStore, StoredStatusList, STORED_STATUS_LIST_COLUMNS,
};
use crate::store::StoreResult;

#[async_trait::async_trait]
impl StatusListStore for SqliteStore {
    async fn status_list(&self, form: &str, uri: &str) -> StoreResult<Option<StoredStatusList>> {
        let (form, uri) = (form.to_owned(), uri.to_owned());
        self.pool
            .read(move |conn| {
                one(
                    conn,
                    &format!(
                        "SELECT {STORED_STATUS_LIST_COLUMNS} FROM status_lists
                         WHERE form = ?1 AND uri = ?2"
                    ),
                    params![form, uri],
                    stored_status_list,
                )
            })
            .await
    }

    async fn save_status_list(&self, copy: StoredStatusList) -> StoreResult<()> {
        self.pool
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO status_lists (form, uri, body, iat, exp, fetched_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (form, uri) DO UPDATE SET
                         body = excluded.body, iat = excluded.iat, exp = excluded.exp,
                         fetched_at = excluded.fetched_at
                     WHERE excluded.iat >= status_lists.iat",
                )?
                .execute(params![
                    copy.form,
                    copy.uri,
                    copy.body,
                    copy.iat,
                    copy.exp,
                    copy.fetched_at
                ])?;
                Ok(())
            })
            .await
    }

    async fn status_lists(&self) -> StoreResult<Vec<StoredStatusList>> {
        self.pool
            .read(move |conn| {
                all(
                    conn,
                    &format!(
                        "SELECT {STORED_STATUS_LIST_COLUMNS} FROM status_lists ORDER BY uri, form"
                    ),
                    [],
                    stored_status_list,
                )
            })
            .await
    }
}
