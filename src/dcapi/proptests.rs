//! No input makes the answer parsers panic: arbitrary text, arbitrary bytes in every
//! encoded position, arbitrary JSON, and mutations of valid answers.

use std::sync::OnceLock;

use proptest::prelude::*;
use rand::rngs::OsRng;
use serde_json::{json, Value};

use super::*;

const ORIGIN: &str = "https://gate.example";

struct Fixture {
    key: ResponseKey,
    transcript: Vec<u8>,
    jwe: String,
    annex_c: String,
}

/// One key and one valid answer of each kind, made once.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let key = ResponseKey::generate(&mut OsRng);
        let transcript = transcript::annex_c(&request::encryption_info(&key, &[1; 16]), ORIGIN);
        let claims = json!({"vp_token": {"proof_of_age": [b64url(&[0xa0])]}});
        let jwe = jwe::encrypt(
            &mut OsRng,
            claims.to_string().as_bytes(),
            &key.public_key(),
            None,
        )
        .expect("jwe");
        let sealed = hpke::seal(&mut OsRng, &key.public_key(), &transcript, &[0xa0]).expect("hpke");
        let mut enc = crate::mdoc::cbor::Enc::default();
        enc.array(2)
            .text("dcapi")
            .map(2)
            .text("enc")
            .bytes(&sealed.enc)
            .text("cipherText")
            .bytes(&sealed.ciphertext);
        let annex_c = b64url(&enc.finish());
        Fixture {
            key,
            transcript,
            jwe,
            annex_c,
        }
    })
}

/// Both parsers on `data`; they may only refuse, except that a valid answer may stay valid.
fn both(data: &Value) {
    let f = fixture();
    let _ = response::openid4vp(data, &f.key);
    let _ = response::annex_c(data, &f.key, &f.transcript);
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,64}",
        proptest::collection::vec(any::<u8>(), 0..96).prop_map(|b| b64url(&b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_response_text_is_refused(text in ".{0,600}") {
        let f = fixture();
        let data = json!({ "response": text });
        prop_assert!(response::openid4vp(&data, &f.key).is_err());
        prop_assert!(response::annex_c(&data, &f.key, &f.transcript).is_err());
    }

    #[test]
    fn arbitrary_cbor_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let f = fixture();
        let data = json!({ "response": b64url(&bytes) });
        prop_assert!(response::annex_c(&data, &f.key, &f.transcript).is_err());
    }

    /// Five arbitrary segments (text or base64url of bytes), and a valid header with
    /// arbitrary other segments, so decoding gets past the first checks.
    #[test]
    fn arbitrary_jwe_parts_are_refused(parts in proptest::collection::vec(segment(), 5), keep_header in any::<bool>()) {
        let f = fixture();
        let mut parts = parts;
        if keep_header {
            parts[0] = f.jwe.split('.').next().unwrap_or_default().to_owned();
        }
        let data = json!({ "response": parts.join(".") });
        prop_assert!(response::openid4vp(&data, &f.key).is_err());
    }

    #[test]
    fn arbitrary_json_data_never_panics(text in "[\\[\\]{}\":,a-z0-9 ]{0,200}") {
        if let Ok(data) = serde_json::from_str::<Value>(&text) {
            both(&data);
        }
    }

    /// Any change to a valid answer is refused (AEAD), or decodes to the same text
    /// (a change base64url cannot see); never a panic.
    #[test]
    fn mutated_answers_never_panic(at in any::<prop::sample::Index>(), c in any::<char>()) {
        let f = fixture();
        for (valid, is_jwe) in [(&f.jwe, true), (&f.annex_c, false)] {
            let mut chars: Vec<char> = valid.chars().collect();
            let i = at.index(chars.len());
            chars[i] = c;
            let data = json!({ "response": chars.into_iter().collect::<String>() });
            if is_jwe {
                if let Ok(answer) = response::openid4vp(&data, &f.key) {
                    prop_assert_eq!(answer.device_response, vec![0xa0]);
                }
            } else if let Ok(dr) = response::annex_c(&data, &f.key, &f.transcript) {
                prop_assert_eq!(dr, vec![0xa0]);
            }
        }
    }
}
