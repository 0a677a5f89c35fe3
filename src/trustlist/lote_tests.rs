//! Lists of trusted entities signed by jwcrypto (testdata made by
//! scripts/trustlist-fixtures.py): exactly the current issuance services' certificates
//! for the list's kind, and the refusals.

use super::tests::{pins, testdata, NOW};
use super::*;

fn der_of(pem_name: &str) -> Vec<u8> {
    use base64::Engine;
    let pem = testdata(pem_name);
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("pem")
}

fn load(name: &str, kind: LoteKind, pin: &str) -> Result<EntityList, ListError> {
    lote(testdata(name).as_bytes(), kind, &pins(pin), NOW, None)
}

#[test]
fn a_pid_list_yields_its_issuance_certificates_not_revocation_or_history() {
    for (name, pin) in [
        ("lote-pid-es256.jwt", "signer-ec.pem"),
        ("lote-pid-rs256.jwt", "signer-ca.pem"),
    ] {
        let list = load(name, LoteKind::EudiPid, pin).expect(name);
        assert_eq!(list.anchors, vec![der_of("provider-a.pem")], "{name}");
        assert_eq!((list.sequence, list.issued), (1, 1_767_225_600));
        assert_eq!(list.next_update, 4_070_908_800);
    }
}

#[test]
fn an_mdl_list_signed_es384_yields_only_mdl_issuance_certificates() {
    let list = load("lote-mdl-es384.jwt", LoteKind::Mdl, "signer-ec384.pem").expect("verifies");
    assert_eq!(list.anchors, vec![der_of("provider-b.pem")]);
    assert_eq!(list.sequence, 3);
}

#[test]
fn a_list_of_the_other_kind_is_refused_for_its_type() {
    assert_eq!(
        load("lote-mdl-es384.jwt", LoteKind::EudiPid, "signer-ec384.pem"),
        Err(ListError::WrongType(
            "http://trust.ec.europa.eu/lists/mDL/mDLProvidersListType".into()
        ))
    );
}

#[test]
fn a_signer_not_chaining_to_the_pin_is_refused() {
    assert_eq!(
        load("lote-pid-rs256.jwt", LoteKind::EudiPid, "signer-ec.pem"),
        Err(ListError::Jws(
            "signer is not a pinned certificate and does not chain to one".into()
        ))
    );
}

#[test]
fn a_changed_payload_is_refused() {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let jws = testdata("lote-pid-es256.jwt");
    let parts: Vec<&str> = jws.trim().split('.').collect();
    let payload = String::from_utf8(URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    let bumped = payload.replace("\"LoTESequenceNumber\":1", "\"LoTESequenceNumber\":9");
    assert_ne!(bumped, payload);
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(bumped),
        parts[2]
    );
    assert_eq!(
        lote(
            tampered.as_bytes(),
            LoteKind::EudiPid,
            &pins("signer-ec.pem"),
            NOW,
            None
        ),
        Err(ListError::Jws("the JWS signature does not hold".into()))
    );
}

#[test]
fn a_lower_sequence_or_a_stale_list_is_refused() {
    let jws = testdata("lote-mdl-es384.jwt");
    let pin = pins("signer-ec384.pem");
    assert_eq!(
        lote(jws.as_bytes(), LoteKind::Mdl, &pin, NOW, Some(4)),
        Err(ListError::Older {
            got: 3,
            in_force: 4
        })
    );
    let after = 4_070_908_800 + 7 * 86_400 + 1;
    // The signer certificates run to 2099-12-31, past this list's NextUpdate + 7 days.
    assert_eq!(
        lote(jws.as_bytes(), LoteKind::Mdl, &pin, after, None),
        Err(ListError::Stale)
    );
}

#[test]
fn a_list_whose_signer_is_not_its_operator_or_territory_is_refused() {
    // The signers chain to their pins; their subject (O=agegate tests, C=EU) names
    // another operator than "Another operator", another territory than DE.
    assert_eq!(
        load(
            "refuse-lote-other-operator.jwt",
            LoteKind::EudiPid,
            "signer-ec.pem"
        ),
        Err(ListError::SignerNotOperator {
            organization: "agegate tests".into(),
            country: "EU".into()
        })
    );
    let err = load(
        "refuse-lote-other-territory.jwt",
        LoteKind::EudiPid,
        "signer-ca.pem",
    )
    .expect_err("another territory");
    assert_eq!(
        err.to_string(),
        "signer's subject (O=\"agegate tests\", C=\"EU\") is not the list's \
         SchemeOperatorName and SchemeTerritory"
    );
}

#[test]
fn the_signers_organisation_may_match_any_language_of_the_operators_name() {
    // lote-pid-*.jwt name the operator in German first, in English (the signer's O) second.
    let payload = {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine;
        let jws = testdata("lote-pid-es256.jwt");
        let b64 = jws.trim().split('.').nth(1).expect("payload").to_owned();
        String::from_utf8(URL_SAFE_NO_PAD.decode(b64).expect("b64")).expect("utf-8")
    };
    assert!(payload.contains(r#"[{"lang":"de","value":"agegate Tests (Betreiber)"},{"lang":"en","value":"agegate tests"}]"#));
    assert!(load("lote-pid-es256.jwt", LoteKind::EudiPid, "signer-ec.pem").is_ok());
}
