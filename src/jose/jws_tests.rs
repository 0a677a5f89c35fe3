use super::*;
use crate::jose::jwk::Jwk;
use serde_json::json;

/// RFC 7515 Appendix A.3: the ES256 example's key (d, x, y) and its JWS.
const A3_D: &str = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI";
const A3_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
const A3_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
const A3_JWS: &str = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";

fn a3_public() -> PublicKey {
    let jwk = Jwk::parse(&json!({"kty": "EC", "crv": "P-256", "x": A3_X, "y": A3_Y}))
        .expect("the example key");
    PublicKey::P256(jwk.0.into())
}

fn key() -> SigningKey {
    SigningKey::from_slice(&URL_SAFE_NO_PAD.decode(A3_D).expect("d")).expect("key")
}

#[test]
fn the_rfc_7515_a3_example_verifies_and_a_flipped_bit_does_not() {
    let jws = Jws::parse(A3_JWS, &[Alg::Es256]).expect("parse");
    assert_eq!(jws.alg(), Alg::Es256);
    let verified = jws.verify(&a3_public()).expect("verifies");
    assert_eq!(Value::Object(verified.header), json!({"alg": "ES256"}));
    assert!(verified.payload.starts_with(b"{\"iss\":\"joe\",\r\n"));
    let tampered = A3_JWS.replace("6NU1Q", "6NU1A");
    let jws = Jws::parse(&tampered, &[Alg::Es256]).expect("parse");
    assert_eq!(jws.verify(&a3_public()), Err(JwsError::BadSignature));
}

#[test]
fn signed_jws_verifies_with_its_header_and_payload() {
    let mut header = Map::new();
    header.insert("typ".into(), json!("example+jwt"));
    header.insert("x5c".into(), x5c(&[vec![1, 2, 3], vec![4]]));
    let jws = sign_es256(&key(), header, br#"{"a":1}"#);
    let parsed = Jws::parse(&jws, &[Alg::Es256]).expect("parse");
    assert_eq!(parsed.text("typ"), Some("example+jwt"));
    assert_eq!(parsed.header()["x5c"], json!(["AQID", "BA=="]));
    assert_eq!(parsed.x5c(), Some(Ok(vec![vec![1, 2, 3], vec![4]])));
    let verified = parsed.verify(&a3_public()).expect("verifies");
    assert_eq!(verified.payload, br#"{"a":1}"#);
    assert_eq!(verified.header["alg"], "ES256");
    let other = SigningKey::from_slice(&[7; 32]).expect("key");
    let other = PublicKey::P256(*other.verifying_key());
    let parsed = Jws::parse(&jws, &[Alg::Es256]).expect("parse");
    assert_eq!(parsed.verify(&other), Err(JwsError::BadSignature));
}

fn with_header(header: Value) -> String {
    format!(
        "{}.{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(b"{}"),
        b64url(&[0; 64])
    )
}

#[test]
fn each_fault_is_named() {
    let parse = |jws: &str| Jws::parse(jws, &[Alg::Es256]).map(|_| ()).unwrap_err();
    assert_eq!(parse("a.b"), JwsError::NotCompact);
    assert_eq!(parse("a.b.c.d"), JwsError::NotCompact);
    assert_eq!(parse("*.b.c"), JwsError::NotBase64Url("header"));
    // Padding is refused: one spelling per value.
    assert_eq!(
        parse(&format!("{}.e30=.AA", b64url(b"{}"))),
        JwsError::NotBase64Url("payload")
    );
    assert_eq!(
        parse(&format!("{}.e30.AA", b64url(b"{}"))),
        JwsError::AlgNotAccepted(None)
    );
    assert_eq!(
        parse(&format!("{}.e30.AA", b64url(b"[]"))),
        JwsError::HeaderNotJson
    );
    assert_eq!(
        parse(&with_header(json!({"alg": "none"}))),
        JwsError::AlgNotAccepted(Some("none".into()))
    );
    assert_eq!(
        parse(&with_header(json!({"alg": "ES256", "crit": ["b64"]}))),
        JwsError::Critical
    );
    // An algorithm agegate knows is still refused where the caller does not accept it.
    assert_eq!(
        Jws::parse(&with_header(json!({"alg": "ES256"})), &[])
            .map(|_| ())
            .unwrap_err(),
        JwsError::AlgNotAccepted(Some("ES256".into()))
    );
    let bad_x5c = |x5c: Value| {
        Jws::parse(
            &with_header(json!({"alg": "ES256", "x5c": x5c})),
            &[Alg::Es256],
        )
        .expect("parse")
        .x5c()
    };
    assert_eq!(bad_x5c(json!([])), Some(Err(JwsError::BadX5c)));
    assert_eq!(bad_x5c(json!(["-_-"])), Some(Err(JwsError::BadX5c)));
    assert_eq!(bad_x5c(json!("AQID")), Some(Err(JwsError::BadX5c)));
    let jws = with_header(json!({"alg": "ES256"}));
    assert_eq!(Jws::parse(&jws, &[Alg::Es256]).expect("parse").x5c(), None);
}
