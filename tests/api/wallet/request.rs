//! The authorization request: OpenID4VP 1.0, by value and unsigned, as the gateway page
//! links to it (HTML-escaped in an `href`).

use std::collections::BTreeMap;

/// An OpenID4VP 1.0 authorization request, by value and unsigned.
#[derive(Clone, Debug)]
pub struct AuthorizationRequest {
    /// The URI as given.
    pub uri: String,
    pub client_id: String,
    pub nonce: String,
    pub state: String,
    pub response_uri: String,
    pub response_type: String,
    pub response_mode: String,
    pub dcql_query: serde_json::Value,
    pub client_metadata: serde_json::Value,
    /// The DCQL credential query's `id` (the key of the vp_token object).
    pub credential_id: String,
    /// The element the DCQL query asks for, e.g. `age_over_18`.
    pub requested_claim: String,
    /// Every credential the DCQL query asks for, in its order.
    pub credentials: Vec<CredentialQuery>,
    /// Every query parameter, decoded.
    pub params: BTreeMap<String, String>,
}

impl AuthorizationRequest {
    /// Parses `av://authorize?response_type=...` (any scheme); panics naming what is wrong.
    pub fn parse(uri: &str) -> Self {
        Self::try_parse(uri).unwrap_or_else(|e| panic!("{e}: {uri}"))
    }

    /// Finds `<a id="eu-av-link" href="...">` in a gateway page and parses its href.
    pub fn from_gateway_html(html: &str) -> Self {
        let href = link_href(html, "eu-av-link")
            .unwrap_or_else(|| panic!("no <a id=\"eu-av-link\" href=...> in the page:\n{html}"));
        Self::parse(&html_unescape(&href))
    }

    pub fn try_parse(uri: &str) -> Result<Self, String> {
        let (_, query) = uri
            .split_once('?')
            .ok_or("authorization request URI has no query")?;
        let query = query.split('#').next().unwrap_or_default();
        let mut params = BTreeMap::new();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            if params.insert(k.to_string(), v.to_string()).is_some() {
                return Err(format!("parameter {k} appears twice"));
            }
        }
        let get = |name: &str| {
            params
                .get(name)
                .cloned()
                .ok_or_else(|| format!("authorization request lacks {name}"))
        };
        let json = |name: &str| -> Result<serde_json::Value, String> {
            serde_json::from_str(&get(name)?).map_err(|e| format!("{name} is not JSON: {e}"))
        };
        let dcql_query = json("dcql_query")?;
        let credential = &dcql_query["credentials"][0];
        let credential_id = credential["id"]
            .as_str()
            .ok_or("dcql_query.credentials[0].id missing")?
            .to_owned();
        let requested_claim = credential["claims"][0]["path"][1]
            .as_str()
            .ok_or("dcql_query.credentials[0].claims[0].path[1] missing")?
            .to_owned();
        Ok(AuthorizationRequest {
            credentials: credential_queries(&dcql_query),
            uri: uri.to_owned(),
            client_id: get("client_id")?,
            nonce: get("nonce")?,
            state: get("state")?,
            response_uri: get("response_uri")?,
            response_type: get("response_type")?,
            response_mode: get("response_mode")?,
            client_metadata: json("client_metadata")?,
            dcql_query,
            credential_id,
            requested_claim,
            params,
        })
    }
}

/// One credential of a DCQL query, as a wallet reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialQuery {
    pub id: String,
    pub doc_type: String,
    /// The namespace and element of its first claim's path.
    pub namespace: String,
    pub claim: String,
}

/// The `credentials` of a DCQL query (entries it cannot read are left out).
pub fn credential_queries(dcql: &serde_json::Value) -> Vec<CredentialQuery> {
    let empty = Vec::new();
    let creds = dcql["credentials"].as_array().unwrap_or(&empty);
    creds
        .iter()
        .filter_map(|c| {
            let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
            Some(CredentialQuery {
                id: text(&c["id"])?,
                doc_type: text(&c["meta"]["doctype_value"])?,
                namespace: text(&c["claims"][0]["path"][0])?,
                claim: text(&c["claims"][0]["path"][1])?,
            })
        })
        .collect()
}

impl AuthorizationRequest {
    /// The id the query gives the credential of `doc_type` (else the first one's).
    pub fn id_for(&self, doc_type: &str) -> String {
        self.credentials
            .iter()
            .find(|c| c.doc_type == doc_type)
            .map_or_else(|| self.credential_id.clone(), |c| c.id.clone())
    }
}

/// The raw (still HTML-escaped) `href` of the `<a>` element whose `id` is `id`.
fn link_href(html: &str, id: &str) -> Option<String> {
    let mut from = 0;
    while let Some(pos) = html[from..].find("<a") {
        let start = from + pos;
        let end = start + html[start..].find('>')?;
        let tag = &html[start..=end];
        from = end;
        let boundary = tag[2..].starts_with(|c: char| c.is_ascii_whitespace());
        if boundary && attr(tag, "id").as_deref() == Some(id) {
            return attr(tag, "href");
        }
    }
    None
}

/// The value of attribute `name` in one start tag (quoted with " or ').
fn attr(tag: &str, name: &str) -> Option<String> {
    let mut rest = tag;
    loop {
        let i = rest.find(name)?;
        let before_ok = rest[..i].ends_with(|c: char| c.is_ascii_whitespace());
        let after = rest[i + name.len()..].trim_start();
        rest = &rest[i + name.len()..];
        if !before_ok {
            continue;
        }
        let Some(after) = after.strip_prefix('=') else {
            continue;
        };
        let after = after.trim_start();
        let quote = after.chars().next()?;
        if quote != '"' && quote != '\'' {
            let end = after
                .find(|c: char| c.is_ascii_whitespace() || c == '>')
                .unwrap_or(after.len());
            return Some(after[..end].to_owned());
        }
        let body = &after[1..];
        return body.find(quote).map(|end| body[..end].to_owned());
    }
}

/// Decodes the character references a template engine writes into an attribute:
/// `&amp; &quot; &apos; &lt; &gt;` and numeric ones (`&#39;`, `&#x27;`, `&#38;`, ...).
pub fn html_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = rest.find(';').filter(|&j| j <= 10).and_then(|j| {
            let entity = &rest[1..j];
            let c = match entity {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "lt" => Some('<'),
                "gt" => Some('>'),
                _ => {
                    let num = entity.strip_prefix('#')?;
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => num.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            };
            c.map(|c| (c, j))
        });
        match decoded {
            Some((c, j)) => {
                out.push(c);
                rest = &rest[j + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The signed request a page's by-reference link (`id="signed-link"`) points to, as a
/// wallet reads it: its `request_uri` fetched with GET (no metadata, so the whole offer)
/// and the JWS payload taken as the request. Its answer goes by `direct_post.jwt`.
impl AuthorizationRequest {
    pub async fn by_reference(client: &reqwest::Client, html: &str) -> Self {
        let link = link_href(html, "signed-link")
            .unwrap_or_else(|| panic!("no <a id=\"signed-link\" href=...> in the page:\n{html}"));
        let link = url::Url::parse(&html_unescape(&link)).expect("the by-reference link");
        let request_uri = link
            .query_pairs()
            .find(|(k, _)| k == "request_uri")
            .expect("request_uri")
            .1
            .into_owned();
        let resp = client.get(&request_uri).send().await.unwrap();
        assert_eq!(resp.status(), 200, "the request object of {request_uri}");
        let jws = resp.text().await.unwrap();
        let payload = jws_payload(&jws);
        let mut uri = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in payload.as_object().expect("a JSON object") {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            uri.append_pair(name, &value);
        }
        Self::parse(&format!("request-object://authorize?{}", uri.finish()))
    }

    /// The response encryption key a `direct_post.jwt` request names.
    pub fn encryption_jwk(&self) -> Option<&serde_json::Value> {
        (self.response_mode == "direct_post.jwt").then(|| &self.client_metadata["jwks"]["keys"][0])
    }

    /// The JWK thumbprint the SessionTranscript carries (OpenID4VP B.2.6.1): the
    /// encryption key's for `direct_post.jwt`, none for `direct_post`.
    pub fn transcript_thumbprint(&self) -> Option<[u8; 32]> {
        self.encryption_jwk().map(super::jwk_thumbprint)
    }

    /// The form a wallet posts to `response_uri` with `state` and `vp_token`: the two as
    /// fields (`direct_post`), or encrypted into `response` (`direct_post.jwt`).
    pub fn answer_form(&self, state: &str, vp_token: &str) -> Vec<(String, String)> {
        match self.encryption_jwk() {
            None => vec![
                ("state".to_owned(), state.to_owned()),
                ("vp_token".to_owned(), vp_token.to_owned()),
            ],
            Some(jwk) => {
                let vp_token: serde_json::Value =
                    serde_json::from_str(vp_token).expect("vp_token JSON");
                let payload = serde_json::json!({"state": state, "vp_token": vp_token});
                vec![("response".to_owned(), super::jwe_for_jwk(jwk, &payload))]
            }
        }
    }
}

/// The payload of a compact JWS as JSON, read without checking the signature.
pub fn jws_payload(jws: &str) -> serde_json::Value {
    let payload = jws.split('.').nth(1).expect("a JWS payload");
    serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .expect("base64url"),
    )
    .expect("a JSON payload")
}
