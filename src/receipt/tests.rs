use super::*;
use crate::jose::{Alg, Jwk, Jws, PublicKey};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::json;

/// RFC 7515 Appendix A.3: the ES256 example's key (d, x, y) and its JWS.
const A3_D: &str = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI";
const A3_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
const A3_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
const A3_JWS: &str = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";

fn a3_key() -> ReceiptKey {
    ReceiptKey::from_bytes(&URL_SAFE_NO_PAD.decode(A3_D).unwrap()).unwrap()
}

/// The receipt key reads the RFC's private scalar as published, and the key set it
/// publishes checks the RFC's JWS (the JWS itself is `crate::jose`'s, tested there).
#[test]
fn the_rfc_7515_es256_example_verifies_and_its_key_is_read_as_published() {
    let key = a3_key();
    let jwk = key.public_jwk();
    assert_eq!(jwk["x"], A3_X);
    assert_eq!(jwk["y"], A3_Y);
    let keys = VerifyingKeys::from_jwks(&json!({"keys": [jwk]})).unwrap();
    let published = &keys.to_jwks()["keys"][0];
    let public = PublicKey::P256(Jwk::parse(published).unwrap().0.into());
    let verified = Jws::parse(A3_JWS, &[Alg::Es256])
        .unwrap()
        .verify(&public)
        .unwrap();
    assert_eq!(
        serde_json::Value::Object(verified.header),
        json!({"alg": "ES256"})
    );
    assert!(verified.payload.starts_with(b"{\"iss\":\"joe\",\r\n"));
}

fn payload() -> Payload {
    Payload::new(
        &Verified {
            invite_id: "inv",
            site_id: "site".into(),
            custom_id: Some("user-42"),
            at: 1_800_000_000,
            method: "eu-av",
        },
        &Evidence {
            issuer: "https://agegate.example".into(),
            min_age: 18,
            presented: Some(Presented {
                kind: crate::domain::Kind::EU_AV,
                doc_type: "eu.europa.ec.av.1",
                issuer_anchor: [7; 32],
                transport: Transport::OpenId4Vp,
                nonce: "n-1".into(),
                zk_circuit: None,
                credential_status: crate::domain::CredentialStatus::Valid,
            }),
        },
    )
}

#[test]
fn a_receipt_holds_exactly_the_listed_members_in_order() {
    let text = serde_json::to_string(&payload()).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{"iss":"https://agegate.example","sub":"inv","siteId":"site","customId":"user-42","iat":1800000000,"method":"eu-av","minAge":18,"docType":"eu.europa.ec.av.1","issuerAnchor":"{}","transport":"openid4vp","nonceHash":"{}","credentialStatus":"valid"}}"#,
            "07".repeat(32),
            hex(&sha2::Sha256::digest(b"n-1")),
        )
    );
    let sandbox = Payload::new(
        &Verified {
            invite_id: "inv",
            site_id: "site".into(),
            custom_id: None,
            at: 5,
            method: "sandbox",
        },
        &Evidence {
            issuer: "http://127.0.0.1:8080".into(),
            min_age: 21,
            presented: None,
        },
    );
    let value = serde_json::to_value(&sandbox).unwrap();
    for member in [
        "customId",
        "docType",
        "issuerAnchor",
        "transport",
        "nonceHash",
    ] {
        assert_eq!(value[member], serde_json::Value::Null, "{member}");
    }
    // A verification without a presentation has no credential to have a status.
    assert!(value.get("credentialStatus").is_none(), "{value}");
}

#[test]
fn a_signed_receipt_verifies_and_any_changed_character_breaks_it() {
    let key = ReceiptKey::generate();
    let receipt = key.sign(&payload());
    let keys = VerifyingKeys::of(std::slice::from_ref(&key));
    assert_eq!(keys.verify(&receipt), Ok(payload()));
    let header = Jws::parse(&receipt, &[Alg::Es256])
        .unwrap()
        .header()
        .clone();
    assert_eq!(
        serde_json::Value::Object(header),
        json!({"alg": "ES256", "typ": TYP, "kid": key.kid()})
    );
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for i in 0..receipt.len() {
        let mut bytes = receipt.clone().into_bytes();
        if bytes[i] == b'.' {
            continue;
        }
        bytes[i] = if bytes[i] == alphabet[0] {
            alphabet[1]
        } else {
            alphabet[0]
        };
        let tampered = String::from_utf8(bytes).unwrap();
        assert!(
            keys.verify(&tampered).is_err(),
            "byte {i} changed: {tampered}"
        );
    }
}

#[test]
fn a_receipt_is_refused_under_another_key_or_with_other_members() {
    let key = ReceiptKey::generate();
    let other = ReceiptKey::generate();
    let receipt = key.sign(&payload());
    assert!(matches!(
        VerifyingKeys::of(std::slice::from_ref(&other)).verify(&receipt),
        Err(ReceiptError::UnknownKid(_))
    ));
    // The right kid on the wrong key: the signature fails.
    let mut jwk = other.public_jwk();
    jwk["kid"] = json!(key.kid());
    let keys = VerifyingKeys::from_jwks(&json!({"keys": [jwk]})).unwrap();
    assert_eq!(keys.verify(&receipt), Err(ReceiptError::BadSignature));
    // A JWS of the same key whose payload has a member more is not a receipt.
    let mut extra = serde_json::to_value(payload()).unwrap();
    extra["name"] = json!("Jane");
    let header =
        URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "typ": TYP, "kid": key.kid()}).to_string());
    let body = URL_SAFE_NO_PAD.encode(extra.to_string());
    let forged = format!("{header}.{body}.{}", receipt.rsplit('.').next().unwrap());
    assert!(VerifyingKeys::of(&[key]).verify(&forged).is_err());
}

#[test]
fn stored_keys_round_trip_and_key_sets_are_read_strictly() {
    let key = ReceiptKey::generate();
    let back = ReceiptKey::from_bytes(&key.to_bytes()).unwrap();
    assert_eq!(back.kid(), key.kid());
    assert!(ReceiptKey::from_bytes(&[0; 32]).is_err());
    assert!(ReceiptKey::from_bytes(&[1; 31]).is_err());
    for bad in [
        json!({}),
        json!({"keys": []}),
        json!({"keys": [{"kty": "RSA"}]}),
    ] {
        assert!(VerifyingKeys::from_jwks(&bad).is_err(), "{bad}");
    }
    let jwks = VerifyingKeys::of(std::slice::from_ref(&key)).to_jwks();
    assert_eq!(jwks["keys"][0]["use"], "sig");
    assert_eq!(jwks["keys"][0]["alg"], "ES256");
    assert_eq!(jwks["keys"][0]["kid"], key.kid());
}

#[test]
fn a_zero_knowledge_receipt_ends_with_its_circuit_and_round_trips() {
    let mut evidence = Evidence {
        issuer: "https://agegate.example".into(),
        min_age: 18,
        presented: Some(Presented {
            kind: crate::domain::Kind::MDL,
            doc_type: "org.iso.18013.5.1.mDL",
            issuer_anchor: [7; 32],
            transport: Transport::DcApi,
            nonce: "n-1".into(),
            zk_circuit: Some("8d07".into()),
            credential_status: crate::domain::CredentialStatus::Unknown,
        }),
    };
    let verified = Verified {
        invite_id: "inv",
        site_id: "site".into(),
        custom_id: None,
        at: 1_800_000_000,
        method: "mdl",
    };
    let payload = Payload::new(&verified, &evidence);
    let text = serde_json::to_string(&payload).unwrap();
    assert!(
        text.ends_with(r#","zkCircuit":"8d07","credentialStatus":"unknown"}"#),
        "{text}"
    );
    let key = ReceiptKey::generate();
    let keys = VerifyingKeys::of(std::slice::from_ref(&key));
    assert_eq!(keys.verify(&key.sign(&payload)), Ok(payload));
    // A plain presentation's receipt has no such member at all.
    if let Some(p) = evidence.presented.as_mut() {
        p.zk_circuit = None;
    }
    let plain = serde_json::to_value(Payload::new(&verified, &evidence)).unwrap();
    assert!(plain.get("zkCircuit").is_none(), "{plain}");
}

#[test]
fn a_stored_receipt_tells_its_recorded_status_and_others_none() {
    let key = ReceiptKey::generate();
    let signed = key.sign(&payload());
    assert_eq!(
        recorded_status(&signed),
        Some(crate::domain::CredentialStatus::Valid)
    );
    let mut verifier = payload();
    verifier.credential_status = None;
    assert_eq!(recorded_status(&key.sign(&verifier)), None);
    for broken in ["", "a.b.c", "a..c", "a.!!.c"] {
        assert_eq!(recorded_status(broken), None, "{broken}");
    }
}
