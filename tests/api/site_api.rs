//! Helpers for the site API beyond the seed's two endpoints: list, cancel, erase.

use crate::helpers::{TestApp, TestSite};
use serde_json::Value;

impl TestApp {
    /// A request with the site's credentials to `path` under the site's API
    /// (`/v1/website/{siteId}{path}`).
    pub fn site_request(
        &self,
        site: &TestSite,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        self.client
            .request(
                method,
                self.url(&format!("/v1/website/{}{path}", site.site_id)),
            )
            .basic_auth(&site.username, Some(&site.password))
    }

    /// `GET /v1/website/{siteId}/invite?{query}`.
    pub async fn list_invites(&self, site: &TestSite, query: &str) -> reqwest::Response {
        self.site_request(site, reqwest::Method::GET, &format!("/invite?{query}"))
            .send()
            .await
            .unwrap()
    }

    /// Every invite of the site, following `nextCursor` 500 at a time, asserting success.
    pub async fn all_invites(&self, site: &TestSite, filter: &str) -> Vec<Value> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut query = format!("limit=500&{filter}");
            if let Some(c) = &cursor {
                query.push_str(&format!("&cursor={c}"));
            }
            let resp = self.list_invites(site, &query).await;
            assert_eq!(resp.status(), 200);
            let page: Value = resp.json().await.unwrap();
            all.extend(page["data"].as_array().unwrap().iter().cloned());
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return all,
            }
        }
    }

    /// `POST /v1/website/{siteId}/invite/{inviteId}/cancel`.
    pub async fn cancel(&self, site: &TestSite, invite_id: &str) -> reqwest::Response {
        self.site_request(
            site,
            reqwest::Method::POST,
            &format!("/invite/{invite_id}/cancel"),
        )
        .send()
        .await
        .unwrap()
    }

    /// `GET /v1/website/{siteId}/invite/{inviteId}/receipt`.
    pub async fn receipt(&self, site: &TestSite, invite_id: &str) -> reqwest::Response {
        self.site_request(
            site,
            reqwest::Method::GET,
            &format!("/invite/{invite_id}/receipt"),
        )
        .send()
        .await
        .unwrap()
    }

    /// `DELETE /v1/website/{siteId}/invite/{inviteId}`.
    pub async fn erase(&self, site: &TestSite, invite_id: &str) -> reqwest::Response {
        self.site_request(
            site,
            reqwest::Method::DELETE,
            &format!("/invite/{invite_id}"),
        )
        .send()
        .await
        .unwrap()
    }
}
