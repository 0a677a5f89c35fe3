//! Digests and the device signature cover embedded items exactly as received
//! (ISO/IEC 18013-5 section 9.1.2.5): a non-preferred head is accepted when it is what the
//! issuer hashed and the device signed, and is never normalised either way.

use ciborium::Value;

use super::testkit::{
    device_namespaces_entry, enc, expected, item, long_tag24, splice, tag24, vp_token_of, Mint,
};
use super::tests::pki;
use super::*;

fn check(bytes: &[u8]) -> Result<u8, PresentationError> {
    verify_vp_token(&vp_token_of(bytes), &expected(18), &pki().anchors()).map(|p| p.age_over)
}

/// The first minted item (digestID 7) with the preferred and the long head.
fn first_item() -> (Vec<u8>, Vec<u8>) {
    let content = item(7, "age_over_18", Value::Bool(true));
    (enc(&tag24(content.clone())), long_tag24(&content))
}

/// `deviceSigned.nameSpaces` (an empty map) with the preferred and the long head.
fn device_namespaces() -> (Vec<u8>, Vec<u8>) {
    let preferred = device_namespaces_entry(&[0xd8, 0x18, 0x41, 0xa0]);
    (preferred, device_namespaces_entry(&long_tag24(&[0xa0])))
}

#[test]
fn a_long_item_head_that_was_hashed_is_accepted() {
    let mint = Mint {
        long_item_header: true,
        ..Mint::default()
    };
    let bytes = mint.device_response(pki());
    assert!(bytes
        .windows(first_item().1.len())
        .any(|w| w == first_item().1));
    assert_eq!(check(&bytes), Ok(18));
}

#[test]
fn a_long_device_namespaces_head_that_was_signed_is_accepted() {
    let mint = Mint {
        long_device_ns_header: true,
        ..Mint::default()
    };
    let bytes = mint.device_response(pki());
    let long = device_namespaces().1;
    assert!(bytes.windows(long.len()).any(|w| w == long));
    assert_eq!(check(&bytes), Ok(18));
}

#[test]
fn heads_are_not_normalised_either_way() {
    // Hashed and signed with preferred heads, sent with long ones.
    let (preferred, long) = first_item();
    let mut bytes = Mint::default().device_response(pki());
    splice(&mut bytes, &preferred, &long);
    assert_eq!(check(&bytes), Err(PresentationError::DigestMismatch));
    let (preferred, long) = device_namespaces();
    let mut bytes = Mint::default().device_response(pki());
    splice(&mut bytes, &preferred, &long);
    assert_eq!(
        check(&bytes),
        Err(PresentationError::DeviceSignatureInvalid)
    );

    // Hashed and signed with long heads, sent with preferred ones.
    let (preferred, long) = first_item();
    let mint = Mint {
        long_item_header: true,
        ..Mint::default()
    };
    let mut bytes = mint.device_response(pki());
    splice(&mut bytes, &long, &preferred);
    assert_eq!(check(&bytes), Err(PresentationError::DigestMismatch));
    let (preferred, long) = device_namespaces();
    let mint = Mint {
        long_device_ns_header: true,
        ..Mint::default()
    };
    let mut bytes = mint.device_response(pki());
    splice(&mut bytes, &long, &preferred);
    assert_eq!(
        check(&bytes),
        Err(PresentationError::DeviceSignatureInvalid)
    );
}

/// A decoy document of another type comes first, with the same items in preferred
/// form: the spans must come from the Proof of Age document the decoded checks use.
#[test]
fn spans_come_from_the_chosen_document() {
    let mint = Mint {
        long_item_header: true,
        long_device_ns_header: true,
        ..Mint::default()
    };
    let mut bytes = mint.device_response(pki());
    let value: Value = ciborium::de::from_reader(bytes.as_slice()).expect("cbor");
    let docs = value
        .as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some("documents")))
        .and_then(|(_, v)| v.as_array())
        .expect("documents");
    let mut decoy = docs[0].clone();
    let Value::Map(entries) = &mut decoy else {
        panic!("map")
    };
    for (k, v) in entries.iter_mut() {
        if k.as_text() == Some("docType") {
            *v = Value::Text("org.iso.18013.5.1.mDL".into());
        }
    }
    let mut one = enc(&Value::Text("documents".into()));
    let mut two = one.clone();
    one.push(0x81);
    two.push(0x82);
    two.extend_from_slice(&enc(&decoy));
    splice(&mut bytes, &one, &two);
    assert_eq!(check(&bytes), Ok(18));
}
