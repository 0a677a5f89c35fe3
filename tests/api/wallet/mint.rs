//! Issuer: CA, document signer, device key.

use super::{TestIssuer, DAY};
use p256::ecdsa::SigningKey;
use std::sync::Arc;

pub(super) struct Ca {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl TestIssuer {
    /// A new CA and document signer, both valid from `now - 30d` to `now + 365d`
    /// (`now`: Unix seconds, normally the app's clock).
    pub fn new(now: i64) -> Self {
        Self::named("agegate test Proof of Age CA", now)
    }

    /// An issuer under its own CA named `ca_name` (a PID provider's, a state's IACA
    /// root), otherwise as [`TestIssuer::new`].
    pub fn named(ca_name: &str, now: i64) -> Self {
        let (not_before, not_after) = (now - 30 * DAY, now + 365 * DAY);
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CountryName, "UT");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, ca_name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        set_validity(&mut params, not_before, not_after);
        let cert = params.self_signed(&key).unwrap();
        let ca = Arc::new(Ca { cert, key });
        let device_key = SigningKey::random(&mut rand::rngs::OsRng);
        Self::with_ca(ca, device_key, not_before, not_after)
    }

    /// The same CA (and device key), but a new document signer valid over
    /// `[not_before, not_after]` (Unix seconds), for expired / not-yet-valid tests.
    pub fn with_signer_validity(&self, not_before: i64, not_after: i64) -> TestIssuer {
        Self::with_ca(
            self.ca.clone(),
            self.device_key.clone(),
            not_before,
            not_after,
        )
    }

    fn with_ca(ca: Arc<Ca>, device_key: SigningKey, not_before: i64, not_after: i64) -> Self {
        let ds = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CountryName, "UT");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "agegate test Proof of Age DS");
        params.is_ca = rcgen::IsCa::ExplicitNoCa;
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
        params.use_authority_key_identifier_extension = true;
        set_validity(&mut params, not_before, not_after);
        let ds_cert = params.signed_by(&ds, &ca.cert, &ca.key).unwrap();
        TestIssuer {
            ca_pem: ca.cert.pem(),
            ca_der: ca.cert.der().to_vec(),
            ds_cert_der: ds_cert.der().to_vec(),
            ds_cert_pem: ds_cert.pem(),
            ds_key: p256_key(&ds),
            device_key,
            ca,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Keys and time
// ---------------------------------------------------------------------------------------

pub(super) fn p256_key(kp: &rcgen::KeyPair) -> SigningKey {
    use p256::pkcs8::DecodePrivateKey as _;
    SigningKey::from(p256::SecretKey::from_pkcs8_der(&kp.serialize_der()).unwrap())
}

/// Sets a certificate's validity to `[not_before, not_after]` (Unix seconds).
pub(super) fn set_validity(params: &mut rcgen::CertificateParams, not_before: i64, not_after: i64) {
    let at = |t: i64| {
        let secs = u64::try_from(t).expect("certificate times before 1970 are not supported");
        rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(secs)
    };
    params.not_before = at(not_before);
    params.not_after = at(not_after);
}
