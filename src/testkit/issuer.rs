//! Issuer: CA, document signer, device key.

use super::{TestIssuer, DAY};
use p256::ecdsa::SigningKey;
use std::sync::Arc;

/// A CA: its certificate and key, to sign certificates under it.
pub(super) struct Ca {
    pub(super) cert: rcgen::Certificate,
    pub(super) key: rcgen::KeyPair,
}

/// The test kit's certificates: subject `C=country, CN=cn`, valid over
/// `[not_before, not_after]` (Unix seconds); a CA (keyCertSign, cRLSign) or an
/// end-entity signer (digitalSignature).
pub(super) fn cert_params(
    country: &str,
    cn: &str,
    (not_before, not_after): (i64, i64),
    ca: bool,
) -> rcgen::CertificateParams {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CountryName, country);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    if ca {
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
    } else {
        params.is_ca = rcgen::IsCa::ExplicitNoCa;
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    }
    set_validity(&mut params, not_before, not_after);
    params
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
        let cert = cert_params("UT", ca_name, (not_before, not_after), true)
            .self_signed(&key)
            .unwrap();
        let ca = Arc::new(Ca { cert, key });
        let device_key = SigningKey::random(&mut rand::rngs::OsRng);
        Self::with_ca(ca, device_key, not_before, not_after)
    }

    /// An issuer under a CA made elsewhere (scripts/trustlist-fixtures.py's provider in a
    /// signed list): its P-256 key (PKCS#8 PEM) and its subject, `C=EU, CN=cn, O=org` encoded
    /// as the script writes it, so the document signer names and is signed by that
    /// certificate.
    /// The document signer is valid as in [`TestIssuer::new`].
    pub fn under_ca_key(key_pem: &str, cn: &str, org: &str, now: i64) -> Self {
        let (not_before, not_after) = (now - 30 * DAY, now + 365 * DAY);
        let key = rcgen::KeyPair::from_pem(key_pem).expect("a PKCS#8 P-256 key");
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name = rcgen::DistinguishedName::new();
        let eu = rcgen::PrintableString::try_from("EU").unwrap();
        params.distinguished_name.push(
            rcgen::DnType::CountryName,
            rcgen::DnValue::PrintableString(eu),
        );
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, org);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        set_validity(&mut params, not_before, not_after);
        let cert = params.self_signed(&key).unwrap();
        let device_key = SigningKey::random(&mut rand::rngs::OsRng);
        Self::with_ca(
            Arc::new(Ca { cert, key }),
            device_key,
            not_before,
            not_after,
        )
    }

    /// An issuer on fixed dates for the unit tests: a `ca_alg` CA valid from 1 January of
    /// `ca_years.0` to 1 January of `ca_years.1`, a P-256 document signer over `ds_years`
    /// likewise, and a fixed device key.
    pub fn with(
        ca_alg: &'static rcgen::SignatureAlgorithm,
        ca_years: (i32, i32),
        ds_years: (i32, i32),
    ) -> Self {
        let key = rcgen::KeyPair::generate_for(ca_alg).unwrap();
        let validity = (year(ca_years.0), year(ca_years.1));
        let cert = cert_params("EU", "Test AV IACA", validity, true)
            .self_signed(&key)
            .unwrap();
        let device_key = SigningKey::from_slice(&[0x42; 32]).unwrap();
        Self::with_ca(
            Arc::new(Ca { cert, key }),
            device_key,
            year(ds_years.0),
            year(ds_years.1),
        )
    }

    /// [`TestIssuer::with`] a P-256 CA valid 2020–2040 and a document signer 2024–2027.
    pub fn fixed() -> Self {
        Self::with(&rcgen::PKCS_ECDSA_P256_SHA256, (2020, 2040), (2024, 2027))
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
        let validity = (not_before, not_after);
        let mut params = cert_params("UT", "agegate test Proof of Age DS", validity, false);
        params.use_authority_key_identifier_extension = true;
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

pub fn p256_key(kp: &rcgen::KeyPair) -> SigningKey {
    use p256::pkcs8::DecodePrivateKey as _;
    SigningKey::from(p256::SecretKey::from_pkcs8_der(&kp.serialize_der()).unwrap())
}

/// Sets a certificate's validity to `[not_before, not_after]` (Unix seconds).
pub fn set_validity(params: &mut rcgen::CertificateParams, not_before: i64, not_after: i64) {
    let at = |t: i64| {
        let secs = u64::try_from(t).expect("certificate times before 1970 are not supported");
        rcgen::date_time_ymd(1970, 1, 1) + std::time::Duration::from_secs(secs)
    };
    params.not_before = at(not_before);
    params.not_after = at(not_after);
}

/// 1 January of `y`, 00:00 UTC, in Unix seconds.
pub(super) fn year(y: i32) -> i64 {
    time::Date::from_calendar_date(y, time::Month::January, 1)
        .unwrap()
        .midnight()
        .assume_utc()
        .unix_timestamp()
}
