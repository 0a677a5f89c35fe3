//! Loading trust anchors from PEM bundles.

use super::testkit::{expected, Mint, Pki};
use super::tests::pki;
use super::*;

const ONE_CERT: &str = "-----BEGIN CERTIFICATE-----\n";

#[test]
fn trust_anchors_from_pem() {
    assert!(matches!(
        TrustAnchors::from_pem(""),
        Err(AnchorError::Empty)
    ));
    assert!(matches!(
        TrustAnchors::from_pem(" \n\n"),
        Err(AnchorError::Empty)
    ));
    assert!(matches!(
        TrustAnchors::from_pem("garbage"),
        Err(AnchorError::Malformed(_))
    ));
    assert!(matches!(
        TrustAnchors::from_pem(ONE_CERT),
        Err(AnchorError::Malformed(_))
    ));
    let bad_base64 = format!("{ONE_CERT}!!!!\n-----END CERTIFICATE-----\n");
    assert!(
        matches!(TrustAnchors::from_pem(&bad_base64), Err(AnchorError::Malformed(m)) if m.starts_with("block 1"))
    );
    let not_der = format!("{ONE_CERT}AAAA\n-----END CERTIFICATE-----\n");
    assert!(matches!(
        TrustAnchors::from_pem(&not_der),
        Err(AnchorError::Malformed(_))
    ));

    // Other line widths and CRLF, as hand-edited bundles have.
    let body: String = pki()
        .ca_pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let rewrapped: Vec<String> = body
        .as_bytes()
        .chunks(76)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let wide = format!(
        "{ONE_CERT}{}\r\n-----END CERTIFICATE-----\r\n",
        rewrapped.join("\r\n")
    );
    assert_eq!(
        TrustAnchors::from_pem(&wide)
            .map(|a| a.len())
            .map_err(|e| e.to_string()),
        Ok(1)
    );

    let other = Pki::fixed();
    let two = format!("# first\n{}\n# second\r\n{}", pki().ca_pem, other.ca_pem);
    let anchors = TrustAnchors::from_pem(&two).expect("two certs");
    assert_eq!(anchors.len(), 2);
    assert!(!anchors.is_empty());
    let token = Mint::default().vp_token(&other);
    assert!(verify_vp_token(
        &token,
        &expected(18),
        &KindAnchors::single(Kind::EU_AV, anchors)
    )
    .is_ok());

    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("ed25519");
    let ed = rcgen::CertificateParams::new(Vec::<String>::new())
        .expect("params")
        .self_signed(&key)
        .expect("cert");
    let mixed = format!("{}{}", pki().ca_pem, ed.pem());
    assert!(
        matches!(TrustAnchors::from_pem(&mixed), Err(AnchorError::Unsupported(m)) if m.starts_with("block 2"))
    );
    let key_block = format!("{}{}", pki().ca_pem, key.serialize_pem());
    assert!(
        matches!(TrustAnchors::from_pem(&key_block), Err(AnchorError::Malformed(m)) if m.contains("PRIVATE KEY"))
    );
}
