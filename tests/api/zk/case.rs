//! A pending invite on a server with circuits, read as a ZK wallet reads it: the link's
//! DCQL (`mso_mdoc_zk` credentials and the circuits they offer), the page's DC API
//! requests; the SessionTranscript each transport implies (built here from the standards,
//! as tests/api/wallet does for plain answers), and the answer posted through it with the
//! test wallet's envelopes (form post, JWE, HPKE).

use crate::dc_api::{dc_page, post_dc_api};
use crate::helpers::{gateway_page, SiteOptions, TestApp, TestSite};
use crate::wallet::{
    cbor_get, dc_annex_c_transcript, dc_openid4vp_transcript, jwk_thumbprint, session_transcript,
    untag24, AuthorizationRequest, DcApiPage,
};
use agegate::testkit::cbor;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value as Json};

/// How the wallet answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A link or QR code: the by-reference request (`direct_post.jwt`) when the server
    /// signs requests, else the by-value one (`direct_post`).
    Link,
    /// The DC API's OpenID4VP request (JWE).
    R1,
    /// The DC API's Annex C request (HPKE).
    R2,
}

impl Transport {
    pub const ALL: [Transport; 3] = [Transport::Link, Transport::R1, Transport::R2];
}

/// A `mso_mdoc_zk` credential of a DCQL query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkCredential {
    pub id: String,
    pub doc_type: String,
    /// The `circuit_hash` of each offered `zk_system_type`, in order.
    pub circuits: Vec<String>,
}

/// The `mso_mdoc_zk` credentials of a DCQL query, in its order.
pub fn zk_credentials(dcql: &Json) -> Vec<ZkCredential> {
    let none = Vec::new();
    dcql["credentials"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .filter(|c| c["format"] == "mso_mdoc_zk")
        .map(|c| ZkCredential {
            id: c["id"].as_str().expect("id").to_owned(),
            doc_type: c["meta"]["doctype_value"]
                .as_str()
                .expect("docType")
                .to_owned(),
            circuits: c["meta"]["zk_system_type"]
                .as_array()
                .expect("zk_system_type")
                .iter()
                .map(|s| s["circuit_hash"].as_str().expect("circuit_hash").to_owned())
                .collect(),
        })
        .collect()
}

/// The request a wallet following a link reads: the by-reference request object when the
/// page links to one (the link that carries ZK offers), else the by-value link.
pub async fn link_request(app: &TestApp, invite_url: &str) -> AuthorizationRequest {
    let html = gateway_page(&app.client, invite_url).await;
    if html.contains("id=\"signed-link\"") {
        AuthorizationRequest::by_reference(&app.client, &html).await
    } else {
        AuthorizationRequest::from_gateway_html(&html)
    }
}

/// A site's pending invite and the requests its gateway page carries.
pub struct ZkCase {
    pub site: TestSite,
    pub invite_id: String,
    pub url: String,
    pub link: AuthorizationRequest,
    pub page: DcApiPage,
}

impl ZkCase {
    pub async fn new(app: &TestApp, options: SiteOptions<'_>) -> Self {
        let site = app.create_site_with(options).await;
        Self::of_site(app, site).await
    }

    /// A new invite of `site`.
    pub async fn of_site(app: &TestApp, site: TestSite) -> Self {
        let invite = app
            .new_invite(&site, Some(json!({"customId": "c-9"})))
            .await;
        let url = invite["url"].as_str().unwrap().to_owned();
        let link = link_request(app, &url).await;
        let page = dc_page(app, &url).await;
        ZkCase {
            site,
            invite_id: invite["inviteId"].as_str().unwrap().to_owned(),
            url,
            link,
            page,
        }
    }

    /// The claim the request asks for, e.g. `age_over_18`.
    pub fn claim(&self) -> String {
        self.link.requested_claim.clone()
    }

    /// The id of the ZK credential for `doc_type` in `transport`'s DCQL query.
    pub fn zk_id(&self, transport: Transport, doc_type: &str) -> String {
        let dcql = match transport {
            Transport::R1 => self.page.r1().params["dcql_query"].clone(),
            _ => self.link.dcql_query.clone(),
        };
        zk_credentials(&dcql)
            .into_iter()
            .find(|c| c.doc_type == doc_type)
            .unwrap_or_else(|| panic!("no mso_mdoc_zk credential for {doc_type} in {dcql}"))
            .id
    }

    /// The `circuit_hash` of each circuit `transport`'s request offers for `doc_type`: the
    /// DCQL `zk_system_type` list, or (R2) the `zkRequest.systemSpecs` inside the tag-24
    /// itemsRequest of that docType's docRequest; and whether R2 says `zkRequired`.
    pub fn offered(&self, transport: Transport, doc_type: &str) -> (Vec<String>, Option<bool>) {
        if transport != Transport::R2 {
            let dcql = match transport {
                Transport::R1 => self.page.r1().params["dcql_query"].clone(),
                _ => self.link.dcql_query.clone(),
            };
            let found = zk_credentials(&dcql)
                .into_iter()
                .find(|c| c.doc_type == doc_type);
            return (found.map(|c| c.circuits).unwrap_or_default(), None);
        }
        let r2 = self.page.r2();
        let requests = cbor_get(&r2.device_request, "docRequests")
            .as_array()
            .unwrap();
        for request in requests {
            let items: ciborium::Value =
                ciborium::from_reader(untag24(cbor_get(request, "itemsRequest"))).unwrap();
            if cbor_get(&items, "docType").as_text() != Some(doc_type) {
                continue;
            }
            let zk = cbor_get(cbor_get(&items, "requestInfo"), "zkRequest");
            let specs = cbor_get(zk, "systemSpecs").as_array().unwrap();
            let ids = specs
                .iter()
                .map(|s| cbor_get(s, "zkSystemId").as_text().unwrap().to_owned())
                .collect();
            return (ids, cbor_get(zk, "zkRequired").as_bool());
        }
        panic!("no docRequest for {doc_type}")
    }

    /// The link's SessionTranscript (OpenID4VP B.2.6.1; with the encryption key's
    /// thumbprint when the request is by reference).
    pub fn link_transcript(&self) -> ciborium::Value {
        let link = &self.link;
        session_transcript(
            &link.client_id,
            &link.nonce,
            link.transcript_thumbprint().as_ref().map(|t| &t[..]),
            &link.response_uri,
        )
    }

    /// Posts `vp_token` (JSON text) to the link's `response_uri` as its response mode
    /// says: in the clear (`direct_post`) or encrypted (`direct_post.jwt`).
    pub async fn post_link(&self, app: &TestApp, vp_token: &str) -> reqwest::Response {
        let form = self.link.answer_form(&self.link.state, vp_token);
        app.client
            .post(&self.link.response_uri)
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    /// The SessionTranscript's CBOR that `transport` implies for a page at `origin`.
    pub fn transcript(&self, transport: Transport, origin: &str) -> Vec<u8> {
        cbor(&match transport {
            Transport::Link => self.link_transcript(),
            Transport::R1 => {
                let r1 = self.page.r1();
                dc_openid4vp_transcript(origin, &r1.nonce, &jwk_thumbprint(&r1.jwk))
            }
            Transport::R2 => dc_annex_c_transcript(&self.page.r2().encryption_info, origin),
        })
    }

    /// `credential.data` of a DC API answer carrying `device_response` under the ZK
    /// credential of `doc_type` (R1) or sealed to the request's key (R2).
    pub fn dc_data(
        &self,
        transport: Transport,
        origin: &str,
        doc_type: &str,
        device_response: &[u8],
    ) -> Json {
        match transport {
            Transport::Link => panic!("the link has no DC API data"),
            Transport::R1 => {
                let vp_token = self.vp_token(transport, doc_type, device_response);
                crate::wallet::jwe_data(&self.page.r1(), &json!({"vp_token": vp_token}))
            }
            Transport::R2 => {
                let transcript = self.transcript(transport, origin);
                crate::wallet::hpke_data(&self.page.r2(), &transcript, device_response)
            }
        }
    }

    /// The DC API's `protocol` of `transport`'s request.
    pub fn protocol(&self, transport: Transport) -> String {
        match transport {
            Transport::R2 => "org-iso-mdoc".to_owned(),
            _ => self.page.r1().protocol,
        }
    }

    /// `{"<ZK credential id>": ["<base64url DeviceResponse>"]}`.
    pub fn vp_token(&self, transport: Transport, doc_type: &str, device_response: &[u8]) -> Json {
        let id = self.zk_id(transport, doc_type);
        json!({ id: [URL_SAFE_NO_PAD.encode(device_response)] })
    }

    /// Posts `device_response` through `transport`, as the wallet (link) or the page's
    /// script (DC API) would.
    pub async fn answer(
        &self,
        app: &TestApp,
        transport: Transport,
        doc_type: &str,
        device_response: &[u8],
    ) -> reqwest::Response {
        match transport {
            Transport::Link => {
                let vp_token = self.vp_token(transport, doc_type, device_response);
                self.post_link(app, &vp_token.to_string()).await
            }
            _ => {
                let data = self.dc_data(transport, &app.base, doc_type, device_response);
                let body = json!({
                    "state": self.page.state,
                    "protocol": self.protocol(transport),
                    "data": data,
                });
                post_dc_api(app, &self.url, &body).await
            }
        }
    }

    pub async fn status(&self, app: &TestApp) -> String {
        let record = app.status_record(&self.site, &self.invite_id).await;
        record["status"].as_str().unwrap().to_owned()
    }
}
