//! The wallet's VICAL publisher: its output against Annex C.1.7 and RFC 9052, read back
//! independently, then against the verifier `agegate::mdoc::vical`.

use super::testkit::{decode, get, int_key, T};
use super::{
    cbor, mdl_vical, sig_structure, TestIssuer, VicalEntry, VicalKnobs, VicalPublisher, DAY,
    MDL_DOCTYPE,
};
use ciborium::Value;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::Signature;

#[test]
fn wallet_vical_is_a_signed_annex_c_list() {
    let publisher = VicalPublisher::new(T);
    let entries = [
        VicalEntry::mdl(b"root-a"),
        VicalEntry::any_doc_type(b"root-b"),
    ];
    let sign1 = decode(&publisher.vical(&entries, &VicalKnobs::default()));
    let Value::Array(parts) = &sign1 else {
        panic!("not an array: {sign1:?}")
    };
    let [Value::Bytes(protected), unprotected, Value::Bytes(payload), Value::Bytes(sig)] =
        parts.as_slice()
    else {
        panic!("not a COSE_Sign1: {parts:?}")
    };
    assert_eq!(
        protected,
        &cbor(&Value::Map(vec![(Value::from(1), Value::from(-7))]))
    );
    let chain = int_key(unprotected, 33).expect("x5chain");
    assert_eq!(
        chain,
        &Value::Array(vec![Value::Bytes(publisher.signer_der.clone())])
    );
    let signature = Signature::from_slice(sig).expect("r || s");
    assert!(publisher
        .signer_key()
        .verifying_key()
        .verify(&sig_structure(protected, payload), &signature)
        .is_ok());

    let vical = decode(payload);
    assert_eq!(get(&vical, "version"), &Value::Text("1.0".into()));
    assert!(matches!(get(&vical, "date"), Value::Tag(0, _)));
    let Value::Array(infos) = get(&vical, "certificateInfos") else {
        panic!("certificateInfos")
    };
    assert_eq!(
        get(&infos[0], "certificate"),
        &Value::Bytes(b"root-a".to_vec())
    );
    assert_eq!(
        get(&infos[0], "docType"),
        &Value::Array(vec![Value::Text(MDL_DOCTYPE.into())])
    );
    assert!(infos[1]
        .as_map()
        .unwrap()
        .iter()
        .all(|(k, _)| k.as_text() != Some("docType")));
}

/// Each knob spoils the VICAL the way its name says, as the verifier judges it.
#[test]
fn wallet_vical_and_verifier_agree() {
    use agegate::mdoc::vical::{mdl_anchors, ChainCert, VicalError as E};
    use agegate::mdoc::TrustAnchors;
    let roots: Vec<Vec<u8>> = (0..2).map(|_| TestIssuer::new(T).ca_der).collect();

    let (bytes, anchor_pem) = mdl_vical(&roots, T);
    let anchors = TrustAnchors::from_pem(&anchor_pem).unwrap();
    let got = mdl_anchors(&bytes, &anchors, T).expect("valid");
    assert_eq!(got.certificates, roots);
    assert_eq!(got.provider, "agegate test VICAL provider");
    assert_eq!((got.date, got.issue_id), (T, Some(7)));

    let publisher = VicalPublisher::new(T);
    let anchors = TrustAnchors::from_pem(&publisher.anchor_pem).unwrap();
    let check = |p: &VicalPublisher, entries: &[VicalEntry], knobs: VicalKnobs| {
        mdl_anchors(&p.vical(entries, &knobs), &anchors, T).map(|g| g.certificates.len())
    };
    let one = [VicalEntry::mdl(&roots[0])];
    let mixed = [
        VicalEntry::mdl(&roots[0]),
        VicalEntry::for_doc_types(&roots[1], &["eu.europa.ec.eudi.pid.1"]),
        VicalEntry::any_doc_type(&roots[1]),
    ];
    let knobs = VicalKnobs::default;
    assert_eq!(check(&publisher, &mixed, knobs()), Ok(2));
    assert_eq!(check(&publisher, &mixed[1..2], knobs()), Ok(0));
    let tagged = VicalKnobs {
        tagged: true,
        ..knobs()
    };
    assert_eq!(check(&publisher, &one, tagged), Ok(1));
    let spoiled = [
        (
            VicalKnobs {
                bad_signature: true,
                ..knobs()
            },
            E::SignatureInvalid,
        ),
        (
            VicalKnobs {
                tamper_payload: true,
                ..knobs()
            },
            E::SignatureInvalid,
        ),
        (
            VicalKnobs {
                no_x5chain: true,
                ..knobs()
            },
            E::MissingX5chain,
        ),
        (
            VicalKnobs {
                wrong_signer: true,
                ..knobs()
            },
            E::UntrustedSigner,
        ),
    ];
    for (knobs, error) in spoiled {
        assert_eq!(
            check(&publisher, &one, knobs.clone()),
            Err(error),
            "{knobs:?}"
        );
    }
    let expired = publisher.with_signer_validity(T - 400 * DAY, T - DAY);
    assert_eq!(
        check(&expired, &one, knobs()),
        Err(E::CertificateExpired(ChainCert::Signer))
    );

    let chained = VicalPublisher::with_intermediate(T);
    let anchors = TrustAnchors::from_pem(&chained.anchor_pem).unwrap();
    let bytes = chained.vical(&one, &knobs());
    assert_eq!(
        mdl_anchors(&bytes, &anchors, T).map(|g| g.certificates.len()),
        Ok(1)
    );
}
