//! SQL of the credential status lists' last good copies (src/store/status_lists.rs).

use super::{all, execute, one, PostgresStore};
use crate::store::status_lists::{
    stored_status_list, StatusListStore, StoredStatusList, STORED_STATUS_LIST_COLUMNS,
};
use crate::store::StoreResult;

#[async_trait::async_trait]
impl StatusListStore for PostgresStore {
    async fn status_list(&self, form: &str, uri: &str) -> StoreResult<Option<StoredStatusList>> {
        let sql = format!(
            "SELECT {STORED_STATUS_LIST_COLUMNS} FROM status_lists WHERE form = $1 AND uri = $2"
        );
        one(
            &self.client().await?,
            &sql,
            &[&form, &uri],
            stored_status_list,
        )
        .await
    }

    async fn save_status_list(&self, copy: StoredStatusList) -> StoreResult<()> {
        execute(
            &self.client().await?,
            "INSERT INTO status_lists (form, uri, body, iat, exp, fetched_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (form, uri) DO UPDATE SET
                 body = excluded.body, iat = excluded.iat, exp = excluded.exp,
                 fetched_at = excluded.fetched_at
             WHERE excluded.iat >= status_lists.iat",
            &[
                &copy.form,
                &copy.uri,
                &copy.body,
                &copy.iat,
                &copy.exp,
                &copy.fetched_at,
            ],
        )
        .await?;
        Ok(())
    }

    async fn status_lists(&self) -> StoreResult<Vec<StoredStatusList>> {
        let sql =
            format!("SELECT {STORED_STATUS_LIST_COLUMNS} FROM status_lists ORDER BY uri, form");
        all(&self.client().await?, &sql, &[], stored_status_list).await
    }
}
