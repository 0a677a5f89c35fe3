use rand::rngs::OsRng;
use serde_json::json;

use super::super::{b64url, transcript};
use super::*;

const ORIGIN: &str = "https://gate.example";
const DEVICE_RESPONSE: &[u8] = &[
    0xa1, 0x67, b'v', b'e', b'r', b's', b'i', b'o', b'n', 0x63, b'1', b'.', b'0',
];

fn key() -> ResponseKey {
    ResponseKey::generate(&mut OsRng)
}

/// `data` of an R1 answer: `claims` encrypted to `key` as a wallet does.
fn jwe_data(key: &ResponseKey, claims: &Value) -> Value {
    let jwe = jwe::encrypt(
        &mut OsRng,
        claims.to_string().as_bytes(),
        &key.public_key(),
        Some(&key.kid()),
    )
    .expect("encrypt");
    json!({ "response": jwe })
}

fn vp_token(id: &str, presentations: Value) -> Value {
    json!({"vp_token": {id: presentations}})
}

#[test]
fn openid4vp_answer_round_trip() {
    let key = key();
    let data = jwe_data(
        &key,
        &vp_token("proof_of_age", json!([b64url(DEVICE_RESPONSE)])),
    );
    let answer = openid4vp(&data, &key).expect("answer");
    assert_eq!(answer.credential_id, "proof_of_age");
    assert_eq!(answer.device_response, DEVICE_RESPONSE);
    // Another request's key cannot read it.
    assert_eq!(
        openid4vp(&data, &self::key()),
        Err(ResponseError::Jwe(JweError::Decryption))
    );
}

#[test]
fn openid4vp_envelope_faults() {
    let key = key();
    let case = |data: Value| openid4vp(&data, &key);
    assert_eq!(case(json!("x")), Err(ResponseError::NotAnObject));
    assert_eq!(case(json!({})), Err(ResponseError::MissingResponse));
    assert_eq!(
        case(vp_token("proof_of_age", json!([b64url(DEVICE_RESPONSE)]))),
        Err(ResponseError::Unencrypted)
    );
    assert_eq!(
        case(json!({"error": "access_denied", "error_description": "user said no"})),
        Err(ResponseError::WalletError("access_denied".into()))
    );
    assert_eq!(
        case(json!({"error": "a\u{7}b\u{e9}c".to_owned() + &"d".repeat(100)})),
        Err(ResponseError::WalletError(
            "abc".to_owned() + &"d".repeat(61)
        ))
    );
    assert_eq!(
        case(json!({"response": 1})),
        Err(ResponseError::ResponseNotString)
    );
    assert_eq!(
        case(json!({"response": "a".repeat(MAX_RESPONSE_LEN + 1)})),
        Err(ResponseError::TooLarge)
    );
    assert_eq!(
        case(json!({"response": "a.b.c"})),
        Err(ResponseError::Jwe(JweError::NotCompact))
    );
}

#[test]
fn openid4vp_payload_faults() {
    let key = key();
    let case = |claims: Value| openid4vp(&jwe_data(&key, &claims), &key);
    let dr = json!([b64url(DEVICE_RESPONSE)]);
    assert_eq!(case(json!([1])), Err(ResponseError::PayloadNotJson));
    assert_eq!(
        case(json!({"state": "s"})),
        Err(ResponseError::MissingVpToken)
    );
    assert_eq!(
        case(json!({"vp_token": "abc"})),
        Err(ResponseError::MissingVpToken)
    );
    assert_eq!(
        case(json!({"error": "invalid_request"})),
        Err(ResponseError::WalletError("invalid_request".into()))
    );
    assert_eq!(
        case(json!({"vp_token": {}})),
        Err(ResponseError::NoCredential)
    );
    assert_eq!(
        case(json!({"vp_token": {"pid": dr, "mdl": dr}})),
        Err(ResponseError::SeveralCredentials)
    );
    for presentations in [json!([]), json!(["a", "b"]), json!([1]), json!("abc")] {
        assert_eq!(
            case(vp_token("pid", presentations)),
            Err(ResponseError::NotOnePresentation)
        );
    }
    assert_eq!(
        case(vp_token("pid", json!(["***"]))),
        Err(ResponseError::PresentationNotBase64Url)
    );
}

/// `data` of an R2 answer: `["dcapi", {"enc", "cipherText"}]` as CBOR, base64url.
fn annex_c_data(fields: Vec<(&str, Cbor)>) -> Value {
    let value = Cbor::Array(vec![
        Cbor::Text("dcapi".into()),
        Cbor::Map(
            fields
                .into_iter()
                .map(|(k, v)| (Cbor::Text(k.into()), v))
                .collect(),
        ),
    ]);
    json!({"response": b64url(&cbor_bytes(&value))})
}

fn cbor_bytes(value: &Cbor) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::ser::into_writer(value, &mut out).expect("encode");
    out
}

fn sealed_data(key: &ResponseKey, session_transcript: &[u8]) -> (Value, hpke::Sealed) {
    let sealed = hpke::seal(
        &mut OsRng,
        &key.public_key(),
        session_transcript,
        DEVICE_RESPONSE,
    )
    .expect("seal");
    let data = annex_c_data(vec![
        ("enc", Cbor::Bytes(sealed.enc.clone())),
        ("cipherText", Cbor::Bytes(sealed.ciphertext.clone())),
    ]);
    (data, sealed)
}

#[test]
fn annex_c_answer_round_trip_and_origin_binding() {
    let key = key();
    let info = super::super::request::encryption_info(&key, &[1; 16]);
    let st = transcript::annex_c(&info, ORIGIN);
    let (data, _) = sealed_data(&key, &st);
    assert_eq!(annex_c(&data, &key, &st).as_deref(), Ok(DEVICE_RESPONSE));
    // Made for another origin: it does not open.
    let elsewhere = transcript::annex_c(&info, "https://evil.example");
    assert_eq!(
        annex_c(&data, &key, &elsewhere),
        Err(ResponseError::Hpke(HpkeError::Decryption))
    );
}

#[test]
fn annex_c_faults() {
    let key = key();
    let st = transcript::annex_c("info", ORIGIN);
    let (_, sealed) = sealed_data(&key, &st);
    let case = |data: Value| annex_c(&data, &key, &st);
    let enc = || ("enc", Cbor::Bytes(sealed.enc.clone()));
    let ct = || ("cipherText", Cbor::Bytes(sealed.ciphertext.clone()));
    assert_eq!(case(json!([])), Err(ResponseError::NotAnObject));
    assert_eq!(case(json!({})), Err(ResponseError::MissingResponse));
    assert_eq!(
        case(json!({"error": "user_cancelled"})),
        Err(ResponseError::WalletError("user_cancelled".into()))
    );
    assert_eq!(
        case(json!({"response": null})),
        Err(ResponseError::ResponseNotString)
    );
    assert_eq!(
        case(json!({"response": "A".repeat(MAX_RESPONSE_LEN + 1)})),
        Err(ResponseError::TooLarge)
    );
    assert_eq!(
        case(json!({"response": "a+b/"})),
        Err(ResponseError::NotBase64Url)
    );
    assert_eq!(
        case(json!({"response": b64url(&[0xa1])})),
        Err(ResponseError::NotCbor)
    );
    assert_eq!(
        case(json!({"response": b64url(&[0x01, 0x02])})),
        Err(ResponseError::NotCbor)
    );
    let other = Cbor::Array(vec![Cbor::Text("other".into()), Cbor::Map(vec![])]);
    assert_eq!(
        case(json!({"response": b64url(&cbor_bytes(&other))})),
        Err(ResponseError::NotDcapiResponse)
    );
    assert_eq!(
        case(json!({"response": b64url(&cbor_bytes(&Cbor::Text("dcapi".into())))})),
        Err(ResponseError::NotDcapiResponse)
    );
    assert_eq!(
        case(annex_c_data(vec![ct()])),
        Err(ResponseError::MissingEnc)
    );
    assert_eq!(
        case(annex_c_data(vec![enc(), enc(), ct()])),
        Err(ResponseError::MissingEnc)
    );
    assert_eq!(
        case(annex_c_data(vec![("enc", Cbor::Text("x".into())), ct()])),
        Err(ResponseError::MissingEnc)
    );
    assert_eq!(
        case(annex_c_data(vec![enc()])),
        Err(ResponseError::MissingCipherText)
    );
    assert_eq!(
        case(annex_c_data(vec![("enc", Cbor::Bytes(vec![4; 65])), ct()])),
        Err(ResponseError::Hpke(HpkeError::BadEncapsulatedKey))
    );
    // Field order does not matter.
    assert_eq!(
        case(annex_c_data(vec![ct(), enc()])).as_deref(),
        Ok(DEVICE_RESPONSE)
    );
}

#[test]
fn messages_are_short_and_name_the_fault() {
    for e in [
        ResponseError::Unencrypted,
        ResponseError::Jwe(JweError::UnsupportedAlg),
        ResponseError::Hpke(HpkeError::Decryption),
        ResponseError::NotDcapiResponse,
    ] {
        let message = e.to_string();
        assert!(!message.is_empty() && message.len() < 100, "{message}");
    }
    assert_eq!(
        ResponseError::Jwe(JweError::WrongCurve).to_string(),
        "JWE epk is not on curve P-256"
    );
}
