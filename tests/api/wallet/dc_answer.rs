//! The wallet over the W3C Digital Credentials API (docs/dc-api.md), answering: the
//! `credential.data` a browser would hand the page for R1 or R2 ([`super::dc_api`]) — a
//! valid answer by default, or any of the wrong ones the knobs of [`DcAnswer`] describe.
//!
//! The JWK thumbprint (RFC 7638) and both SessionTranscripts are built here from the
//! standards with ciborium and sha2, independently of `agegate::dcapi`; only the
//! envelopes (JWE ECDH-ES + A128GCM, HPKE base mode) use its wallet-side `encrypt` and
//! `seal`, which are proven against published vectors there.

use super::dc_api::{jwk_point, DcAnnexC, DcOpenId4Vp};
use super::{Presentation, TestIssuer};
use agegate::testkit::{cbor, sha256, text};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::PublicKey;
use serde_json::{json, Value as Json};

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

impl DcAnswer {
    /// The key the answer goes to: the request's, or another one.
    fn recipient(&self, request_key: &PublicKey) -> PublicKey {
        if self.other_recipient {
            fresh_key()
        } else {
            *request_key
        }
    }
}

/// The wallet's answers through the Digital Credentials API, with the kit's issuer (the
/// answers are provided here, so their signatures are written once).
pub trait DcWallet {
    /// The issuer's DeviceResponse (CBOR) for `p`, over `transcript`.
    fn device_response_over(&self, transcript: Value, p: &Presentation) -> Vec<u8>;

    /// `credential.data` answering R1 for a page at `origin`.
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
        let device_response = self.device_response_over(transcript, p);
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
        let recipient = a.recipient(&req.recipient);
        jwe_to(&recipient, req.kid.as_deref(), &payload)
    }

    /// `credential.data` answering R2 for a page at `origin`.
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
        let device_response = self.device_response_over(transcript, p);
        let recipient = a.recipient(&req.recipient);
        sealed_to(&recipient, &info, &device_response)
    }
}

impl DcWallet for TestIssuer {
    fn device_response_over(&self, transcript: Value, p: &Presentation) -> Vec<u8> {
        self.device_response_cbor_over(transcript, p)
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
    jwe_to(&jwk_point(jwk), jwk["kid"].as_str(), payload)["response"]
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
