//! The age-verification trusted list read after its signature: exactly the recognised
//! PAA services' current certificates, and the list-level refusals.

use base64::Engine;

use super::tests::{pins, testdata, NOW};
use super::xmldsig::SignatureError;
use super::*;

fn der_of(pem_name: &str) -> Vec<u8> {
    let pem = testdata(pem_name);
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("pem")
}

fn load(name: &str, pin: &str) -> Result<TrustedList, ListError> {
    eu_av_list(testdata(name).as_bytes(), &pins(pin), NOW, None)
}

#[test]
fn a_good_list_yields_exactly_its_recognised_paa_services_certificates() {
    // Provider a (service-type/paa, recognized) and b (Svctype/PAA, granted); not the
    // deprecated, withdrawn, other-type or ServiceHistory-only certificates; the RSA
    // provider is counted as unusable.
    for (name, pin) in [
        ("signxml-rsa-c14n10.xml", "signer-ca.pem"),
        ("signxml-ec-c14n11.xml", "signer-ec.pem"),
        ("xmlsec-rsa-filter2-exc.xml", "signer-ca.pem"),
        ("xmlsec-ec-enveloped-exc.xml", "signer-ec.pem"),
    ] {
        let list = load(name, pin).expect(name);
        assert_eq!(
            list.anchors,
            vec![der_of("provider-a.pem"), der_of("provider-b.pem")],
            "{name}"
        );
        assert_eq!(list.skipped_unsupported_key, 1, "{name}");
        assert_eq!(list.sequence, 1);
        assert_eq!(list.issued, 1_767_225_600); // 2026-01-01
        assert_eq!(list.next_update, 4_070_908_800); // 2099-01-01
        assert_eq!(
            list.tsl_type,
            "http://trust.tech.ec.europa.eu/lists/age-verification/tsl-type"
        );
    }
}

/// Each good fixture's certificates of `provider` are in the signed document, yet not
/// among its anchors.
fn listed_but_not_taken(provider: &str) {
    let der = der_of(provider);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
    for (name, pin) in [
        ("signxml-rsa-c14n10.xml", "signer-ca.pem"),
        ("xmlsec-rsa-filter2-exc.xml", "signer-ca.pem"),
        ("xmlsec-ec-enveloped-exc.xml", "signer-ec.pem"),
    ] {
        assert!(testdata(name).contains(&b64), "{provider} is in {name}");
        let list = load(name, pin).expect(name);
        assert!(!list.anchors.contains(&der), "{provider} taken from {name}");
    }
}

#[test]
fn service_history_only_certificates_are_not_anchors() {
    listed_but_not_taken("provider-e-history.pem");
}

#[test]
fn a_deprecated_or_withdrawn_services_certificates_are_not_anchors() {
    listed_but_not_taken("provider-c-deprecated.pem");
    listed_but_not_taken("provider-d-withdrawn.pem");
}

#[test]
fn another_service_types_certificates_are_not_anchors() {
    listed_but_not_taken("provider-f-other-type.pem");
}

#[test]
fn list_b_adds_its_new_provider() {
    for (name, pin) in [
        ("xmlsec-rsa-filter2-exc-b.xml", "signer-ca.pem"),
        ("signxml-ec384-c14n10.xml", "signer-ec384.pem"),
    ] {
        let list = load(name, pin).expect(name);
        assert_eq!(list.sequence, 2);
        assert_eq!(
            list.anchors,
            vec![
                der_of("provider-a.pem"),
                der_of("provider-b.pem"),
                der_of("provider-g-added.pem")
            ]
        );
    }
}

#[test]
fn a_list_of_another_type_is_refused() {
    assert_eq!(
        load("refuse-wrong-type.xml", "signer-ca.pem"),
        Err(ListError::WrongType(
            "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric".into()
        ))
    );
}

#[test]
fn a_list_past_next_update_by_more_than_seven_days_is_refused() {
    let xml = testdata("refuse-past-next-update.xml"); // NextUpdate 2026-02-01
    let next_update = 1_769_904_000;
    let pin = pins("signer-ca.pem");
    let at = |now: i64| eu_av_list(xml.as_bytes(), &pin, now, None).map(|l| l.sequence);
    assert_eq!(at(next_update + 7 * 86_400), Ok(1), "seven days of grace");
    assert_eq!(at(next_update + 7 * 86_400 + 1), Err(ListError::Stale));
}

#[test]
fn a_lower_sequence_number_than_the_one_in_force_is_refused() {
    let xml = testdata("xmlsec-rsa-filter2-exc.xml"); // sequence 1
    let pin = pins("signer-ca.pem");
    assert_eq!(
        eu_av_list(xml.as_bytes(), &pin, NOW, Some(2)),
        Err(ListError::Older {
            got: 1,
            in_force: 2
        })
    );
    assert!(
        eu_av_list(xml.as_bytes(), &pin, NOW, Some(1)).is_ok(),
        "the same one again"
    );
}

#[test]
fn the_eu_sample_list_verifies_its_signed_info_but_not_its_document_digest() {
    // Pinned: the sample's own signer, so that only the digest can fail.
    let xml = testdata("eu-av-sample-list.xml");
    let signer = xml
        .split("<ds:X509Certificate>")
        .nth(1)
        .and_then(|rest| rest.split("</ds:X509Certificate>").next())
        .expect("signer certificate");
    let der = base64::engine::general_purpose::STANDARD
        .decode(signer.split_whitespace().collect::<String>())
        .expect("base64");
    let pinned = vec![SignerCert::from_der(&der).expect("certificate")];
    let signed_at = 1_759_418_318; // its SigningTime, 2025-10-02T15:18:38Z
    assert_eq!(
        eu_av_list(xml.as_bytes(), &pinned, signed_at, None),
        Err(ListError::Signature(SignatureError::DigestMismatch(
            "document"
        )))
    );
    // And under our test pin it is refused for its signer first.
    assert_eq!(
        eu_av_list(xml.as_bytes(), &pins("signer-ca.pem"), signed_at, None),
        Err(ListError::Signature(SignatureError::Chain(
            cert::ChainError::Untrusted
        )))
    );
}

#[test]
fn a_list_read_is_the_list_verified() {
    // A second TrustServiceProviderList after the signed one cannot be added without
    // breaking the document digest; a root that is not a trusted list is refused.
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let renamed = xml
        .replace("<TrustServiceStatusList ", "<Other ")
        .replace("</TrustServiceStatusList>", "</Other>");
    assert!(matches!(
        eu_av_list(renamed.as_bytes(), &pins("signer-ca.pem"), NOW, None),
        Err(ListError::Signature(SignatureError::DigestMismatch(_)))
    ));
}
