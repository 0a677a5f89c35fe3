//! Every certificate between a list's signer and the pinned one is a CA: lists whose
//! signer chains to the pinned root through an intermediate, made by
//! scripts/trustlist-fixtures.py `--chain` (xmlsec1 for the XML list, jwcrypto for the
//! JSON one), are taken through a CA intermediate and refused through one whose
//! basicConstraints says it is not a CA.

use super::cert::ChainError;
use super::tests::{pins, testdata, NOW};
use super::xmldsig::SignatureError;
use super::*;

fn xml(name: &str) -> Result<TrustedList, ListError> {
    let xml = testdata(&format!("chain/{name}.xml"));
    eu_av_list(xml.as_bytes(), &pins("chain/root-ca.pem"), NOW, None)
}

fn json(name: &str) -> Result<EntityList, ListError> {
    let jws = testdata(&format!("chain/{name}.jwt"));
    lote(
        jws.as_bytes(),
        LoteKind::EudiPid,
        &pins("chain/root-ca.pem"),
        NOW,
        None,
    )
}

#[test]
fn a_signer_under_a_ca_intermediate_is_taken() {
    assert_eq!(xml("ca-intermediate").expect("taken").anchors.len(), 1);
    assert_eq!(json("ca-intermediate").expect("taken").anchors.len(), 1);
}

#[test]
fn a_signer_under_an_intermediate_that_is_not_a_ca_is_refused() {
    assert_eq!(
        xml("non-ca-intermediate"),
        Err(ListError::Signature(SignatureError::Chain(
            ChainError::IntermediateNotCa
        )))
    );
    assert_eq!(
        json("non-ca-intermediate"),
        Err(ListError::Jws(ChainError::IntermediateNotCa.to_string()))
    );
}

#[test]
fn a_pinned_intermediate_need_not_be_a_ca() {
    // Pinning the intermediate itself is the operator's choice: nothing stands between.
    let xml = testdata("chain/non-ca-intermediate.xml");
    let doc = parse_xml(xml.as_bytes()).expect("xml");
    let key_info: Vec<Vec<u8>> = doc
        .descendants()
        .filter(|n| n.has_tag_name((xmldsig::NS_DSIG, "X509Certificate")))
        .map(|n| {
            use base64::Engine;
            let b64: String = n.text().unwrap_or("").split_whitespace().collect();
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64")
        })
        .collect();
    let intermediate = SignerCert::from_der(&key_info[1]).expect("cert");
    assert!(eu_av_list(xml.as_bytes(), &[intermediate], NOW, None).is_ok());
}
