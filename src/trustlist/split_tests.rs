//! What is read from a list is exactly what its signature covers: each value agegate
//! reads, split by a comment, a processing instruction or a CDATA section, in lists
//! xmlsec1 signed and verified (testdata/split, made by scripts/trustlist-fixtures.py
//! `--split`). A comment or CDATA section is invisible to canonical XML, so the value
//! reads as the signed text; a processing instruction is signed markup inside a value,
//! so the list is refused naming the value. Never the first piece alone
//! (`1<!---->7` as 1).

use base64::Engine;

use super::tests::{pins, testdata, NOW};
use super::*;

fn load(name: &str) -> Result<TrustedList, ListError> {
    let xml = testdata(&format!("split/{name}.xml"));
    eu_av_list(xml.as_bytes(), &pins("split/signer-ca.pem"), NOW, None)
}

fn provider() -> Vec<u8> {
    let pem = testdata("split/provider.pem");
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("pem")
}

/// The list as signed: sequence 17, NextUpdate 2099-01-01, one recognised PAA service.
fn assert_read_as_signed(name: &str) {
    let list = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(list.sequence, 17, "{name}");
    assert_eq!(list.next_update, 4_070_908_800, "{name}");
    assert_eq!(list.anchors, vec![provider()], "{name}");
}

const VALUES: [(&str, ListError); 5] = [
    ("sequence", ListError::Malformed("TSLSequenceNumber")),
    ("next-update", ListError::Malformed("NextUpdate")),
    (
        "service-type",
        ListError::Malformed("ServiceTypeIdentifier"),
    ),
    ("service-status", ListError::Malformed("ServiceStatus")),
    ("certificate", ListError::BadCertificate(1)),
];

#[test]
fn a_value_split_by_a_comment_reads_as_its_canonical_text() {
    for (value, _) in VALUES {
        assert_read_as_signed(&format!("{value}-comment"));
    }
}

#[test]
fn a_value_split_by_a_cdata_section_reads_as_its_canonical_text() {
    for (value, _) in VALUES {
        assert_read_as_signed(&format!("{value}-cdata"));
    }
}

#[test]
fn a_value_split_by_a_processing_instruction_refuses_the_list_naming_the_value() {
    for (value, refusal) in VALUES {
        assert_eq!(load(&format!("{value}-pi")), Err(refusal), "{value}");
    }
}

#[test]
fn a_comment_put_in_after_signing_never_reads_as_the_first_piece() {
    // The issue's own case, on a list signed with sequence 17: `1<!---->7` is 17, so a
    // node holding list 17 refuses the list as older than 18 and takes it against 17.
    let xml = testdata("split/sequence-comment.xml");
    assert!(xml.contains("<TSLSequenceNumber>1<!---->7</TSLSequenceNumber>"));
    let pins = pins("split/signer-ca.pem");
    assert_eq!(
        eu_av_list(xml.as_bytes(), &pins, NOW, Some(18)),
        Err(ListError::Older {
            got: 17,
            in_force: 18
        })
    );
    assert!(eu_av_list(xml.as_bytes(), &pins, NOW, Some(17)).is_ok());
}

#[test]
fn a_value_given_twice_refuses_the_list() {
    // Signed with `<TSLSequenceNumber>1</…><TSLSequenceNumber>17</…>`: both are signed,
    // but two sequence numbers have no one reading.
    assert_eq!(
        load("sequence-twice"),
        Err(ListError::Malformed("TSLSequenceNumber"))
    );
}

#[test]
fn a_lote_payload_naming_a_member_twice_is_refused_after_its_signature_holds() {
    // jwcrypto signed `"LoTESequenceNumber": 1, "LoTESequenceNumber": 17`: serde_json
    // alone would read 17, other readers 1.
    let jws = testdata("split/lote-member-twice.jwt");
    assert_eq!(
        lote(
            jws.as_bytes(),
            LoteKind::EudiPid,
            &pins("split/signer-ca.pem"),
            NOW,
            None
        ),
        Err(ListError::Malformed(
            "LoTE payload (JSON, each member once)"
        ))
    );
}
