//! The chain rule on certificates made by rcgen (an independent X.509 writer).

use super::*;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

const NOW: i64 = 1_780_272_000; // 2026-06-01

struct Made {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn make(name: &str, ca: bool, issuer: Option<&Made>) -> Made {
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.is_ca = if ca {
        IsCa::Ca(BasicConstraints::Unconstrained)
    } else {
        IsCa::ExplicitNoCa
    };
    let cert = match issuer {
        Some(i) => params.signed_by(&key, &i.cert, &i.key),
        None => params.self_signed(&key),
    }
    .expect("cert");
    Made { cert, key }
}

fn parsed(m: &Made) -> Cert {
    Cert::from_der(m.cert.der()).expect("parses")
}

#[test]
fn a_leaf_under_a_ca_intermediate_reaches_the_anchor() {
    let root = make("root", true, None);
    let mid = make("mid", true, Some(&root));
    let leaf = make("leaf", false, Some(&mid));
    let anchors = [parsed(&root)];
    let got = verify_chain(&[parsed(&leaf), parsed(&mid)], &anchors, NOW).expect("chains");
    assert_eq!(got.der(), root.cert.der().as_ref());
    // The intermediates may come in any order; each is used once.
    let mid2 = make("mid2", true, Some(&mid));
    let leaf2 = make("leaf2", false, Some(&mid2));
    let chain = [parsed(&leaf2), parsed(&mid), parsed(&mid2)];
    assert!(verify_chain(&chain, &anchors, NOW).is_ok());
}

#[test]
fn an_intermediate_that_is_not_a_ca_is_refused_unless_it_is_the_anchor() {
    let root = make("root", true, None);
    let mid = make("mid", false, Some(&root));
    let leaf = make("leaf", false, Some(&mid));
    let chain = [parsed(&leaf), parsed(&mid)];
    assert_eq!(
        verify_chain(&chain, &[parsed(&root)], NOW).err(),
        Some(ChainError::NotCa(Position::Intermediate(1)))
    );
    assert!(verify_chain(&chain, &[parsed(&mid)], NOW).is_ok());
}

#[test]
fn a_chain_that_reaches_no_anchor_or_nothing_is_refused() {
    let root = make("root", true, None);
    let other = make("other", true, None);
    let leaf = make("leaf", false, Some(&root));
    assert_eq!(
        verify_chain(&[parsed(&leaf)], &[parsed(&other)], NOW).err(),
        Some(ChainError::Untrusted)
    );
    assert_eq!(
        verify_chain(&[], &[parsed(&other)], NOW).err(),
        Some(ChainError::Empty)
    );
}

#[test]
fn validity_is_checked_at_the_given_time() {
    let root = make("root", true, None);
    let leaf = make("leaf", false, Some(&root));
    // rcgen's default validity is 1975 to 4096.
    assert_eq!(
        verify_chain(&[parsed(&leaf)], &[parsed(&root)], -10_000_000_000).err(),
        Some(ChainError::NotYetValid(Position::Leaf))
    );
}
