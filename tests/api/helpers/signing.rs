//! A verifier's signing identity for signed wallet requests (`--request-signing-key` and
//! `--request-signing-cert`, or their older `--dc-api-signing-*` names), and a server
//! signing with one.

use super::{spawn_app_with, trusting, TestApp, T0};
use agegate::config::Settings;
use agegate::testkit::{TestIssuer, DAY};
use std::path::PathBuf;

/// A signing identity: a P-256 key and its leaf, issued by a CA or self-signed, valid
/// over `[from, until]`, as PEM files in a directory that lives as long as it.
pub struct Identity {
    pub key: PathBuf,
    /// The chain, leaf first.
    pub cert: PathBuf,
    pub leaf_der: Vec<u8>,
    /// Empty for a self-signed leaf.
    pub ca_der: Vec<u8>,
    _dir: tempfile::TempDir,
}

impl Identity {
    /// A leaf that is its own issuer (allowed, with a warning: HAIP wallets refuse it).
    pub fn self_signed(from: i64, until: i64) -> Self {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let leaf = leaf_params(from, until).self_signed(&key).unwrap();
        Self::written(&key, &leaf, None)
    }

    /// A leaf issued by a CA valid a day longer each side; the chain file holds both.
    pub fn ca_issued(from: i64, until: i64) -> Self {
        let ca_key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca = rcgen::CertificateParams::new(vec![]).unwrap();
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "agegate test registrar CA");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.not_before = at(from - DAY);
        ca.not_after = at(until + DAY);
        let ca = ca.self_signed(&ca_key).unwrap();
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut leaf = leaf_params(from, until);
        leaf.distinguished_name
            .push(rcgen::DnType::CommonName, "age.example verifier");
        let leaf = leaf.signed_by(&key, &ca, &ca_key).unwrap();
        Self::written(&key, &leaf, Some(&ca))
    }

    fn written(
        key: &rcgen::KeyPair,
        leaf: &rcgen::Certificate,
        ca: Option<&rcgen::Certificate>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (key_path, cert_path) = (dir.path().join("key.pem"), dir.path().join("chain.pem"));
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        let ca_pem = ca.map(rcgen::Certificate::pem).unwrap_or_default();
        std::fs::write(&cert_path, format!("{}{ca_pem}", leaf.pem())).unwrap();
        Identity {
            key: key_path,
            cert: cert_path,
            leaf_der: leaf.der().to_vec(),
            ca_der: ca.map(|ca| ca.der().to_vec()).unwrap_or_default(),
            _dir: dir,
        }
    }

    /// The signer `serve` loads from these files at `T0`.
    pub fn signer(&self) -> agegate::dcapi::RequestSigner {
        agegate::config::load_dc_api_signer(&self.key, &self.cert, T0).expect("a valid identity")
    }
}

fn at(t: i64) -> time::OffsetDateTime {
    rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(t as u64)
}

fn leaf_params(from: i64, until: i64) -> rcgen::CertificateParams {
    let mut leaf = rcgen::CertificateParams::new(vec!["age.example".into()]).unwrap();
    leaf.not_before = at(from);
    leaf.not_after = at(until);
    leaf
}

/// A server at `T0` signing wallet requests with `identity` and trusting `issuer` for
/// eu-av; then `configure`d.
pub async fn spawn_signing_app(
    issuer: &TestIssuer,
    identity: &Identity,
    configure: impl FnOnce(&mut Settings),
) -> TestApp {
    let signer = identity.signer();
    spawn_app_with(|s| {
        s.trust = trusting(agegate::domain::Kind::EU_AV, &issuer.ca_pem);
        s.dc_api_signer = Some(signer);
        configure(s);
    })
    .await
}

/// The DER certificates of a JWS header's `x5c` (standard base64), in order.
pub fn x5c(header: &serde_json::Value) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    header["x5c"]
        .as_array()
        .expect("x5c")
        .iter()
        .map(|c| {
            base64::engine::general_purpose::STANDARD
                .decode(c.as_str().unwrap())
                .unwrap()
        })
        .collect()
}
