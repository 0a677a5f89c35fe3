use ciborium::Value;

use super::*;
use crate::mdoc::cbor;
use crate::mdoc::testkit::Pki;
use crate::testkit::{
    identifier_list_ref, pack, status_list_ref, stranger_signer, text, zlib, TokenSpec, DAY,
};

const URI: &str = "https://issuer.example/status/1";
/// 2025-06-01T00:00:00Z, the unit tests' clock.
const NOW: i64 = 1_748_736_000;

fn claim_of(status: Value) -> StatusClaim {
    let map = vec![(text("status"), status)];
    parse_status(cbor::get(&map, "status"))
}

#[test]
fn the_mso_status_names_either_list_and_the_status_list_wins() {
    let absent: Vec<(Value, Value)> = vec![];
    assert_eq!(
        parse_status(cbor::get(&absent, "status")),
        StatusClaim::Absent
    );
    let StatusClaim::Listed(r) = claim_of(status_list_ref(7, URI, None)) else {
        panic!("a status list entry");
    };
    assert_eq!(
        (r.entry, r.uri.as_str(), r.certificate),
        (Entry::Index(7), URI, None)
    );
    let StatusClaim::Listed(r) = claim_of(identifier_list_ref(b"abc", URI, Some(b"der"))) else {
        panic!("an identifier list entry");
    };
    assert_eq!(r.entry, Entry::Identifier(b"abc".to_vec()));
    assert_eq!(r.certificate.as_deref(), Some(&b"der"[..]));
    assert_eq!(r.form(), ListForm::IdentifierList);
    // Both named (as the EU AV reference issuer writes): the status list is used.
    let (Value::Map(mut both), Value::Map(ids)) = (
        status_list_ref(3, URI, None),
        identifier_list_ref(b"x", "https://other", None),
    ) else {
        unreachable!()
    };
    both.extend(ids);
    let StatusClaim::Listed(r) = claim_of(Value::Map(both)) else {
        panic!("listed");
    };
    assert_eq!(r.entry, Entry::Index(3));
}

#[test]
fn a_malformed_status_member_is_named_never_a_panic() {
    let entry = |inner: Vec<(&str, Value)>| {
        Value::Map(vec![(
            text("status_list"),
            Value::Map(inner.into_iter().map(|(k, v)| (text(k), v)).collect()),
        )])
    };
    let cases = [
        Value::Integer(1.into()),
        Value::Map(vec![]),
        Value::Map(vec![(text("status_list"), Value::Null)]),
        entry(vec![
            ("idx", Value::Integer((-1).into())),
            ("uri", text(URI)),
        ]),
        entry(vec![
            ("idx", Value::Integer(1.into())),
            ("uri", Value::Bytes(vec![])),
        ]),
        entry(vec![("idx", Value::Integer(1.into())), ("uri", text(""))]),
        entry(vec![
            ("idx", Value::Integer(1.into())),
            ("uri", text(URI)),
            ("certificate", text("pem")),
        ]),
    ];
    for case in cases {
        assert!(
            matches!(claim_of(case.clone()), StatusClaim::Malformed(_)),
            "{case:?}"
        );
    }
    let twice = vec![
        (text("status"), status_list_ref(1, URI, None)),
        (text("status"), status_list_ref(1, URI, None)),
    ];
    assert!(matches!(
        parse_status(cbor::get(&twice, "status")),
        StatusClaim::Malformed(_)
    ));
}

#[test]
fn statuses_are_read_least_significant_bits_first() {
    for bits in [1u8, 2, 4, 8] {
        let max = u8::MAX >> (8 - bits);
        let statuses: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(7).wrapping_add(3) & max)
            .collect();
        let packed = PackedStatuses::new(bits.into(), pack(bits, &statuses)).unwrap();
        assert_eq!(packed.len(), 64);
        for (i, s) in statuses.iter().enumerate() {
            assert_eq!(packed.get(i as u64), Some(*s), "bits {bits} index {i}");
        }
        assert_eq!(packed.get(64), None);
        assert_eq!(packed.get(u64::MAX), None);
    }
    // The draft's example (1 bit): statuses 1,0,0,1,1,1,0,1 then 1,1,0,0,0,1,0,1.
    let draft = PackedStatuses::new(1, vec![0xb9, 0xa3]).unwrap();
    let read: Vec<u8> = (0..16).map(|i| draft.get(i).unwrap()).collect();
    assert_eq!(read, [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]);
    for bits in [0, 3, 5, 16] {
        assert!(PackedStatuses::new(bits, vec![0]).is_none());
    }
}

#[test]
fn a_zlib_bomb_is_refused_and_a_list_inflates_whole() {
    let list = vec![0u8; 1000];
    assert_eq!(inflate_bounded(&zlib(&list), MAX_INFLATED), Some(list));
    // 65 MiB of zeros compress to about 65 KiB: refused once past the cap.
    let bomb = zlib(&vec![0u8; MAX_INFLATED + 1024 * 1024]);
    assert!(bomb.len() < 4 * 1024 * 1024);
    assert_eq!(inflate_bounded(&bomb, MAX_INFLATED), None);
    assert_eq!(inflate_bounded(&zlib(&[1; 100]), 99), None);
    assert_eq!(
        inflate_bounded(&zlib(&[1; 100]), 100).map(|v| v.len()),
        Some(100)
    );
    assert_eq!(inflate_bounded(b"not zlib", MAX_INFLATED), None);
    let mut cut = zlib(&[5; 4000]);
    cut.truncate(cut.len() / 2);
    assert_eq!(inflate_bounded(&cut, MAX_INFLATED), None);
}

/// A status list of `statuses` (1 bit) under `pki`'s CA, x5chain the signer.
fn signed_list(pki: &Pki, statuses: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let signer = pki.status_signer(NOW);
    let mut spec = TokenSpec::status_list(URI, NOW - 60, 1, statuses);
    spec.x5chain = vec![signer.cert_der.clone()];
    (spec.sign(&signer.key), signer.cert_der)
}

#[test]
fn a_status_list_token_is_read_and_its_signer_chains_to_the_kinds_anchors() {
    let pki = Pki::fixed();
    let (token, signer_der) = signed_list(&pki, &[0, 1, 0, 0, 1, 0, 0, 0, 1]);
    let list = ListToken::parse(&token, ListForm::StatusList, URI, NOW).expect("parses");
    assert_eq!(
        (list.iat, list.exp, list.ttl),
        (NOW - 60, Some(NOW - 60 + DAY), Some(3600))
    );
    assert_eq!(
        list.check_signer(Signer::Anchors(&pki.ca_anchors()), NOW),
        Ok(())
    );
    assert_eq!(
        list.check_signer(Signer::Certificate(&signer_der), NOW),
        Ok(())
    );
    let statuses: Vec<Option<u8>> = (0..9).map(|i| list.status_of(&Entry::Index(i))).collect();
    assert_eq!(statuses[..9], [0, 1, 0, 0, 1, 0, 0, 0, 1].map(Some));
    // Packed into two bytes: sixteen entries, the seventeenth is past the end.
    assert_eq!(list.status_of(&Entry::Index(15)), Some(0));
    assert_eq!(list.status_of(&Entry::Index(16)), None);
    assert_eq!(list.status_of(&Entry::Identifier(vec![1])), None);
    // Another issuer's anchors, or a certificate that did not sign it: refused.
    let other = Pki::fixed();
    assert_eq!(
        list.check_signer(Signer::Anchors(&other.ca_anchors()), NOW),
        Err(TokenError::UntrustedSigner)
    );
    let stranger = stranger_signer(NOW);
    assert_eq!(
        list.check_signer(Signer::Certificate(&stranger.cert_der), NOW),
        Err(TokenError::SignatureInvalid)
    );
    // The signer's certificate must be valid now.
    let later = NOW + 400 * DAY;
    assert!(matches!(
        list.check_signer(Signer::Certificate(&signer_der), later),
        Err(TokenError::SignerValidity(_))
    ));
}

#[test]
fn a_token_without_x5chain_needs_the_certificate_the_credential_names() {
    let pki = Pki::fixed();
    let signer = pki.status_signer(NOW);
    let token = TokenSpec::status_list(URI, NOW, 2, &[2, 0, 3]).sign(&signer.key);
    let list = ListToken::parse(&token, ListForm::StatusList, URI, NOW).unwrap();
    assert_eq!(
        list.check_signer(Signer::Anchors(&pki.ca_anchors()), NOW),
        Err(TokenError::MissingX5chain)
    );
    assert_eq!(
        list.check_signer(Signer::Certificate(&signer.cert_der), NOW),
        Ok(())
    );
    assert_eq!(list.status_of(&Entry::Index(0)), Some(2));
    assert_eq!(list.status_of(&Entry::Index(2)), Some(3));
}

#[test]
fn each_refusal_of_a_token_is_named() {
    let pki = Pki::fixed();
    let signer = pki.status_signer(NOW);
    let base = || TokenSpec::status_list(URI, NOW, 1, &[0; 8]);
    let parse = |spec: TokenSpec, form| {
        ListToken::parse(&spec.sign(&signer.key), form, URI, NOW).map(|_| ())
    };
    let int = |n: i64| Value::Integer(n.into());
    let cases: Vec<(TokenSpec, TokenError)> = vec![
        (
            TokenSpec {
                typ: "application/identifierlist+cwt".into(),
                ..base()
            },
            TokenError::WrongType("application/statuslist+cwt"),
        ),
        (
            TokenSpec {
                typ: "statuslist+cwt".into(),
                ..base()
            },
            TokenError::WrongType("application/statuslist+cwt"),
        ),
        (
            base().claim(2, text("https://issuer.example/status/2")),
            TokenError::WrongSubject,
        ),
        (base().claim(4, int(NOW)), TokenError::Expired),
        (base().claim(4, int(NOW - 1)), TokenError::Expired),
        (
            base().claim(6, text("now")),
            TokenError::MalformedClaims("iat"),
        ),
        (
            base().claim(65534, int(0)),
            TokenError::MalformedClaims("ttl"),
        ),
        (
            base().claim(
                65533,
                Value::Map(vec![
                    (text("bits"), int(3)),
                    (text("lst"), Value::Bytes(zlib(&[0]))),
                ]),
            ),
            TokenError::MalformedClaims("status_list.bits"),
        ),
        (
            base().claim(
                65533,
                Value::Map(vec![
                    (text("bits"), int(1)),
                    (text("lst"), Value::Bytes(b"x".to_vec())),
                ]),
            ),
            TokenError::Inflate,
        ),
        (
            TokenSpec { alg: -8, ..base() },
            TokenError::UnsupportedAlgorithm,
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(parse(spec, ListForm::StatusList), Err(expected));
    }
    let mut no_iat = base();
    no_iat.claims.retain(|(k, _)| *k != 6);
    assert_eq!(
        parse(no_iat, ListForm::StatusList),
        Err(TokenError::MalformedClaims("iat"))
    );
    // An identifier list must have exp, and neither form carries the other's claim.
    let ids = || TokenSpec::identifier_list(URI, NOW, &[b"one", b"two"]);
    let mut no_exp = ids();
    no_exp.claims.retain(|(k, _)| *k != 4);
    assert!(matches!(
        parse(no_exp, ListForm::IdentifierList),
        Err(TokenError::MalformedClaims(_))
    ));
    let both = ids().claim(65533, Value::Map(vec![]));
    assert!(matches!(
        parse(both, ListForm::IdentifierList),
        Err(TokenError::MalformedClaims(_))
    ));
    // A bad signature parses (its signer is checked apart) and is refused there.
    let mut token = base().sign(&signer.key);
    let last = token.len() - 1;
    token[last] ^= 1;
    let list = ListToken::parse(&token, ListForm::StatusList, URI, NOW).unwrap();
    assert_eq!(
        list.check_signer(Signer::Certificate(&signer.cert_der), NOW),
        Err(TokenError::SignatureInvalid)
    );
    assert_eq!(
        ListToken::parse(&token[..10], ListForm::StatusList, URI, NOW).err(),
        Some(TokenError::NotCbor)
    );
    let huge = vec![0u8; MAX_TOKEN_BYTES + 1];
    assert_eq!(
        ListToken::parse(&huge, ListForm::StatusList, URI, NOW).err(),
        Some(TokenError::TooLarge)
    );
}

#[test]
fn an_identifier_present_in_its_list_is_revoked() {
    let pki = Pki::fixed();
    let signer = pki.status_signer(NOW);
    let mut spec = TokenSpec::identifier_list(URI, NOW, &[b"one", b"two"]);
    spec.x5chain = vec![signer.cert_der.clone()];
    let list = ListToken::parse(&spec.sign(&signer.key), ListForm::IdentifierList, URI, NOW)
        .expect("parses");
    assert_eq!(
        list.check_signer(Signer::Anchors(&pki.ca_anchors()), NOW),
        Ok(())
    );
    assert_eq!(list.status_of(&Entry::Identifier(b"two".to_vec())), Some(1));
    assert_eq!(
        list.status_of(&Entry::Identifier(b"three".to_vec())),
        Some(0)
    );
    // A status list token is not an identifier list, whatever its claims.
    let (token, _) = signed_list(&pki, &[0]);
    assert_eq!(
        ListToken::parse(&token, ListForm::IdentifierList, URI, NOW).err(),
        Some(TokenError::WrongType("application/identifierlist+cwt"))
    );
}

/// A value nested `depth` arrays deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::Integer(0.into()), |inner, _| {
        Value::Array(vec![inner])
    })
}

#[test]
fn a_token_nested_deeper_than_sixteen_levels_is_refused() {
    let pki = Pki::fixed();
    let signer = pki.status_signer(NOW);
    // The claims map is one level: an extra claim of 15 arrays makes 16.
    let fits = TokenSpec::status_list(URI, NOW, 1, &[0]).claim(-70000, nested(15));
    assert!(ListToken::parse(&fits.sign(&signer.key), ListForm::StatusList, URI, NOW).is_ok());
    let deep = TokenSpec::status_list(URI, NOW, 1, &[0]).claim(-70000, nested(16));
    assert_eq!(
        ListToken::parse(&deep.sign(&signer.key), ListForm::StatusList, URI, NOW).err(),
        Some(TokenError::NotCbor)
    );
    // In the envelope too (the unprotected header).
    let mut envelope = vec![0xd2, 0x84, 0x40, 0xa1, 0x01];
    envelope.extend(std::iter::repeat_n(0x81, 20));
    envelope.extend([0x00, 0x40, 0x40]);
    assert_eq!(
        ListToken::parse(&envelope, ListForm::StatusList, URI, NOW).err(),
        Some(TokenError::NotCbor)
    );
}
