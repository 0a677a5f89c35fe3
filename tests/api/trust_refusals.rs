//! Every refusal of docs/trust.md#where-trust-anchors-come-from, served at a list's URL
//! to a running node: each is refused for its own reason in one log line naming the list,
//! the reason label and the detail, and the list in force stays. The bodies are the
//! xmlsec1/signxml-signed fixtures of src/trustlist/testdata, tampered here. (An
//! oversized body: tests/api/trust_refresh.rs; a timeout, 10 s in the product:
//! src/trust/refresh_tests.rs with a short one.)

use crate::helpers::temp_db;
use crate::trust_lists::testdata;
use crate::trust_refresh::{list, node, ListSource, Reply};

fn text(name: &str) -> String {
    std::fs::read_to_string(testdata(name)).unwrap()
}

/// List A with provider g's certificate added to its first service.
fn with_provider_g(xml: &str) -> String {
    let g: String = text("provider-g-added.pem")
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let added = format!("<DigitalId><X509Certificate>{g}</X509Certificate></DigitalId><DigitalId>");
    xml.replacen("<DigitalId>", &added, 1)
}

/// The ways a list is refused: (what, body, reason label, detail).
fn refusals() -> Vec<(&'static str, Vec<u8>, &'static str, String)> {
    let a = text("xmlsec-rsa-filter2-exc.xml");
    let (head, sig) = a.split_once("<ds:Signature").unwrap();
    let signed = &head[head.find("<SchemeInformation>").unwrap()..];
    let object = format!("<ds:Object>{signed}</ds:Object></ds:Signature>");
    let copy_elsewhere = format!(
        "{}<ds:Signature{}",
        with_provider_g(head),
        sig.replacen("</ds:Signature>", &object, 1)
    );
    let body = a.split_once("?>").unwrap().1;
    let wrapped = format!(
        "<TrustServiceStatusList xmlns=\"http://uri.etsi.org/02231/v2#\"><Evil/>{body}</TrustServiceStatusList>"
    );
    let (decl, rest) = a.split_once("?>").unwrap();
    let dtd = format!("{decl}?><!DOCTYPE x [<!ENTITY e \"recognized\">]>{rest}");
    let digest = "signature refused: digest of the document does not match".to_owned();
    // Neighbours differ in detail, so a line with this case's detail is this case's.
    vec![
        (
            "a certificate added",
            with_provider_g(&a).into_bytes(),
            "signature",
            digest.clone(),
        ),
        (
            "an extra reference",
            text("refuse-extra-reference.xml").into_bytes(),
            "signature",
            "signature refused: a reference other than the whole document and the \
             SignedProperties: #tsl"
                .into(),
        ),
        (
            "a status changed",
            a.replacen("service-status/deprecated", "service-status/recognized", 1)
                .into_bytes(),
            "signature",
            digest.clone(),
        ),
        (
            "an extra transform",
            text("refuse-extra-transform.xml").into_bytes(),
            "signature",
            "signature refused: a transform the profile does not allow: \
             http://www.w3.org/2002/06/xmldsig-filter2"
                .into(),
        ),
        (
            "a signed copy elsewhere",
            copy_elsewhere.into_bytes(),
            "signature",
            digest,
        ),
        (
            "an unsigned list around it",
            wrapped.into_bytes(),
            "signature",
            "signature refused: ds:Signature is not the last child of the root".into(),
        ),
        (
            "no SignedProperties",
            text("refuse-no-signed-properties.xml").into_bytes(),
            "signature",
            "signature refused: no reference to the SignedProperties (XAdES names the \
             signing certificate there)"
                .into(),
        ),
        (
            "SignedProperties naming another certificate",
            text("refuse-other-signing-certificate.xml").into_bytes(),
            "signature",
            "signature refused: SignedProperties names another signing certificate".into(),
        ),
        (
            "a DTD and entity",
            dtd.into_bytes(),
            "invalid",
            "has a DTD or entity declaration".into(),
        ),
        (
            "another signer",
            text("signxml-ec-c14n11.xml").into_bytes(),
            "signature",
            "signature refused: signer is not a pinned certificate and does not chain to one"
                .into(),
        ),
        (
            "another type",
            text("refuse-wrong-type.xml").into_bytes(),
            "invalid",
            "list type http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric is not the \
             one expected"
                .into(),
        ),
        (
            "past NextUpdate + 7 days",
            text("refuse-past-next-update.xml").into_bytes(),
            "stale",
            "past its NextUpdate by more than 7 days".into(),
        ),
        (
            "a lower sequence number",
            a.into_bytes(),
            "older",
            "sequence number 1 is lower than the 2 in force".into(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refused_served_list_logs_the_list_and_its_own_reason_and_the_one_in_force_stays() {
    let source = ListSource::start(list("xmlsec-rsa-filter2-exc-b.xml")).await;
    let (_db_dir, db) = temp_db();
    let (node, _metrics) = node(&db, &source.url);
    let named = format!("trusted list eu-av-trusted-list {}", source.url);
    node.logged(&format!("{named}: sequence 2 in force")).await;
    for (what, body, reason, detail) in refusals() {
        let line = format!("{named} refused ({reason}): {detail}; sequence 2 stays in force");
        let before = node.log_count(&line);
        source.serve(Reply::List(body));
        node.logged_times(&line, before + 1).await;
        let logged = node.log_lines(&named);
        let last = logged.last().unwrap();
        assert!(last.ends_with(&line), "{what}: {last}");
    }
    assert_eq!(
        node.log_count(": sequence 1 in force"),
        0,
        "nothing else taken"
    );
}
