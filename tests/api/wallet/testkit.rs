//! Fixtures for the self-tests, and a reader that takes the wallet's answers apart again.

use super::{cbor, session_transcript, sha256, sig_structure};
use super::{AuthorizationRequest, Presentation, TestIssuer, AV_NAMESPACE};
use agegate::testkit::text;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::ecdsa::{Signature, VerifyingKey};

pub(super) const T: i64 = 1_800_000_000;

pub(super) fn sample_uri() -> String {
    let response_uri = "http://127.0.0.1:4000/gateway/inv_abc/openid4vp";
    let dcql = r#"{"credentials":[{"id":"proof_of_age","format":"mso_mdoc","meta":{"doctype_value":"eu.europa.ec.av.1"},"claims":[{"path":["eu.europa.ec.av.1","age_over_18"]}]}]}"#;
    let meta = r#"{"vp_formats_supported":{"mso_mdoc":{"issuerauth_alg_values":[-7],"deviceauth_alg_values":[-7]}}}"#;
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "vp_token")
        .append_pair("response_mode", "direct_post")
        .append_pair("response_uri", response_uri)
        .append_pair("client_id", &format!("redirect_uri:{response_uri}"))
        .append_pair("nonce", "n-0S6_WzA2Mj+/&=")
        .append_pair("state", "st4te")
        .append_pair("dcql_query", dcql)
        .append_pair("client_metadata", meta)
        .finish();
    format!("av://authorize?{query}")
}

pub(super) fn sample_request() -> AuthorizationRequest {
    AuthorizationRequest::parse(&sample_uri())
}

/// `v[key]` of a CBOR map with text keys.
pub(super) fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.as_map()
        .unwrap_or_else(|| panic!("not a map looking for {key}: {v:?}"))
        .iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key} in {v:?}"))
}

pub(super) fn int_key(v: &Value, key: i64) -> Option<&Value> {
    v.as_map()?
        .iter()
        .find(|(k, _)| k.as_integer().map(i128::from) == Some(key.into()))
        .map(|(_, v)| v)
}

pub(super) fn decode(bytes: &[u8]) -> Value {
    ciborium::from_reader(bytes).unwrap()
}

/// The bstr inside a #6.24 value.
pub(super) fn untag24(v: &Value) -> &[u8] {
    match v {
        Value::Tag(24, inner) => inner.as_bytes().expect("tag 24 holds a bstr"),
        _ => panic!("expected #6.24(bstr), got {v:?}"),
    }
}

pub(super) struct Decoded {
    pub(super) raw: Vec<u8>,
    pub(super) response: Value,
}

impl Decoded {
    pub(super) fn new(issuer: &TestIssuer, req: &AuthorizationRequest, p: &Presentation) -> Self {
        let token: serde_json::Value = serde_json::from_str(&issuer.vp_token(req, p)).unwrap();
        let raw = URL_SAFE_NO_PAD
            .decode(token["proof_of_age"][0].as_str().unwrap())
            .unwrap();
        let response = decode(&raw);
        Decoded { raw, response }
    }
    pub(super) fn document(&self) -> &Value {
        &get(&self.response, "documents").as_array().unwrap()[0]
    }
    pub(super) fn issuer_auth(&self) -> &[Value] {
        get(get(self.document(), "issuerSigned"), "issuerAuth")
            .as_array()
            .unwrap()
    }
    pub(super) fn mso(&self) -> Value {
        decode(untag24(&decode(self.issuer_auth()[2].as_bytes().unwrap())))
    }
    pub(super) fn items(&self) -> &[Value] {
        get(
            get(get(self.document(), "issuerSigned"), "nameSpaces"),
            AV_NAMESPACE,
        )
        .as_array()
        .unwrap()
    }
    pub(super) fn device_signature(&self) -> &[Value] {
        get(
            get(get(self.document(), "deviceSigned"), "deviceAuth"),
            "deviceSignature",
        )
        .as_array()
        .unwrap()
    }
    /// Every disclosed item's digest equals its MSO entry.
    pub(super) fn digests_match(&self) -> bool {
        let mso = self.mso();
        let digests = get(get(&mso, "valueDigests"), AV_NAMESPACE);
        self.items().iter().all(|item| {
            let encoded = cbor(item);
            assert!(
                self.raw.windows(encoded.len()).any(|w| w == encoded),
                "an item re-encodes to other bytes than those sent"
            );
            let id = get(&decode(untag24(item)), "digestID")
                .as_integer()
                .unwrap();
            int_key(digests, i128::from(id) as i64)
                .is_some_and(|d| d.as_bytes().unwrap()[..] == sha256(&encoded))
        })
    }
    pub(super) fn issuer_signature_ok(&self, ds_cert_der: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier as _;
        use x509_cert::der::Decode as _;
        let cert = x509_cert::Certificate::from_der(ds_cert_der).unwrap();
        let spki = cert
            .tbs_certificate
            .subject_public_key_info
            .subject_public_key
            .raw_bytes();
        let key = VerifyingKey::from_sec1_bytes(spki).unwrap();
        let sign1 = self.issuer_auth();
        let protected = sign1[0].as_bytes().unwrap();
        let sig = Signature::from_slice(sign1[3].as_bytes().unwrap()).unwrap();
        key.verify(
            &sig_structure(protected, sign1[2].as_bytes().unwrap()),
            &sig,
        )
        .is_ok()
    }
    /// Rebuilds DeviceAuthenticationBytes from the request (not from the knobs) and checks
    /// the detached device signature with the MSO's deviceKey.
    pub(super) fn device_signature_ok(&self, req: &AuthorizationRequest) -> bool {
        use p256::ecdsa::signature::Verifier as _;
        let mso = self.mso();
        let cose_key = get(get(&mso, "deviceKeyInfo"), "deviceKey");
        assert_eq!(int_key(cose_key, 1), Some(&Value::Integer(2.into())));
        assert_eq!(int_key(cose_key, -1), Some(&Value::Integer(1.into())));
        let mut sec1 = vec![0x04];
        sec1.extend_from_slice(int_key(cose_key, -2).unwrap().as_bytes().unwrap());
        sec1.extend_from_slice(int_key(cose_key, -3).unwrap().as_bytes().unwrap());
        let key = VerifyingKey::from_sec1_bytes(&sec1).unwrap();

        let transcript = session_transcript(&req.client_id, &req.nonce, None, &req.response_uri);
        let doc_type = get(self.document(), "docType").clone();
        let name_spaces = get(get(self.document(), "deviceSigned"), "nameSpaces").clone();
        let device_auth = Value::Array(vec![
            text("DeviceAuthentication"),
            transcript,
            doc_type,
            name_spaces,
        ]);
        let mut device_auth_bytes = vec![0xd8, 0x18]; // tag 24, then bstr .cbor
        let inner = cbor(&device_auth);
        device_auth_bytes.extend(cbor(&Value::Bytes(inner)));

        let sign1 = self.device_signature();
        assert_eq!(sign1[2], Value::Null, "payload must be detached");
        let sig = Signature::from_slice(sign1[3].as_bytes().unwrap()).unwrap();
        key.verify(
            &sig_structure(sign1[0].as_bytes().unwrap(), &device_auth_bytes),
            &sig,
        )
        .is_ok()
    }
}

pub(super) fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
