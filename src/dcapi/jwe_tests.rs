use rand::rngs::OsRng;

use super::super::test_util::b64;
use super::*;
use crate::jose::jwk::public_key_from_xy;

/// RFC 7518 Appendix C's keys: Alice (sender, ephemeral) and Bob (recipient).
const ALICE_D: &str = "0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo";
const ALICE_X: &str = "gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0";
const ALICE_Y: &str = "SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps";
const BOB_D: &str = "VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw";

fn bob() -> ResponseKey {
    ResponseKey::from_bytes(&b64(BOB_D)).expect("bob")
}

fn alice_scalar() -> NonZeroScalar {
    let bytes = b64(ALICE_D);
    Option::from(NonZeroScalar::from_repr(*p256::FieldBytes::from_slice(
        &bytes,
    )))
    .expect("alice")
}

/// RFC 7518 Appendix C ("Example ECDH-ES Key Agreement Computation"): the shared
/// secret Z both ways, and the derived A128GCM key with apu "Alice", apv "Bob".
#[test]
fn rfc7518_appendix_c_key_agreement() {
    let z_expected: [u8; 32] = [
        158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156, 251, 49, 110,
        163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196,
    ];
    let alice_pub = public_key_from_xy(&b64(ALICE_X), &b64(ALICE_Y)).expect("alice pub");
    assert_eq!(PublicKey::from_secret_scalar(&alice_scalar()), alice_pub);
    let z_bob = diffie_hellman(bob().secret().to_nonzero_scalar(), alice_pub.as_affine());
    let z_alice = diffie_hellman(alice_scalar(), bob().public_key().as_affine());
    assert_eq!(z_bob.raw_secret_bytes().as_slice(), z_expected);
    assert_eq!(z_alice.raw_secret_bytes().as_slice(), z_expected);

    let cek = derive_cek(&z_expected, b"Alice", b"Bob");
    assert_eq!(
        cek,
        [86, 170, 141, 234, 248, 35, 109, 32, 92, 34, 40, 205, 113, 167, 16, 26]
    );
    assert_eq!(b64url(&cek), "VqqN6vgjbSBcIijNcacQGg");
}

/// The same exchange end to end: a JWE built with Alice's key as the ephemeral one and
/// apu/apv in the header decrypts with Bob's key (so decrypt reads apu/apv).
#[test]
fn rfc7518_appendix_c_keys_round_trip_with_party_info() {
    let jwe = seal(
        Enc::A128Gcm,
        &alice_scalar(),
        &[7; 12],
        b"{}",
        &bob().public_key(),
        None,
        Some((b"Alice", b"Bob")),
    )
    .expect("encrypt");
    assert_eq!(decrypt(&jwe, &bob()).expect("decrypt"), b"{}");
    // Without apu/apv the key differs, so the tag fails.
    let header = header_of(&jwe);
    let stripped = with_header(&jwe, |h| {
        h.remove("apu");
        h.remove("apv");
    });
    assert_ne!(header, header_of(&stripped));
    assert_eq!(decrypt(&stripped, &bob()), Err(JweError::Decryption));
}

/// OpenID4VP 1.0 section 8.3 (Encrypted Responses): the published example response and the
/// private key given to decrypt it, verbatim from the spec source
/// (github.com/openid/OpenID4VP, 1.0/openid-4-verifiable-presentations-1_0.md). Made by
/// another implementation, with a `kid` that is not ours (it is ignored).
#[test]
fn openid4vp_8_3_example_response_decrypts() {
    let jwe = concat!(
        "eyJhbGciOiJFQ0RILUVTIiwiZW5jIjoiQTEyOEdDTSIsImtpZCI6ImFjIiwiZXBrIjp7Imt",
        "0eSI6IkVDIiwieCI6Im5ubVZwbTNWM2piaGNhZlFhUkJrU1ZOSGx3Wkh3dC05ck9wSnVmeVlJdWsiLCJ5I",
        "joicjRmakRxd0p5czlxVU9QLV9iM21SNVNaRy0tQ3dPMm1pYzVWU05UWU45ZyIsImNydiI6IlAtMjU2In1",
        "9..uAYcHRUSSn2X0WPX.yVzlGSYG4qbg0bq18JcUiDRw56yVnbKR8E7S7YlEtzT00RqE3Pw5oTpUG3hdLN",
        "4taHZ9gC1kwak8JOnJgQ.1wR024_3-qtAlx1oFIUpQQ",
    );
    let key =
        ResponseKey::from_bytes(&b64("Et-3ce0omz8_TuZ96Df9lp0GAaaDoUnDe6X-CRO7Aww")).expect("key");
    let jwk = key.public_jwk();
    assert_eq!(jwk["x"], "YO4epjifD-KWeq1sL2tNmm36BhXnkJ0He-WqMYrp9Fk");
    assert_eq!(jwk["y"], "Hekpm0zfK7C-YccH5iBjcIXgf6YdUvNUac_0At55Okk");
    let plaintext = decrypt(jwe, &key).expect("decrypts");
    let claims: Value = serde_json::from_slice(&plaintext).expect("json");
    assert_eq!(
        claims,
        json!({"vp_token": {"example_credential_id": ["eyJhb...YMetA"]}})
    );
    assert_eq!(decrypt(jwe, &bob()), Err(JweError::Decryption));
}

/// Made offline with Python jwcrypto 1.6.1 (JWE, alg ECDH-ES, enc A128GCM, kid "bob",
/// apu "wallet", apv "verifier-nonce") to RFC 7518 Appendix C's Bob key.
#[test]
fn jwcrypto_made_jwe_with_party_info_decrypts() {
    let jwe = concat!(
        "eyJhbGciOiJFQ0RILUVTIiwiYXB1IjoiZDJGc2JHVjAiLCJhcHYiOiJkbVZ5YVdacFpYSXRibTl1WTJV",
        "IiwiZW5jIjoiQTEyOEdDTSIsImVwayI6eyJjcnYiOiJQLTI1NiIsImt0eSI6IkVDIiwieCI6InJHU2s3",
        "d3l5WmtlVGs3bFBaNDNUR3Vpd1RzVVhnb1VES3ZfdnRXUFhaTmMiLCJ5IjoiMHZpNnZQQTU2VXQzZXZJ",
        "R04ta3lTQzFmajRnbmRGTXpTcW54dzAyN09UZyJ9LCJraWQiOiJib2IifQ..m77ugt9qO0wuJ_-V.rze_",
        "MvbBTlCbcydVnPV0qmmv7d0FO3p7v1dwZ7DLUqfT9qyHsPpYyT3izo7D2WRqsHiSUQ.jWccLnLxyzGUHL",
        "j3OZoAFQ",
    );
    assert_eq!(
        decrypt(jwe, &bob()).expect("decrypts"),
        br#"{"vp_token":{"proof_of_age":["o2d2ZXJzaW9uYzEuMA"]}}"#
    );
}

#[test]
fn round_trip_with_a_fresh_key() {
    let key = ResponseKey::generate(&mut OsRng);
    let plaintext = br#"{"vp_token":{"proof_of_age":["o2Q"]}}"#;
    let kid = key.kid();
    let jwe = encrypt(&mut OsRng, plaintext, &key.public_key(), Some(&kid)).expect("encrypt");
    assert_eq!(header_of(&jwe)["kid"], json!(kid));
    assert_eq!(decrypt(&jwe, &key).expect("decrypt"), plaintext);
    let other = ResponseKey::generate(&mut OsRng);
    assert_eq!(decrypt(&jwe, &other), Err(JweError::Decryption));
    let big = vec![0u8; MAX_RESPONSE_LEN + 1];
    assert_eq!(
        encrypt(&mut OsRng, &big, &key.public_key(), None),
        Err(JweError::TooLarge)
    );
}

fn valid() -> (ResponseKey, String) {
    let key = ResponseKey::generate(&mut OsRng);
    let jwe = encrypt(&mut OsRng, b"hello", &key.public_key(), None).expect("encrypt");
    (key, jwe)
}

fn header_of(jwe: &str) -> Map<String, Value> {
    let b = b64url_decode(jwe.split('.').next().expect("header")).expect("b64");
    serde_json::from_slice(&b).expect("json")
}

/// `jwe` with its protected header changed by `edit` (the tag no longer matches, but
/// every header check comes before decryption).
fn with_header(jwe: &str, edit: impl FnOnce(&mut Map<String, Value>)) -> String {
    let mut header = header_of(jwe);
    edit(&mut header);
    let rest = jwe.split_once('.').expect("dot").1;
    format!(
        "{}.{rest}",
        b64url(Value::Object(header).to_string().as_bytes())
    )
}

fn with_part(jwe: &str, index: usize, value: &str) -> String {
    let mut parts: Vec<&str> = jwe.split('.').collect();
    parts[index] = value;
    parts.join(".")
}

#[test]
fn each_header_fault_has_its_own_error() {
    let (key, jwe) = valid();
    let case = |edit: fn(&mut Map<String, Value>)| decrypt(&with_header(&jwe, edit), &key);
    assert_eq!(
        case(|h| drop(h.insert("alg".into(), json!("ECDH-ES+A128KW")))),
        Err(JweError::UnsupportedAlg)
    );
    assert_eq!(
        case(|h| drop(h.insert("alg".into(), json!("dir")))),
        Err(JweError::UnsupportedAlg)
    );
    assert_eq!(
        case(|h| drop(h.remove("alg"))),
        Err(JweError::UnsupportedAlg)
    );
    assert_eq!(
        case(|h| drop(h.insert("enc".into(), json!("A256GCM")))),
        Err(JweError::UnsupportedEnc)
    );
    assert_eq!(
        case(|h| drop(h.insert("zip".into(), json!("DEF")))),
        Err(JweError::UnsupportedHeader)
    );
    assert_eq!(
        case(|h| drop(h.insert("crit".into(), json!(["exp"])))),
        Err(JweError::UnsupportedHeader)
    );
    assert_eq!(case(|h| drop(h.remove("epk"))), Err(JweError::MissingEpk));
    assert_eq!(
        case(|h| drop(h.insert("epk".into(), json!("key")))),
        Err(JweError::InvalidEpk)
    );
    assert_eq!(
        case(|h| h["epk"]["kty"] = json!("OKP")),
        Err(JweError::InvalidEpk)
    );
    assert_eq!(
        case(|h| h["epk"]["x"] = json!("AAAA")),
        Err(JweError::InvalidEpk)
    );
    assert_eq!(
        case(|h| h["epk"]["y"] = json!(7)),
        Err(JweError::InvalidEpk)
    );
    assert_eq!(
        case(|h| h["epk"]["crv"] = json!("P-384")),
        Err(JweError::WrongCurve)
    );
    // x = 1, y = 2 is not on P-256 (an invalid-curve attack's kind of point).
    assert_eq!(
        case(|h| {
            let mut x = [0u8; 32];
            x[31] = 1;
            let mut y = [0u8; 32];
            y[31] = 2;
            h["epk"]["x"] = json!(b64url(&x));
            h["epk"]["y"] = json!(b64url(&y));
        }),
        Err(JweError::PointNotOnCurve)
    );
    assert_eq!(
        case(|h| drop(h.insert("apu".into(), json!(1)))),
        Err(JweError::InvalidPartyInfo("apu"))
    );
    assert_eq!(
        case(|h| drop(h.insert("apv".into(), json!("*")))),
        Err(JweError::InvalidPartyInfo("apv"))
    );
    // A header change that passes every check still breaks the tag (the AAD).
    assert_eq!(
        case(|h| drop(h.insert("kid".into(), json!("x")))),
        Err(JweError::Decryption)
    );
}

#[test]
fn each_structural_fault_has_its_own_error() {
    let (key, jwe) = valid();
    assert_eq!(decrypt("a.b.c.d", &key), Err(JweError::NotCompact));
    assert_eq!(
        decrypt(&format!("{jwe}.x"), &key),
        Err(JweError::NotCompact)
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 0, "!"), &key),
        Err(JweError::NotBase64Url("header"))
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 0, "WzFd"), &key),
        Err(JweError::HeaderNotJson)
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 1, "AAAA"), &key),
        Err(JweError::EncryptedKeyPresent)
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 2, "AAAA"), &key),
        Err(JweError::BadIv)
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 2, "A"), &key),
        Err(JweError::NotBase64Url("iv"))
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 3, "?"), &key),
        Err(JweError::NotBase64Url("ciphertext"))
    );
    assert_eq!(
        decrypt(&with_part(&jwe, 4, "AAAA"), &key),
        Err(JweError::BadTagLength)
    );
    assert_eq!(
        decrypt(&"a".repeat(MAX_RESPONSE_LEN + 1), &key),
        Err(JweError::TooLarge)
    );
    // A flipped tag bit or ciphertext bit fails authentication.
    let parts: Vec<&str> = jwe.split('.').collect();
    let mut tag = b64url_decode(parts[4]).expect("tag");
    tag[0] ^= 1;
    assert_eq!(
        decrypt(&with_part(&jwe, 4, &b64url(&tag)), &key),
        Err(JweError::Decryption)
    );
    let mut ct = b64url_decode(parts[3]).expect("ct");
    ct[0] ^= 1;
    assert_eq!(
        decrypt(&with_part(&jwe, 3, &b64url(&ct)), &key),
        Err(JweError::Decryption)
    );
}
