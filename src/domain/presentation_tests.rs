//! The request side of docs/wallets.md#the-wallet-link and docs/kinds.md#credential-kinds: ages, lifetimes, the link and the DCQL query.

use super::*;
use crate::domain::ZkPolicy;

#[test]
fn min_age_is_1_to_99_and_claims_have_two_digits() {
    assert_eq!(MinAge::parse("8").unwrap().claim(), "age_over_08");
    assert_eq!(MinAge::parse("18").unwrap().claim(), "age_over_18");
    assert_eq!(MinAge::parse("99").unwrap().get(), 99);
    for bad in ["0", "100", "-1", "18.5", "", "x"] {
        assert!(MinAge::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn requests_are_live_for_ten_minutes_until_answered() {
    let mut r = PresentationRequest::new(MinAge::DEFAULT, 1000);
    assert!(r.is_live(1000));
    assert!(r.is_live(1599));
    assert!(!r.is_live(1600));
    r.answered_at = Some(1001);
    assert!(!r.is_live(1002));
}

#[test]
fn an_answer_must_satisfy_the_higher_minimum() {
    let r = PresentationRequest::new(MinAge::parse("18").unwrap(), 0);
    assert_eq!(r.required_age(MinAge::parse("21").unwrap()).get(), 21);
    assert_eq!(r.required_age(MinAge::parse("16").unwrap()).get(), 18);
}

#[test]
fn state_and_nonce_carry_128_random_bits() {
    let a = PresentationRequest::new(MinAge::DEFAULT, 0);
    let b = PresentationRequest::new(MinAge::DEFAULT, 0);
    // 16 bytes, base64url without padding.
    assert_eq!(a.state.len(), 22);
    assert_eq!(a.nonce.len(), 22);
    assert_ne!(a.state, b.state);
    assert_ne!(a.nonce, a.state);
}

#[test]
fn the_request_uri_carries_every_parameter_of_section_7() {
    let r = PresentationRequest::new(MinAge::DEFAULT, 0);
    let response_uri = "https://v.example/gateway/abc/openid4vp";
    let eu_av = KindSet::one(Kind::EU_AV);
    let uri = authorization_request_uri("av", response_uri, &r, eu_av, MinAge::DEFAULT);
    let query = uri
        .strip_prefix("av://authorize?")
        .expect("scheme and the authority wallets register");
    let params: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(params["response_type"], "vp_token");
    assert_eq!(params["response_mode"], "direct_post");
    assert_eq!(params["response_uri"], response_uri);
    assert_eq!(params["client_id"], format!("redirect_uri:{response_uri}"));
    assert_eq!(params["nonce"], r.nonce);
    assert_eq!(params["state"], r.state);
    assert_eq!(
        params["dcql_query"],
        r#"{"credentials":[{"id":"proof_of_age","format":"mso_mdoc","meta":{"doctype_value":"eu.europa.ec.av.1"},"claims":[{"path":["eu.europa.ec.av.1","age_over_18"]}]}]}"#
    );
    let metadata: serde_json::Value = serde_json::from_str(&params["client_metadata"]).unwrap();
    assert_eq!(
        metadata["vp_formats_supported"]["mso_mdoc"]["issuerauth_alg_values"],
        serde_json::json!([-7])
    );
}

#[test]
fn the_json_values_are_the_texts_of_the_link() {
    let sets = [
        KindSet::one(Kind::EU_AV),
        KindSet::one(Kind::MDL),
        [Kind::EU_AV, Kind::MDL].into_iter().collect(),
        KindSet::all(),
    ];
    for age in [8, 18, 99] {
        let age = MinAge::new(age).unwrap();
        for kinds in sets {
            let text: serde_json::Value =
                serde_json::from_str(&dcql_query(kinds, age, None)).unwrap();
            assert_eq!(text, dcql_query_value(kinds, age, None));
        }
    }
    let text: serde_json::Value = serde_json::from_str(CLIENT_METADATA).unwrap();
    assert_eq!(text, client_metadata_value());
}

#[test]
fn each_request_has_its_own_dc_api_secrets() {
    let a = PresentationRequest::new(MinAge::DEFAULT, 0);
    let b = PresentationRequest::new(MinAge::DEFAULT, 0);
    let (sa, sb) = (a.dc_api.expect("secrets"), b.dc_api.expect("secrets"));
    assert_ne!(sa, sb);
    assert_eq!(sa.encryption_nonce.as_bytes().len(), 16);
    assert_ne!(sa.encryption_nonce, sb.encryption_nonce);
    assert!(EncryptionNonce::from_bytes(vec![0; 15]).is_none());
    assert!(EncryptionNonce::from_bytes(vec![0; 65]).is_none());
    assert!(EncryptionNonce::from_bytes(vec![0; 16]).is_some());
}

#[test]
fn wallet_schemes_must_be_uri_schemes() {
    assert_eq!(parse_wallet_scheme("av").unwrap(), "av");
    assert_eq!(parse_wallet_scheme("OpenID4VP").unwrap(), "openid4vp");
    assert!(parse_wallet_scheme("").is_err());
    assert!(parse_wallet_scheme("1av").is_err());
    assert!(parse_wallet_scheme("av://").is_err());
}

#[test]
fn methods_round_trip() {
    let names: Vec<_> = VerifyMethod::all().map(VerifyMethod::as_str).collect();
    assert_eq!(
        names,
        [
            "eu-av",
            "eudi-pid",
            "mdl",
            "google-id",
            "photo-id",
            "verifier",
            "sandbox"
        ]
    );
    for m in VerifyMethod::all() {
        assert_eq!(VerifyMethod::parse(m.as_str()), Some(m));
    }
    assert_eq!(VerifyMethod::parse("proof_of_age"), None);
}

#[test]
fn one_kind_is_asked_without_credential_sets() {
    let age = MinAge::new(21).unwrap();
    assert_eq!(
        dcql_query(KindSet::one(Kind::MDL), age, None),
        r#"{"credentials":[{"id":"mdl","format":"mso_mdoc","meta":{"doctype_value":"org.iso.18013.5.1.mDL"},"claims":[{"path":["org.iso.18013.5.1","age_over_21"]}]}]}"#
    );
}

#[test]
fn several_kinds_are_one_credential_set_of_single_options() {
    let kinds: KindSet = [Kind::MDL, Kind::EU_AV].into_iter().collect();
    assert_eq!(
        dcql_query(kinds, MinAge::DEFAULT, None),
        concat!(
            r#"{"credentials":["#,
            r#"{"id":"proof_of_age","format":"mso_mdoc","meta":{"doctype_value":"eu.europa.ec.av.1"},"claims":[{"path":["eu.europa.ec.av.1","age_over_18"]}]},"#,
            r#"{"id":"mdl","format":"mso_mdoc","meta":{"doctype_value":"org.iso.18013.5.1.mDL"},"claims":[{"path":["org.iso.18013.5.1","age_over_18"]}]}"#,
            r#"],"credential_sets":[{"options":[["proof_of_age"],["mdl"]]}]}"#
        )
    );
}

#[test]
fn a_kind_with_two_doc_types_asks_for_each_as_its_own_credential_query() {
    assert_eq!(
        dcql_query(KindSet::one(Kind::PHOTO_ID), MinAge::DEFAULT, None),
        concat!(
            r#"{"credentials":["#,
            r#"{"id":"photo_id","format":"mso_mdoc","meta":{"doctype_value":"org.iso.23220.photoid.1"},"claims":[{"path":["org.iso.23220.1","age_over_18"]}]},"#,
            r#"{"id":"photo_id_2","format":"mso_mdoc","meta":{"doctype_value":"org.iso.23220.photoID.1"},"claims":[{"path":["org.iso.23220.1","age_over_18"]}]}"#,
            r#"],"credential_sets":[{"options":[["photo_id"],["photo_id_2"]]}]}"#
        )
    );
    let with_google: KindSet = [Kind::GOOGLE_ID, Kind::PHOTO_ID].into_iter().collect();
    let value = dcql_query_value(with_google, MinAge::DEFAULT, None);
    assert_eq!(
        value["credential_sets"],
        serde_json::json!([{"options": [["google_id"], ["photo_id"], ["photo_id_2"]]}])
    );
    assert_eq!(
        value["credentials"][0]["meta"]["doctype_value"],
        "com.google.wallet.idcard.1"
    );
    assert_eq!(
        value["credentials"][0]["claims"][0]["path"],
        serde_json::json!(["org.iso.18013.5.1", "age_over_18"])
    );
}

#[test]
fn a_zk_offer_is_made_unless_the_policy_is_off_or_no_circuit_is_loaded() {
    let v7 = "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121".to_owned();
    let v6 = "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6".to_owned();
    let both = vec![v7.clone(), v6.clone()];
    assert_eq!(ZkOffer::new(ZkPolicy::Off, both.clone()), None);
    assert_eq!(ZkOffer::new(ZkPolicy::Prefer, Vec::new()), None);
    let prefer = ZkOffer::new(ZkPolicy::Prefer, both.clone()).unwrap();
    assert_eq!(prefer.circuits, both);
    assert!(!prefer.required);
    assert!(prefer.offers(&v6));
    assert!(!prefer.offers(&v6[1..]));
    let require = ZkOffer::new(ZkPolicy::Require, both).unwrap();
    assert!(require.required);
    let stored = require.stored_circuits();
    assert_eq!(stored, format!("{v7},{v6}"));
    assert_eq!(ZkOffer::from_stored(&stored, true), Some(require));
    assert_eq!(ZkOffer::from_stored("", false), None);
    assert_eq!(ZkOffer::from_stored(&v7.to_uppercase(), false), None);
    assert_eq!(ZkOffer::from_stored(&format!("{v7},"), false), None);
    let r = PresentationRequest::new(MinAge::DEFAULT, 0);
    assert_eq!(r.zk, None, "a fresh request offers no proof until told");
    let offer = ZkOffer::new(ZkPolicy::Prefer, vec![v7]);
    assert_eq!(r.with_zk(offer.clone()).zk, offer);
}
