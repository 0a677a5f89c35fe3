//! The wallet over the W3C Digital Credentials API (docs/dc-api.md): it reads the request
//! the gateway page carries (`<script type="application/json" id="dc-api-request">`) and
//! answers R1 (OpenID4VP 1.0 Appendix A, `dc_api.jwt`) or R2 (ISO/IEC 18013-7 Annex C)
//! with the `credential.data` a browser would hand the page — a valid answer by default,
//! or any of the wrong ones the knobs of [`DcAnswer`] describe.
//!
//! Request parsing, the JWK thumbprint (RFC 7638) and both SessionTranscripts are built
//! here from the standards with ciborium and sha2, independently of `agegate::dcapi`;
//! only the envelopes (JWE ECDH-ES + A128GCM, HPKE base mode) use its wallet-side
//! `encrypt` and `seal`, which are proven against published vectors there.

use super::{Presentation, TestIssuer};
use agegate::testkit::{cbor, sha256, text};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::PublicKey;
use serde_json::{json, Value as Json};

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
                let payload = jws.split('.').nth(1).expect("JWS payload");
                let payload = URL_SAFE_NO_PAD.decode(payload).expect("base64url payload");
                (
                    serde_json::from_slice(&payload).expect("JSON payload"),
                    Some(jws),
                )
            }
            other => panic!("R1 protocol {other}"),
        };
        let jwk = params["client_metadata"]["jwks"]["keys"][0].clone();
        let coordinate = |c: &str| {
            URL_SAFE_NO_PAD
                .decode(jwk[c].as_str().expect("JWK coordinate"))
                .expect("base64url")
        };
        let recipient = point(&coordinate("x"), &coordinate("y"));
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

/// Knobs of one answer; `Default` is a valid one.
#[derive(Clone, Debug, Default)]
pub struct DcAnswer {
    /// The origin the wallet binds the answer to (the browser's, else).
    pub origin: Option<String>,
    /// R1: the nonce the device signs over.
    pub nonce: Option<String>,
    /// R1: the transcript carries another key's thumbprint.
    pub other_thumbprint: bool,
    /// Encrypt (R1) or seal (R2) to another key than the request's.
    pub other_recipient: bool,
    /// R2: HPKE `info` other than the SessionTranscript.
    pub hpke_info: Option<Vec<u8>>,
    /// R1: `{"vp_token": ...}` in the clear.
    pub unencrypted: bool,
    /// R1: the vp_token's credential id.
    pub credential_id: Option<String>,
}

/// The wallet's answers through the Digital Credentials API, with the kit's issuer.
pub trait DcWallet {
    /// `credential.data` answering R1 for a page at `origin`.
    fn dc_openid4vp_data(
        &self,
        req: &DcOpenId4Vp,
        origin: &str,
        p: &Presentation,
        a: &DcAnswer,
    ) -> Json;
    /// `credential.data` answering R2 for a page at `origin`.
    fn dc_annex_c_data(&self, req: &DcAnnexC, origin: &str, p: &Presentation, a: &DcAnswer)
        -> Json;
}

impl DcWallet for TestIssuer {
    fn dc_openid4vp_data(
        &self,
        req: &DcOpenId4Vp,
        origin: &str,
        p: &Presentation,
        a: &DcAnswer,
    ) -> Json {
        let thumbprint = if a.other_thumbprint {
            thumbprint_of(&fresh_key())
        } else {
            jwk_thumbprint(&req.jwk)
        };
        let transcript = dc_openid4vp_transcript(
            a.origin.as_deref().unwrap_or(origin),
            a.nonce.as_deref().unwrap_or(&req.nonce),
            &thumbprint,
        );
        let device_response = self.device_response_cbor_over(transcript, p);
        let by_doc = req
            .credentials
            .iter()
            .find(|c| c.doc_type == p.doc_type)
            .map(|c| c.id.as_str());
        let id = a
            .credential_id
            .as_deref()
            .or(by_doc)
            .unwrap_or(&req.credential_id);
        let mut vp_token = serde_json::Map::new();
        vp_token.insert(
            id.to_owned(),
            json!([URL_SAFE_NO_PAD.encode(device_response)]),
        );
        let payload = json!({"vp_token": vp_token});
        if a.unencrypted {
            return payload;
        }
        let recipient = if a.other_recipient {
            fresh_key()
        } else {
            req.recipient
        };
        jwe_to(&recipient, req.kid.as_deref(), &payload)
    }

    fn dc_annex_c_data(
        &self,
        req: &DcAnnexC,
        origin: &str,
        p: &Presentation,
        a: &DcAnswer,
    ) -> Json {
        let origin = a.origin.as_deref().unwrap_or(origin);
        let transcript = dc_annex_c_transcript(&req.encryption_info, origin);
        let info = a.hpke_info.clone().unwrap_or_else(|| cbor(&transcript));
        let device_response = self.device_response_cbor_over(transcript, p);
        let recipient = if a.other_recipient {
            fresh_key()
        } else {
            req.recipient
        };
        sealed_to(&recipient, &info, &device_response)
    }
}

/// `credential.data` answering R1 with `payload` (`{"vp_token": ...}`), encrypted to the
/// request's key.
pub fn jwe_data(req: &DcOpenId4Vp, payload: &Json) -> Json {
    jwe_to(&req.recipient, req.kid.as_deref(), payload)
}

/// `credential.data` answering R2 with `device_response` (CBOR), sealed to the request's
/// key with the CBOR SessionTranscript `transcript` as HPKE `info`.
pub fn hpke_data(req: &DcAnnexC, transcript: &[u8], device_response: &[u8]) -> Json {
    sealed_to(&req.recipient, transcript, device_response)
}

fn jwe_to(recipient: &PublicKey, kid: Option<&str>, payload: &Json) -> Json {
    let jwe = agegate::dcapi::jwe::encrypt(
        &mut rand::rngs::OsRng,
        payload.to_string().as_bytes(),
        recipient,
        kid,
    )
    .expect("JWE");
    json!({"response": jwe})
}

/// A compact JWE (ECDH-ES, A128GCM) of `payload` to the P-256 `jwk`, as a wallet
/// answering by `direct_post.jwt` makes it.
pub fn jwe_for_jwk(jwk: &Json, payload: &Json) -> String {
    let coordinate = |c: &str| {
        URL_SAFE_NO_PAD
            .decode(jwk[c].as_str().expect("JWK coordinate"))
            .expect("base64url")
    };
    let recipient = point(&coordinate("x"), &coordinate("y"));
    let kid = jwk["kid"].as_str();
    jwe_to(&recipient, kid, payload)["response"]
        .as_str()
        .expect("the JWE")
        .to_owned()
}

fn sealed_to(recipient: &PublicKey, info: &[u8], device_response: &[u8]) -> Json {
    let sealed =
        agegate::dcapi::hpke::seal(&mut rand::rngs::OsRng, recipient, info, device_response)
            .expect("HPKE seal");
    json!({"response": annex_c_response(&sealed.enc, &sealed.ciphertext)})
}

/// base64url of CBOR `["dcapi", {"enc": bstr, "cipherText": bstr}]`.
pub fn annex_c_response(enc: &[u8], ciphertext: &[u8]) -> String {
    let response = Value::Array(vec![
        text("dcapi"),
        Value::Map(vec![
            (text("enc"), Value::Bytes(enc.to_vec())),
            (text("cipherText"), Value::Bytes(ciphertext.to_vec())),
        ]),
    ]);
    URL_SAFE_NO_PAD.encode(cbor(&response))
}

/// `[null, null, ["OpenID4VPDCAPIHandover", SHA-256(CBOR([origin, nonce,
/// jwkThumbprint]))]]` (OpenID4VP 1.0 Appendix B.2.6.2).
pub fn dc_openid4vp_transcript(origin: &str, nonce: &str, thumbprint: &[u8; 32]) -> Value {
    let info = Value::Array(vec![
        text(origin),
        text(nonce),
        Value::Bytes(thumbprint.to_vec()),
    ]);
    hashed_handover("OpenID4VPDCAPIHandover", &info)
}

/// `[null, null, ["dcapi", SHA-256(CBOR([encryptionInfo, origin]))]]` (ISO/IEC 18013-7
/// Annex C), `encryption_info` the base64url text as sent.
pub fn dc_annex_c_transcript(encryption_info: &str, origin: &str) -> Value {
    let info = Value::Array(vec![text(encryption_info), text(origin)]);
    hashed_handover("dcapi", &info)
}

fn hashed_handover(name: &str, info: &Value) -> Value {
    Value::Array(vec![
        Value::Null,
        Value::Null,
        Value::Array(vec![text(name), Value::Bytes(sha256(&cbor(info)).to_vec())]),
    ])
}

/// RFC 7638: SHA-256 of `{"crv","kty","x","y"}` in that order, no whitespace.
pub fn jwk_thumbprint(jwk: &Json) -> [u8; 32] {
    let canonical = format!(
        r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
        jwk["crv"].as_str().unwrap(),
        jwk["kty"].as_str().unwrap(),
        jwk["x"].as_str().unwrap(),
        jwk["y"].as_str().unwrap()
    );
    sha256(canonical.as_bytes())
}

fn thumbprint_of(key: &PublicKey) -> [u8; 32] {
    let point = p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(key, false);
    jwk_thumbprint(&json!({
        "crv": "P-256",
        "kty": "EC",
        "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
        "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()),
    }))
}

fn fresh_key() -> PublicKey {
    p256::SecretKey::random(&mut rand::rngs::OsRng).public_key()
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
