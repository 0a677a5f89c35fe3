//! Builders of the two requests of `digital.requests` (docs/dc-api.md#the-requests): R1 (OpenID4VP 1.0
//! over the DC API, Appendix A) and R2 (ISO/IEC 18013-7 Annex C, `org-iso-mdoc`),
//! unsigned or signed. Pure and deterministic: the same inputs give the same bytes, so
//! a request can be rebuilt from what is stored with it (key, nonces).

use serde_json::{json, Map, Value};

use super::signer::RequestSigner;
use super::{b64url, transcript, ResponseKey};
use crate::mdoc::cbor::{tag24_encoded, Enc};

pub const PROTOCOL_OPENID4VP_UNSIGNED: &str = "openid4vp-v1-unsigned";
pub const PROTOCOL_OPENID4VP_SIGNED: &str = "openid4vp-v1-signed";
pub const PROTOCOL_ANNEX_C: &str = "org-iso-mdoc";
/// The name of the Longfellow proof system in requests (docs/zk.md#zero-knowledge-proofs).
pub const ZK_SYSTEM: &str = "longfellow-libzk-v1";
/// The JWS `typ` of a request object (RFC 9101; OpenID4VP 1.0 section 5).
const REQUEST_OBJECT_TYP: &str = "oauth-authz-req+jwt";

/// One claim to ask for: `claim` (e.g. `age_over_18`) in `namespace` of `doc_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemRequest<'a> {
    pub doc_type: &'a str,
    pub namespace: &'a str,
    pub claim: &'a str,
}

/// The zero-knowledge proofs R2 offers in each docRequest
/// (docs/zk.md#zero-knowledge-proofs): the circuits, newest first, and whether only a
/// proof answers.
#[derive(Debug, Clone, Copy)]
pub struct ZkAsk<'a> {
    pub circuits: &'a [&'static agegate_zk::CircuitInfo],
    pub required: bool,
}

/// Everything both requests are made of.
#[derive(Debug, Clone, Copy)]
pub struct RequestInputs<'a> {
    /// The origin of `--public-url` as a browser writes it (`https://host[:port]`).
    pub origin: &'a str,
    /// The live request's nonce (the same as the link's, docs/wallets.md#the-wallet-link).
    pub nonce: &'a str,
    /// The DCQL query (built elsewhere).
    pub dcql_query: &'a Value,
    /// The link's `client_metadata` (docs/wallets.md#the-wallet-link); `jwks` and `encrypted_response_enc_values_supported`
    /// are added to it.
    pub client_metadata: &'a Value,
    /// The claims to ask for in R2; one docRequest per docType, in first-seen order.
    pub items: &'a [ItemRequest<'a>],
    pub key: &'a ResponseKey,
    /// Random bytes (≥ 16) for Annex C's `encryptionInfo.nonce`, kept with the request.
    pub encryption_nonce: &'a [u8],
    /// The proofs offered; `None`: a plain presentation only.
    pub zk: Option<ZkAsk<'a>>,
}

/// The two requests, and the `encryptionInfo` text R2 carries (its SessionTranscript is
/// [`transcript::annex_c`] of it; rebuildable with [`encryption_info`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DcApiRequests {
    pub openid4vp: Value,
    pub annex_c: Value,
    pub encryption_info: String,
}

impl DcApiRequests {
    /// `{"requests": [R1, R2]}`, the `digital` member of the page's request.
    pub fn digital(&self) -> Value {
        json!({"requests": [self.openid4vp, self.annex_c]})
    }
}

/// Both requests; signed when `signer` is given.
pub fn build(inputs: &RequestInputs<'_>, signer: Option<&RequestSigner>) -> DcApiRequests {
    let data = openid4vp_data(
        inputs.nonce,
        inputs.dcql_query,
        inputs.client_metadata,
        inputs.key,
    );
    let encryption_info = encryption_info(inputs.key, inputs.encryption_nonce);
    let openid4vp = match signer {
        None => openid4vp_unsigned(data),
        Some(signer) => openid4vp_signed(data, inputs.origin, signer),
    };
    // readerAuth signs the Annex C SessionTranscript, which hashes encryptionInfo.
    let transcript = signer.map(|_| transcript::annex_c(&encryption_info, inputs.origin));
    let device_request = device_request(inputs.items, inputs.zk, signer.zip(transcript.as_deref()));
    DcApiRequests {
        openid4vp,
        annex_c: annex_c(&device_request, &encryption_info),
        encryption_info,
    }
}

/// R1's request parameters: `response_type`, `response_mode` `dc_api.jwt`, `nonce`,
/// `dcql_query`, and `client_metadata` = the base (a non-object base counts as `{}`)
/// plus `jwks` with the request's public JWK and `encrypted_response_enc_values_supported`.
pub fn openid4vp_data(
    nonce: &str,
    dcql_query: &Value,
    client_metadata: &Value,
    key: &ResponseKey,
) -> Map<String, Value> {
    let mut metadata = client_metadata.as_object().cloned().unwrap_or_default();
    metadata.insert("jwks".into(), json!({"keys": [key.public_jwk()]}));
    metadata.insert(
        "encrypted_response_enc_values_supported".into(),
        json!([super::jwe::ENC]),
    );
    let mut data = Map::new();
    data.insert("response_type".into(), json!("vp_token"));
    data.insert("response_mode".into(), json!("dc_api.jwt"));
    data.insert("nonce".into(), json!(nonce));
    data.insert("dcql_query".into(), dcql_query.clone());
    data.insert("client_metadata".into(), Value::Object(metadata));
    data
}

/// `{"protocol": "openid4vp-v1-unsigned", "data": data}`.
pub fn openid4vp_unsigned(data: Map<String, Value>) -> Value {
    json!({"protocol": PROTOCOL_OPENID4VP_UNSIGNED, "data": data})
}

/// `{"protocol": "openid4vp-v1-signed", "data": {"request": JWS}}`, the JWS payload
/// being `data` plus `client_id` (`x509_hash:…`) and `expected_origins: [origin]`.
pub fn openid4vp_signed(
    mut data: Map<String, Value>,
    origin: &str,
    signer: &RequestSigner,
) -> Value {
    data.insert("client_id".into(), json!(signer.client_id()));
    data.insert("expected_origins".into(), json!([origin]));
    if let Some(info) = signer.verifier_info() {
        data.insert("verifier_info".into(), info.clone());
    }
    let payload = Value::Object(data).to_string();
    let jws = signer.jws(REQUEST_OBJECT_TYP, payload.as_bytes());
    json!({"protocol": PROTOCOL_OPENID4VP_SIGNED, "data": {"request": jws}})
}

/// base64url (no padding) of CBOR `["dcapi", {"nonce": bstr, "recipientPublicKey":
/// COSE_Key}]`.
pub fn encryption_info(key: &ResponseKey, nonce: &[u8]) -> String {
    let mut enc = Enc::default();
    enc.array(2)
        .text("dcapi")
        .map(2)
        .text("nonce")
        .bytes(nonce)
        .text("recipientPublicKey")
        .raw(&key.cose_key());
    b64url(&enc.finish())
}

/// `{"protocol": "org-iso-mdoc", "data": {"deviceRequest", "encryptionInfo"}}`.
pub fn annex_c(device_request: &[u8], encryption_info: &str) -> Value {
    json!({
        "protocol": PROTOCOL_ANNEX_C,
        "data": {"deviceRequest": b64url(device_request), "encryptionInfo": encryption_info},
    })
}

/// The DeviceRequest version sent: "1.1", the one that may carry `deviceRequestInfo`
/// (ISO/IEC 18013-5 second edition); iOS 26's Wallet expects it
/// (docs/dc-api.md#annex-c-on-ios).
pub const DEVICE_REQUEST_VERSION: &str = "1.1";

/// CBOR `DeviceRequest = {"version": "1.1", "docRequests": [DocRequest…],
/// "deviceRequestInfo": DeviceRequestInfoBytes}` (ISO/IEC 18013-5 second edition,
/// section 8.3.2.1.2.1), one DocRequest per docType of `items`, each `{"itemsRequest":
/// ItemsRequestBytes}` plus, with `reader_auth` = (signer, SessionTranscript),
/// `"readerAuth"` over that docRequest's ItemsRequestBytes (unchanged from 1.0). With
/// `zk`, each itemsRequest carries its `requestInfo.zkRequest`.
pub fn device_request(
    items: &[ItemRequest<'_>],
    zk: Option<ZkAsk<'_>>,
    reader_auth: Option<(&RequestSigner, &[u8])>,
) -> Vec<u8> {
    let doc_types = group(items);
    let mut enc = Enc::default();
    enc.map(3)
        .text("version")
        .text(DEVICE_REQUEST_VERSION)
        .text("docRequests")
        .array(doc_types.len());
    for (doc_type, namespaces) in &doc_types {
        let items_request = tag24_encoded(&items_request(doc_type, namespaces, zk));
        enc.map(1 + usize::from(reader_auth.is_some()))
            .text("itemsRequest")
            .raw(&items_request);
        if let Some((signer, session_transcript)) = reader_auth {
            let payload = reader_authentication_bytes(session_transcript, &items_request);
            enc.text("readerAuth")
                .raw(&signer.cose_sign1_detached(&payload));
        }
    }
    enc.text("deviceRequestInfo")
        .raw(&tag24_encoded(&device_request_info(doc_types.len())));
    enc.finish()
}

/// `DeviceRequestInfo = {"useCases": [UseCase]}` with one use case, `{"mandatory": true,
/// "documentSets": [[0], [1], …]}`: any one of the `doc_requests` docRequests (a
/// DocumentSet lists docRequest indices), as the DCQL query's `credential_sets` says.
fn device_request_info(doc_requests: usize) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.map(1)
        .text("useCases")
        .array(1)
        .map(2)
        .text("mandatory")
        .bool(true)
        .text("documentSets")
        .array(doc_requests);
    for index in 0..doc_requests {
        // docRequests are few (one per docType of the kinds table).
        enc.array(1).int(index as i64);
    }
    enc.finish()
}

/// `ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication",
/// SessionTranscript, ItemsRequestBytes])` (ISO/IEC 18013-5 section 9.1.4), the detached
/// payload of `readerAuth`; `items_request_bytes` is the tag-24 item as sent.
pub fn reader_authentication_bytes(
    session_transcript: &[u8],
    items_request_bytes: &[u8],
) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.array(3)
        .text("ReaderAuthentication")
        .raw(session_transcript)
        .raw(items_request_bytes);
    tag24_encoded(&enc.finish())
}

type Namespaces<'a> = Vec<(&'a str, Vec<&'a str>)>;

/// `ItemsRequest = {"docType", "nameSpaces": {ns: {claim: false}}}`; false is
/// IntentToRetain: the gateway keeps no claim. With `zk`, also `"requestInfo":
/// {"zkRequest": ...}` ([`zk_request`]).
fn items_request(doc_type: &str, namespaces: &Namespaces<'_>, zk: Option<ZkAsk<'_>>) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.map(2 + usize::from(zk.is_some()))
        .text("docType")
        .text(doc_type)
        .text("nameSpaces")
        .map(namespaces.len());
    for (namespace, claims) in namespaces {
        enc.text(namespace).map(claims.len());
        for claim in claims {
            enc.text(claim).bool(false);
        }
    }
    if let Some(zk) = zk {
        enc.text("requestInfo").map(1).text("zkRequest");
        zk_request(&mut enc, zk);
    }
    enc.finish()
}

/// `ZkRequest = {"systemSpecs": [ZkSystemSpec], "zkRequired": bool}`, each spec
/// `{"zkSystemId": circuit_hash, "system", "params": {"version", "circuit_hash",
/// "num_attributes", "block_enc_hash", "block_enc_sig"}}` (ISO/IEC 18013-5 second
/// edition; the params as Longfellow and Multipaz name them, numbers as unsigned ints).
fn zk_request(enc: &mut Enc, zk: ZkAsk<'_>) {
    enc.map(2).text("systemSpecs").array(zk.circuits.len());
    for c in zk.circuits {
        // The table's numbers are small (versions, block sizes below 2^16).
        let uint = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        enc.map(3)
            .text("zkSystemId")
            .text(c.circuit_hash)
            .text("system")
            .text(ZK_SYSTEM)
            .text("params")
            .map(5)
            .text("version")
            .int(i64::from(c.version))
            .text("circuit_hash")
            .text(c.circuit_hash)
            .text("num_attributes")
            .int(uint(c.num_attributes))
            .text("block_enc_hash")
            .int(uint(c.block_enc_hash))
            .text("block_enc_sig")
            .int(uint(c.block_enc_sig));
    }
    enc.text("zkRequired").bool(zk.required);
}

/// Groups items by docType, then namespace, in first-seen order, dropping repeats (a CBOR
/// map with a repeated key would be invalid).
fn group<'a>(items: &[ItemRequest<'a>]) -> Vec<(&'a str, Namespaces<'a>)> {
    /// The index of `key`'s entry, appended when new.
    fn entry<'a, T: Default>(list: &mut Vec<(&'a str, T)>, key: &'a str) -> usize {
        list.iter().position(|(k, _)| *k == key).unwrap_or_else(|| {
            list.push((key, T::default()));
            list.len() - 1
        })
    }
    let mut out: Vec<(&'a str, Namespaces<'a>)> = Vec::new();
    for item in items {
        let d = entry(&mut out, item.doc_type);
        let namespaces = &mut out[d].1;
        let n = entry(namespaces, item.namespace);
        let claims = &mut namespaces[n].1;
        if !claims.contains(&item.claim) {
            claims.push(item.claim);
        }
    }
    out
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
