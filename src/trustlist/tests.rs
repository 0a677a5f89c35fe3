//! The XML signature verifier against lists signed by independent tools (signxml,
//! xmlsec1: testdata made by scripts/trustlist-fixtures.py), and its refusals.

use super::xmldsig::SignatureError;
use super::*;

/// 2026-06-01, inside every fixture's validity and before its NextUpdate.
pub(super) const NOW: i64 = 1_780_272_000;

pub(super) fn testdata(name: &str) -> String {
    let path = format!(
        "{}/src/trustlist/testdata/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(super) fn pins(name: &str) -> Vec<SignerCert> {
    signers_from_pem(&testdata(name)).expect("pinned signer")
}

fn verify(xml: &str, pinned: &[SignerCert]) -> Result<xmldsig::Signed, ListError> {
    let doc = parse_xml(xml.as_bytes())?;
    Ok(xmldsig::verify(&doc, pinned, NOW)?)
}

fn refused(xml: &str, pinned: &[SignerCert]) -> ListError {
    verify(xml, pinned).expect_err("must be refused")
}

#[test]
fn signxml_rsa_with_inclusive_c14n_1_0_verifies_under_the_pinned_ca() {
    let xml = testdata("signxml-rsa-c14n10.xml");
    verify(&xml, &pins("signer-ca.pem")).expect("verifies");
    verify(&xml, &pins("signer-rsa.pem")).expect("the signer itself pinned");
}

#[test]
fn signxml_ecdsa_p256_with_c14n_1_1_verifies() {
    verify(&testdata("signxml-ec-c14n11.xml"), &pins("signer-ec.pem")).expect("verifies");
}

#[test]
fn signxml_ecdsa_p384_sha384_verifies() {
    verify(
        &testdata("signxml-ec384-c14n10.xml"),
        &pins("signer-ec384.pem"),
    )
    .expect("verifies");
}

#[test]
fn xmlsec1_exclusive_c14n_with_xpath_filter_2_and_signed_properties_verifies() {
    for name in ["xmlsec-rsa-filter2-exc.xml", "xmlsec-rsa-filter2-exc-b.xml"] {
        verify(&testdata(name), &pins("signer-ca.pem")).expect(name);
    }
}

#[test]
fn xmlsec1_ecdsa_sha512_enveloped_exclusive_c14n_verifies() {
    verify(
        &testdata("xmlsec-ec-enveloped-exc.xml"),
        &pins("signer-ec.pem"),
    )
    .expect("verifies");
}

#[test]
fn a_signer_that_does_not_chain_to_the_pin_is_refused() {
    let err = refused(&testdata("signxml-rsa-c14n10.xml"), &pins("signer-ec.pem"));
    assert_eq!(
        err,
        ListError::Signature(SignatureError::Chain(cert::ChainError::Untrusted))
    );
}

#[test]
fn a_signer_outside_its_validity_is_refused() {
    let doc_text = testdata("signxml-ec-c14n11.xml");
    let doc = parse_xml(doc_text.as_bytes()).expect("xml");
    let later = 4_200_000_000; // 2103: past every certificate
    assert_eq!(
        xmldsig::verify(&doc, &pins("signer-ec.pem"), later).map(|_| ()),
        Err(SignatureError::Chain(cert::ChainError::NotValidNow))
    );
}

#[test]
fn a_certificate_added_to_the_body_is_refused() {
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let provider = testdata("provider-g-added.pem");
    let b64: String = provider
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let tampered = xml.replacen(
        "<DigitalId>",
        &format!("<DigitalId><X509Certificate>{b64}</X509Certificate></DigitalId><DigitalId>"),
        1,
    );
    assert_ne!(tampered, xml);
    assert_eq!(
        refused(&tampered, &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::DigestMismatch("document"))
    );
}

#[test]
fn a_status_changed_in_the_body_is_refused() {
    for name in ["signxml-rsa-c14n10.xml", "xmlsec-rsa-filter2-exc.xml"] {
        let xml = testdata(name);
        let tampered = xml.replacen("service-status/deprecated", "service-status/recognized", 1);
        assert_ne!(tampered, xml);
        assert_eq!(
            refused(&tampered, &pins("signer-ca.pem")),
            ListError::Signature(SignatureError::DigestMismatch("document")),
            "{name}"
        );
    }
}

#[test]
fn whitespace_and_comments_outside_the_signed_content_do_not_matter_but_text_does() {
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let commented = xml.replacen(
        "<TrustServiceProviderList>",
        "<!-- x --><TrustServiceProviderList>",
        1,
    );
    verify(&commented, &pins("signer-ca.pem")).expect("comments are not signed");
    let spaced = xml.replacen(
        "<TrustServiceProviderList>",
        " <TrustServiceProviderList>",
        1,
    );
    assert!(
        verify(&spaced, &pins("signer-ca.pem")).is_err(),
        "text is signed"
    );
}

#[test]
fn a_signed_copy_inside_an_unsigned_list_is_refused() {
    // Wrapping: the signed list moved inside a new root that lists other providers.
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let body = xml.split_once("?>").map_or(xml.as_str(), |(_, b)| b);
    let wrapped = format!(
        "<TrustServiceStatusList xmlns=\"http://uri.etsi.org/02231/v2#\"><Evil/>{body}</TrustServiceStatusList>"
    );
    assert_eq!(
        refused(&wrapped, &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::SignatureNotLast)
    );
}

#[test]
fn a_signed_copy_kept_elsewhere_under_an_unsigned_list_is_refused() {
    // Wrapping the other way round: the signature stays the root's last child with the
    // signed content copied into a ds:Object of it, and the root lists another provider.
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let (head, sig) = xml.split_once("<ds:Signature").expect("signature");
    let signed = &head[head.find("<SchemeInformation>").expect("content")..];
    let with_copy = |head: &str| {
        let object = format!("<ds:Object>{signed}</ds:Object></ds:Signature>");
        format!(
            "{head}<ds:Signature{}",
            sig.replacen("</ds:Signature>", &object, 1)
        )
    };
    // The copy alone changes nothing signed (the signature is subtracted whole) ...
    verify(&with_copy(head), &pins("signer-ca.pem")).expect("the copy is not what is read");
    // ... but the list read is the root's, and its new provider breaks the digest.
    let g: String = testdata("provider-g-added.pem")
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let evil = head.replacen(
        "<DigitalId>",
        &format!("<DigitalId><X509Certificate>{g}</X509Certificate></DigitalId><DigitalId>"),
        1,
    );
    assert_ne!(evil, head);
    assert_eq!(
        refused(&with_copy(&evil), &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::DigestMismatch("document"))
    );
}

#[test]
fn a_signature_moved_off_the_root_or_not_last_is_refused() {
    let xml = testdata("xmlsec-rsa-filter2-exc.xml");
    let (head, sig) = xml.split_once("<ds:Signature").expect("signature");
    let sig = sig.replace("</TrustServiceStatusList>", "");
    // Not last: an element after it.
    let not_last = format!("{head}<ds:Signature{sig}<Extra/></TrustServiceStatusList>");
    assert_eq!(
        refused(&not_last, &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::SignatureNotLast)
    );
    // Moved into SchemeInformation.
    let moved = format!("{head}</TrustServiceStatusList>").replacen(
        "</SchemeInformation>",
        &format!("<ds:Signature{}</SchemeInformation>", sig.trim_end()),
        1,
    );
    assert_eq!(
        refused(&moved, &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::SignatureNotLast)
    );
    // A second signature.
    let two = format!("{head}<ds:Signature{sig}<ds:Signature{sig}</TrustServiceStatusList>");
    assert_eq!(
        refused(&two, &pins("signer-ca.pem")),
        ListError::Signature(SignatureError::SignatureCount(2))
    );
}

#[test]
fn an_extra_reference_is_refused() {
    assert_eq!(
        refused(
            &testdata("refuse-extra-reference.xml"),
            &pins("signer-ca.pem")
        ),
        ListError::Signature(SignatureError::UnexpectedReference("#tsl".into()))
    );
}

#[test]
fn a_list_without_signed_properties_naming_its_signer_is_refused() {
    // XAdES baseline B, as xmlsec1 signed it: without the SignedProperties reference,
    // and with one whose SigningCertificateV2 digest names the CA, not the signer.
    for (name, refusal) in [
        (
            "refuse-no-signed-properties.xml",
            SignatureError::NoSignedProperties,
        ),
        (
            "refuse-other-signing-certificate.xml",
            SignatureError::SigningCertificateMismatch,
        ),
    ] {
        assert_eq!(
            refused(&testdata(name), &pins("signer-ca.pem")),
            ListError::Signature(refusal),
            "{name}"
        );
    }
}

#[test]
fn an_extra_transform_is_refused() {
    assert_eq!(
        refused(
            &testdata("refuse-extra-transform.xml"),
            &pins("signer-ca.pem")
        ),
        ListError::Signature(SignatureError::UnexpectedTransform(
            "http://www.w3.org/2002/06/xmldsig-filter2".into()
        ))
    );
}

#[test]
fn a_dtd_or_entity_is_refused() {
    let xml = testdata("signxml-ec-c14n11.xml");
    let (decl, body) = xml.split_once("?>").expect("declaration");
    for dtd in [
        "<!DOCTYPE TrustServiceStatusList>",
        "<!DOCTYPE x [<!ENTITY e \"recognized\">]>",
    ] {
        let with = format!("{decl}?>{dtd}{body}");
        assert_eq!(refused(&with, &pins("signer-ec.pem")), ListError::Dtd);
    }
}

#[test]
fn an_oversized_body_is_refused_before_parsing() {
    let big = format!("<a>{}</a>", " ".repeat(MAX_LIST_BYTES));
    assert_eq!(refused(&big, &pins("signer-ec.pem")), ListError::TooLarge);
}

#[test]
fn a_deeply_nested_document_is_refused_without_overflowing() {
    let deep = format!("{}{}", "<a>".repeat(200_000), "</a>".repeat(200_000));
    assert!(verify(&deep, &pins("signer-ec.pem")).is_err());
}
