//! The wallet over the W3C Digital Credentials API (docs/dc-api.md), reading: the request
//! the gateway page carries (`<script type="application/json" id="dc-api-request">`), R1
//! (OpenID4VP 1.0 Appendix A, `dc_api.jwt`) and R2 (ISO/IEC 18013-7 Annex C), parsed here
//! from the standards with ciborium, independently of `agegate::dcapi`. Answering them:
//! [`super::dc_answer`].

use agegate::testkit::text;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::PublicKey;
use serde_json::Value as Json;

pub const OPENID4VP_UNSIGNED: &str = "openid4vp-v1-unsigned";
pub const OPENID4VP_SIGNED: &str = "openid4vp-v1-signed";
pub const ANNEX_C: &str = "org-iso-mdoc";

/// The page's request: `{"state", "digital": {"requests": [R1, R2]}}`.
#[derive(Clone, Debug)]
pub struct DcApiPage {
    pub state: String,
    pub json: Json,
}

impl DcApiPage {
    /// The JSON of the page's `dc-api-request` block; `None` when the page has none.
    pub fn find(html: &str) -> Option<Self> {
        let open = r#"<script type="application/json" id="dc-api-request">"#;
        let start = html.find(open)? + open.len();
        let end = start + html[start..].find("</script>")?;
        let json: Json = serde_json::from_str(&html[start..end]).expect("the request is JSON");
        Some(Self::from_json(json))
    }

    pub fn from_gateway_html(html: &str) -> Self {
        Self::find(html).unwrap_or_else(|| panic!("no dc-api-request in the page:\n{html}"))
    }

    pub fn from_json(json: Json) -> Self {
        let state = json["state"].as_str().expect("state").to_owned();
        Self { state, json }
    }

    pub fn requests(&self) -> &[Json] {
        self.json["digital"]["requests"]
            .as_array()
            .expect("digital.requests")
    }

    /// R1, signed or not (a signed one's parameters are its JWS payload, unverified here).
    pub fn r1(&self) -> DcOpenId4Vp {
        let r1 = &self.requests()[0];
        let protocol = r1["protocol"].as_str().expect("R1 protocol").to_owned();
        let (params, jws) = match protocol.as_str() {
            OPENID4VP_UNSIGNED => (r1["data"].clone(), None),
            OPENID4VP_SIGNED => {
                let jws = r1["data"]["request"].as_str().expect("request").to_owned();
                (super::jws_payload(&jws), Some(jws))
            }
            other => panic!("R1 protocol {other}"),
        };
        let jwk = params["client_metadata"]["jwks"]["keys"][0].clone();
        let recipient = jwk_point(&jwk);
        let credential = &params["dcql_query"]["credentials"][0];
        DcOpenId4Vp {
            credentials: super::credential_queries(&params["dcql_query"]),
            protocol,
            nonce: params["nonce"].as_str().expect("nonce").to_owned(),
            credential_id: credential["id"].as_str().expect("id").to_owned(),
            requested_claim: credential["claims"][0]["path"][1]
                .as_str()
                .expect("claim")
                .to_owned(),
            kid: jwk["kid"].as_str().map(str::to_owned),
            jwk,
            recipient,
            params,
            jws,
        }
    }

    /// R2.
    pub fn r2(&self) -> DcAnnexC {
        let r2 = &self.requests()[1];
        assert_eq!(r2["protocol"], ANNEX_C);
        let b64 = |name: &str| {
            let text = r2["data"][name].as_str().expect(name);
            assert!(!text.contains('='), "{name} is base64url without padding");
            URL_SAFE_NO_PAD.decode(text).expect("base64url")
        };
        let encryption_info = r2["data"]["encryptionInfo"].as_str().unwrap().to_owned();
        let info = decode(&b64("encryptionInfo"));
        let parts = info.as_array().expect("encryptionInfo is an array");
        assert_eq!(parts[0], text("dcapi"));
        let nonce = get(&parts[1], "nonce").as_bytes().expect("nonce").clone();
        let key = get(&parts[1], "recipientPublicKey");
        let recipient = point(
            int_key(key, -2).as_bytes().expect("x"),
            int_key(key, -3).as_bytes().expect("y"),
        );
        let device_request_bytes = b64("deviceRequest");
        let device_request = decode(&device_request_bytes);
        let doc_request = &get(&device_request, "docRequests").as_array().unwrap()[0];
        let items = decode(untag24(get(doc_request, "itemsRequest")));
        let namespaces = get(&items, "nameSpaces").as_map().unwrap();
        let claims = namespaces[0].1.as_map().unwrap();
        let doc_types = get(&device_request, "docRequests")
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let items = decode(untag24(get(r, "itemsRequest")));
                get(&items, "docType").as_text().unwrap().to_owned()
            })
            .collect();
        DcAnnexC {
            doc_types,
            encryption_info,
            nonce,
            recipient,
            doc_type: get(&items, "docType").as_text().unwrap().to_owned(),
            requested_claim: claims[0].0.as_text().unwrap().to_owned(),
            device_request,
            device_request_bytes,
        }
    }
}

/// R1 as the wallet reads it.
#[derive(Clone, Debug)]
pub struct DcOpenId4Vp {
    pub protocol: String,
    /// The request parameters (of a signed request: its JWS payload).
    pub params: Json,
    pub jws: Option<String>,
    pub nonce: String,
    pub credential_id: String,
    pub requested_claim: String,
    /// Every credential the DCQL query asks for.
    pub credentials: Vec<super::CredentialQuery>,
    pub jwk: Json,
    pub kid: Option<String>,
    pub recipient: PublicKey,
}

/// R2 as the wallet reads it.
#[derive(Clone, Debug)]
pub struct DcAnnexC {
    /// Exactly as sent: the transcript hashes this text.
    pub encryption_info: String,
    pub nonce: Vec<u8>,
    pub recipient: PublicKey,
    pub device_request: Value,
    pub device_request_bytes: Vec<u8>,
    pub doc_type: String,
    pub requested_claim: String,
    /// The docType of every docRequest, in order.
    pub doc_types: Vec<String>,
}

/// The P-256 point of an EC JWK.
pub fn jwk_point(jwk: &Json) -> PublicKey {
    let coordinate = |c: &str| {
        URL_SAFE_NO_PAD
            .decode(jwk[c].as_str().expect("JWK coordinate"))
            .expect("base64url")
    };
    point(&coordinate("x"), &coordinate("y"))
}

fn point(x: &[u8], y: &[u8]) -> PublicKey {
    assert_eq!((x.len(), y.len()), (32, 32), "coordinates are 32 bytes");
    PublicKey::from_sec1_bytes(&[&[4][..], x, y].concat()).expect("a point on P-256")
}

pub fn decode(bytes: &[u8]) -> Value {
    ciborium::from_reader(bytes).expect("CBOR")
}

/// `v[key]` of a CBOR map with text keys.
pub fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some(key)))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key} in {v:?}"))
}

/// `v[key]` of a CBOR map with integer keys.
pub fn int_key(v: &Value, key: i64) -> &Value {
    v.as_map()
        .and_then(|m| {
            m.iter()
                .find(|(k, _)| k.as_integer().map(i128::from) == Some(key.into()))
        })
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key} in {v:?}"))
}

/// The bstr inside `#6.24(bstr)`.
pub fn untag24(v: &Value) -> &[u8] {
    match v {
        Value::Tag(24, inner) => inner.as_bytes().expect("tag 24 holds a bstr"),
        _ => panic!("expected #6.24(bstr), got {v:?}"),
    }
}
