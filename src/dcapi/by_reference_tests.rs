use super::*;
use rand::rngs::OsRng;

fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn derived_secrets_are_stable_distinct_and_128_bits() {
    let stored = ResponseKey::generate(&mut OsRng);
    let (a, b) = (ByReference::of(&stored), ByReference::of(&stored));
    assert_eq!(a.request_id, b.request_id);
    assert_eq!(a.state, b.state);
    assert_eq!(a.key.to_bytes(), b.key.to_bytes());
    assert_ne!(a.request_id, a.state);
    assert_ne!(a.key.to_bytes(), stored.to_bytes());
    assert_eq!(a.request_id.len(), 22);
    let other = ByReference::of(&ResponseKey::generate(&mut OsRng));
    assert_ne!(other.request_id, a.request_id);
}

#[test]
fn metadata_as_one_json_or_separate_fields_reads_the_same() {
    let json = form(&[
        (
            "wallet_metadata",
            r#"{"vp_formats_supported":{"mso_mdoc_zk":{}},"authorization_encryption_enc_values_supported":["A256GCM"],"issuer":"https://w.example"}"#,
        ),
        ("wallet_nonce", "n1"),
    ]);
    let fields = form(&[
        ("vp_formats_supported", r#"{"mso_mdoc_zk":{}}"#),
        (
            "authorization_encryption_enc_values_supported",
            r#"["A256GCM"]"#,
        ),
        ("issuer", "https://w.example"),
        ("wallet_nonce", "n1"),
    ]);
    let expected = Negotiated {
        zk: true,
        enc: vec![Enc::A256Gcm],
        aud: "https://w.example".into(),
        wallet_nonce: Some("n1".into()),
    };
    assert_eq!(Negotiated::from_form(&json), Ok(expected.clone()));
    assert_eq!(Negotiated::from_form(&fields), Ok(expected));
}

#[test]
fn zk_only_for_wallets_naming_mso_mdoc_zk_and_enc_in_common() {
    let plain = form(&[(
        "wallet_metadata",
        r#"{"vp_formats_supported":{"mso_mdoc":{}}}"#,
    )]);
    let n = Negotiated::from_form(&plain).unwrap();
    assert!(!n.zk);
    assert_eq!(n.enc, Enc::ALL.to_vec());
    assert_eq!(n.aud, SELF_ISSUED_AUD);
    assert_eq!(Negotiated::from_form(&[]), Ok(Negotiated::unknown_wallet()));
    let none = form(&[(
        "wallet_metadata",
        r#"{"authorization_encryption_enc_values_supported":["A128CBC-HS256"]}"#,
    )]);
    assert_eq!(
        Negotiated::from_form(&none),
        Err(MetadataError::NoCommonEnc)
    );
    for bad in ["[1]", "\"x\"", "{", "null"] {
        assert_eq!(
            Negotiated::from_form(&form(&[("wallet_metadata", bad)])),
            Err(MetadataError::NotAnObject),
            "{bad}"
        );
    }
}

#[test]
fn the_request_object_carries_every_claim() {
    let signer = super::super::signer::tests::test_signer();
    let key = ResponseKey::generate(&mut OsRng);
    let negotiated = Negotiated {
        wallet_nonce: Some("wn".into()),
        ..Negotiated::unknown_wallet()
    };
    let object = RequestObject {
        response_uri: "https://a.example/gateway/x/openid4vp",
        nonce: "n",
        state: "s",
        dcql_query: &json!({"credentials": []}),
        client_metadata: &json!({"vp_formats_supported": {}}),
        key: &key,
        negotiated: &negotiated,
        iat: 100,
        exp: 700,
    };
    let jws = sign(&object, &signer);
    let parsed = crate::jose::Jws::parse(&jws, &[crate::jose::Alg::Es256]).expect("jws");
    assert_eq!(parsed.x5c(), Some(Ok(signer.chain().to_vec())));
    let payload = jws.split('.').nth(1).and_then(super::super::b64url_decode);
    let claims: Value = serde_json::from_slice(&payload.expect("payload")).unwrap();
    assert_eq!(claims["client_id"], signer.client_id());
    assert_eq!(claims["response_mode"], "direct_post.jwt");
    assert_eq!(claims["aud"], SELF_ISSUED_AUD);
    assert_eq!(claims["wallet_nonce"], "wn");
    assert_eq!(claims["exp"], 700);
    assert_eq!(
        claims["client_metadata"]["encrypted_response_enc_values_supported"],
        json!(["A128GCM", "A256GCM"])
    );
    assert_eq!(
        claims["client_metadata"]["jwks"]["keys"][0],
        key.public_jwk()
    );
    assert!(claims.get("verifier_info").is_none());
}
