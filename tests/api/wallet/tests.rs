//! Self-tests: the wallet checks its own output against the standards, independently of
//! `agegate::mdoc`.

use super::testkit::{decode, get, hex, int_key, sample_request, sample_uri, untag24, Decoded, T};
use super::{
    cbor, html_unescape, rfc3339, session_transcript, sha256, AuthorizationRequest, Presentation,
    TestIssuer, AV_DOCTYPE, AV_NAMESPACE, DAY,
};
use agegate::testkit::{tdate, text};
use ciborium::Value;
use p256::ecdsa::{Signature, VerifyingKey};

#[test]
fn wallet_rfc3339_dates() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(T), "2027-01-15T08:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(4_102_444_799), "2099-12-31T23:59:59Z");
    assert_eq!(
        cbor(&tdate(0)),
        [&[0xc0, 0x74][..], b"1970-01-01T00:00:00Z"].concat()
    );
}

#[test]
fn wallet_session_transcript_matches_the_openid4vp_test_vector() {
    // OpenID4VP 1.0, Appendix B.2.6.1 (with the example JWK's thumbprint).
    let thumbprint = hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047");
    let transcript = session_transcript(
        "x509_san_dns:example.com",
        "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA",
        Some(&thumbprint),
        "https://example.com/response",
    );
    assert_eq!(
        cbor(&transcript),
        hex(
            "83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8e
             ed494cefdd9d95240d254b046b11b68013722aad38ac"
        )
    );
    // Unencrypted responses put null in the thumbprint slot.
    let info = Value::Array(vec![
        text("redirect_uri:https://a.example/r"),
        text("n"),
        Value::Null,
        text("https://a.example/r"),
    ]);
    let expected = Value::Array(vec![
        Value::Null,
        Value::Null,
        Value::Array(vec![
            text("OpenID4VPHandover"),
            Value::Bytes(sha256(&cbor(&info)).to_vec()),
        ]),
    ]);
    assert_eq!(
        session_transcript(
            "redirect_uri:https://a.example/r",
            "n",
            None,
            "https://a.example/r"
        ),
        expected
    );
}

#[test]
fn wallet_parses_an_authorization_request() {
    let req = sample_request();
    assert_eq!(req.response_type, "vp_token");
    assert_eq!(req.response_mode, "direct_post");
    assert_eq!(
        req.response_uri,
        "http://127.0.0.1:4000/gateway/inv_abc/openid4vp"
    );
    assert_eq!(
        req.client_id,
        "redirect_uri:http://127.0.0.1:4000/gateway/inv_abc/openid4vp"
    );
    assert_eq!(req.nonce, "n-0S6_WzA2Mj+/&=");
    assert_eq!(req.state, "st4te");
    assert_eq!(req.credential_id, "proof_of_age");
    assert_eq!(req.requested_claim, "age_over_18");
    assert_eq!(
        req.dcql_query["credentials"][0]["meta"]["doctype_value"],
        AV_DOCTYPE
    );
    assert_eq!(
        req.client_metadata["vp_formats_supported"]["mso_mdoc"]["deviceauth_alg_values"],
        serde_json::json!([-7])
    );
    assert!(AuthorizationRequest::try_parse("av://authorize?response_type=vp_token").is_err());
    assert!(AuthorizationRequest::try_parse("av://").is_err());
}

#[test]
fn wallet_finds_the_link_in_a_gateway_page() {
    let uri = sample_uri();
    let escapes: [fn(&str) -> String; 2] = [
        // askama 0.14's style
        |s| {
            s.replace('&', "&#38;")
                .replace('"', "&#34;")
                .replace('\'', "&#39;")
                .replace('<', "&#60;")
                .replace('>', "&#62;")
        },
        |s| {
            s.replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('\'', "&#x27;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        },
    ];
    for escape in escapes {
        let href = escape(&uri);
        for page in [
            format!(
                r#"<p><a href="/other">x</a><a id="eu-av-link" href="{href}">Open the app</a></p>"#
            ),
            format!(
                r#"<abbr id="eu-av-link">no</abbr><a class="btn" href="{href}" id="eu-av-link">Open</a>"#
            ),
        ] {
            let req = AuthorizationRequest::from_gateway_html(&page);
            assert_eq!(req.uri, uri);
            assert_eq!(req.nonce, "n-0S6_WzA2Mj+/&=");
        }
    }
    assert_eq!(
        html_unescape("a&amp;b&#x27;&#39;&lt;&gt;&quot;&unknown;&"),
        "a&b''<>\"&unknown;&"
    );
}

#[test]
fn wallet_vp_token_shape() {
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let p = Presentation::for_request(&req, T);
    let token = issuer.vp_token(&req, &p);
    let json: serde_json::Value = serde_json::from_str(&token).unwrap();
    let obj = json.as_object().unwrap();
    assert_eq!(obj.len(), 1);
    let list = obj["proof_of_age"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    let dr = list[0].as_str().unwrap();
    assert!(dr
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));

    let form = issuer.answer_form(&req, &p);
    assert_eq!(form[0], ("state", "st4te".to_owned()));
    assert_eq!(form[1].0, "vp_token");

    let d = Decoded::new(&issuer, &req, &p);
    assert_eq!(get(&d.response, "version"), &text("1.0"));
    assert_eq!(get(&d.response, "status"), &Value::Integer(0.into()));
    assert_eq!(get(d.document(), "docType"), &text(AV_DOCTYPE));
    let items = d.items();
    assert_eq!(items.len(), 1);
    let item = decode(untag24(&items[0]));
    assert_eq!(get(&item, "elementIdentifier"), &text("age_over_18"));
    assert_eq!(get(&item, "elementValue"), &Value::Bool(true));
    assert!(get(&item, "random").as_bytes().unwrap().len() >= 16);
    // deviceSigned.nameSpaces is #6.24(bstr .cbor {}).
    assert_eq!(
        cbor(get(get(d.document(), "deviceSigned"), "nameSpaces")),
        [0xd8, 0x18, 0x41, 0xa0]
    );

    let mso = d.mso();
    assert_eq!(get(&mso, "version"), &text("1.0"));
    assert_eq!(get(&mso, "digestAlgorithm"), &text("SHA-256"));
    assert_eq!(get(&mso, "docType"), &text(AV_DOCTYPE));
    let validity = get(&mso, "validityInfo");
    assert_eq!(
        get(validity, "validFrom"),
        &Value::Tag(0, Box::new(text("2027-01-14T08:00:00Z")))
    );
    assert_eq!(get(validity, "signed"), get(validity, "validFrom"));
    assert_eq!(
        get(validity, "validUntil"),
        &Value::Tag(0, Box::new(text("2027-04-15T08:00:00Z")))
    );
    // issuerAuth: untagged COSE_Sign1, protected {1: -7}, x5chain the DS certificate.
    let sign1 = d.issuer_auth();
    assert_eq!(sign1.len(), 4);
    assert_eq!(sign1[0].as_bytes().unwrap(), &[0xa1, 0x01, 0x26]);
    assert_eq!(
        int_key(&sign1[1], 33),
        Some(&Value::Bytes(issuer.ds_cert_der.clone()))
    );
    assert_eq!(sign1[3].as_bytes().unwrap().len(), 64);
    let device = d.device_signature();
    assert_eq!(device[0].as_bytes().unwrap(), &[0xa1, 0x01, 0x26]);
    assert_eq!(device[1], Value::Map(vec![]));
    assert_eq!(device[3].as_bytes().unwrap().len(), 64);
}

#[test]
fn wallet_digests_match_the_mso() {
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let mut p = Presentation::for_request(&req, T);
    p.claims.push(("age_over_16".into(), Value::Bool(true)));
    p.claims.push(("age_over_65".into(), Value::Bool(false)));
    let d = Decoded::new(&issuer, &req, &p);
    assert_eq!(d.items().len(), 3);
    assert!(d.digests_match());
    let mso = d.mso();
    assert_eq!(
        get(get(&mso, "valueDigests"), AV_NAMESPACE)
            .as_map()
            .unwrap()
            .len(),
        3 + p.undisclosed
    );

    // Tampering with a false claim turns it into true.
    let lie = Presentation {
        tamper_value: true,
        ..Presentation::for_request(&req, T).claim("age_over_18", false)
    };
    let item = decode(untag24(&Decoded::new(&issuer, &req, &lie).items()[0]));
    assert_eq!(get(&item, "elementValue"), &Value::Bool(true));
    #[rustfmt::skip]
    let broken = [
        ("a tampered value", Presentation { tamper_value: true, ..p.clone() }),
        ("an omitted digest", Presentation { omit_digest: true, ..p.clone() }),
        ("a false claim tampered into true", lie),
    ];
    for (name, wrong) in broken {
        let d = Decoded::new(&issuer, &req, &wrong);
        assert!(!d.digests_match(), "{name}");
    }
}

#[test]
fn wallet_issuer_signature_verifies_with_the_ds_certificate() {
    use p256::ecdsa::signature::Verifier as _;
    use x509_cert::der::{Decode as _, Encode as _};
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let p = Presentation::for_request(&req, T);
    assert!(Decoded::new(&issuer, &req, &p).issuer_signature_ok(&issuer.ds_cert_der));
    let bad = Presentation {
        bad_issuer_signature: true,
        ..p.clone()
    };
    assert!(!Decoded::new(&issuer, &req, &bad).issuer_signature_ok(&issuer.ds_cert_der));
    let array = Presentation {
        x5chain_array: true,
        ..p.clone()
    };
    let d = Decoded::new(&issuer, &req, &array);
    assert_eq!(
        int_key(&d.issuer_auth()[1], 33),
        Some(&Value::Array(vec![Value::Bytes(
            issuer.ds_cert_der.clone()
        )]))
    );

    // The DS certificate is issued by the CA, with the validity asked for.
    let ca = x509_cert::Certificate::from_der(&issuer.ca_der).unwrap();
    let ca_key = VerifyingKey::from_sec1_bytes(
        ca.tbs_certificate
            .subject_public_key_info
            .subject_public_key
            .raw_bytes(),
    )
    .unwrap();
    let check = |der: &[u8], not_before: i64, not_after: i64| {
        let cert = x509_cert::Certificate::from_der(der).unwrap();
        assert_eq!(cert.tbs_certificate.issuer, ca.tbs_certificate.subject);
        let sig = Signature::from_der(cert.signature.raw_bytes()).unwrap();
        ca_key
            .verify(&cert.tbs_certificate.to_der().unwrap(), &sig)
            .unwrap();
        let v = &cert.tbs_certificate.validity;
        assert_eq!(v.not_before.to_unix_duration().as_secs() as i64, not_before);
        assert_eq!(v.not_after.to_unix_duration().as_secs() as i64, not_after);
    };
    check(&issuer.ds_cert_der, T - 30 * DAY, T + 365 * DAY);
    check(&issuer.ca_der, T - 30 * DAY, T + 365 * DAY);
    let expired = issuer.with_signer_validity(T - 100 * DAY, T - DAY);
    assert_eq!(expired.ca_pem, issuer.ca_pem);
    check(&expired.ds_cert_der, T - 100 * DAY, T - DAY);
    assert!(Decoded::new(&expired, &req, &p).issuer_signature_ok(&expired.ds_cert_der));
    assert!(!Decoded::new(&expired, &req, &p).issuer_signature_ok(&issuer.ds_cert_der));
    assert!(issuer.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
}

#[test]
fn wallet_device_signature_verifies_with_the_device_key() {
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let p = Presentation::for_request(&req, T);
    assert!(Decoded::new(&issuer, &req, &p).device_signature_ok(&req));
    let other_client = format!("redirect_uri:{}x", req.response_uri);
    let other_uri = format!("{}x", req.response_uri);
    #[rustfmt::skip]
    let broken = [
        ("another device key", Presentation { foreign_device_key: true, ..p.clone() }),
        ("a bad signature", Presentation { bad_device_signature: true, ..p.clone() }),
        ("another nonce", Presentation { nonce: Some("other".into()), ..p.clone() }),
        ("another client_id", Presentation { client_id: Some(other_client), ..p.clone() }),
        ("another response_uri", Presentation { response_uri: Some(other_uri), ..p.clone() }),
    ];
    for (name, wrong) in broken {
        let d = Decoded::new(&issuer, &req, &wrong);
        assert!(!d.device_signature_ok(&req), "{name}");
    }
    // Overriding with the request's own values changes nothing.
    let same = Presentation {
        nonce: Some(req.nonce.clone()),
        ..p.clone()
    };
    assert!(Decoded::new(&issuer, &req, &same).device_signature_ok(&req));
}

#[test]
fn wallet_header_knobs() {
    let issuer = TestIssuer::new(T);
    let req = sample_request();
    let p = Presentation::for_request(&req, T);

    let with_ca = Presentation {
        x5chain_extra: vec![issuer.ca_der.clone()],
        ..p.clone()
    };
    let d = Decoded::new(&issuer, &req, &with_ca);
    assert_eq!(
        int_key(&d.issuer_auth()[1], 33),
        Some(&Value::Array(vec![
            Value::Bytes(issuer.ds_cert_der.clone()),
            Value::Bytes(issuer.ca_der.clone())
        ]))
    );
    let none = Presentation {
        omit_x5chain: true,
        ..p.clone()
    };
    assert_eq!(
        Decoded::new(&issuer, &req, &none).issuer_auth()[1],
        Value::Map(vec![])
    );
    let algs = Presentation {
        issuer_alg: -35,
        device_alg: -8,
        ..p.clone()
    };
    let d = Decoded::new(&issuer, &req, &algs);
    assert_eq!(
        d.issuer_auth()[0].as_bytes().unwrap(),
        &[0xa1, 0x01, 0x38, 0x22]
    );
    assert_eq!(
        d.device_signature()[0].as_bytes().unwrap(),
        &[0xa1, 0x01, 0x27]
    );

    // An attached payload is the DeviceAuthenticationBytes that were signed.
    let replay = Presentation {
        nonce: Some("stale".into()),
        attached_device_payload: true,
        ..p.clone()
    };
    let d = Decoded::new(&issuer, &req, &replay);
    let attached = d.device_signature()[2].as_bytes().unwrap().clone();
    let inner = decode(untag24(&decode(&attached)));
    let stale = session_transcript(&req.client_id, "stale", None, &req.response_uri);
    assert_eq!(inner.as_array().unwrap()[1], stale);
}
