//! The one mdoc test kit: a Proof of Age issuer (CA, document signer, device key) that
//! mints DeviceResponses (IssuerSigned items, MSO, COSE_Sign1 issuerAuth, deviceSignature)
//! and a VICAL publisher, for this crate's unit tests and for tests/api's test wallet.
//!
//! Why a feature: integration tests link the library as any user does, so `cfg(test)`
//! code is invisible to them; `testkit` (off by default, on for tests through the
//! dev-dependency on this crate itself) shares one kit without shipping it in the product.
//!
//! Everything is built by hand with `ciborium` from the CDDL of ISO/IEC 18013-5 (sections
//! 8.3.2.1.2, 9.1.2, 9.1.3, Annex C.1.7) and OpenID4VP 1.0 (Appendix B.2.6.1),
//! deliberately independent of the verifier in [`crate::mdoc`]: two implementations that
//! agree are the point. Test code: it panics on misuse.

mod encode;
mod issuer;
mod mdoc;
mod status;
mod vical;
mod vical_publisher;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ciborium::Value;
use p256::ecdsa::SigningKey;
use std::sync::Arc;

pub use encode::{
    cbor, cose_key, cose_sign1, flip_signature_bit, long_tag24, map, rfc3339, session_transcript,
    sha256, sig_structure, tag24, tdate, text,
};
pub use mdoc::fixed_item;
pub use status::{
    identifier_list_ref, pack, status_list_ref, stranger_signer, zlib, StatusSigner, TokenSpec,
};
pub use vical::{years, PkiSpec, Vical, VicalEntry, VicalPki, X5chain};
pub use vical_publisher::{mdl_vical, VicalKnobs, VicalPublisher};

use issuer::Ca;

/// What the device signs over and how the answer is keyed: an OpenID4VP request.
pub trait Request {
    fn client_id(&self) -> &str;
    fn nonce(&self) -> &str;
    fn response_uri(&self) -> &str;
    /// The `state` the answer form echoes.
    fn state(&self) -> &str;
    /// The DCQL credential id of `doc_type`.
    fn id_for(&self, doc_type: &str) -> String;
    /// The `age_over_NN` element asked for.
    fn requested_claim(&self) -> &str;
}

/// Doctype of the EU Proof of Age attestation.
pub const AV_DOCTYPE: &str = "eu.europa.ec.av.1";
/// Namespace of its elements.
pub const AV_NAMESPACE: &str = "eu.europa.ec.av.1";
/// Doctype and namespace of the EUDI PID (mdoc).
pub const PID_DOCTYPE: &str = "eu.europa.ec.eudi.pid.1";
pub const PID_NAMESPACE: &str = "eu.europa.ec.eudi.pid.1";
/// Doctype and namespace of the ISO/IEC 18013-5 mobile driving licence.
pub const MDL_DOCTYPE: &str = "org.iso.18013.5.1.mDL";
pub const MDL_NAMESPACE: &str = "org.iso.18013.5.1";
/// Doctype of Google Wallet's ID pass; its elements are in the mDL's namespace.
pub const GOOGLE_ID_DOCTYPE: &str = "com.google.wallet.idcard.1";
/// Doctypes of the ISO/IEC 23220 Photo ID (and an earlier draft's spelling), and the
/// namespace of its elements.
pub const PHOTO_ID_DOCTYPE: &str = "org.iso.23220.photoid.1";
pub const PHOTO_ID_DRAFT_DOCTYPE: &str = "org.iso.23220.photoID.1";
pub const PHOTO_ID_NAMESPACE: &str = "org.iso.23220.1";
/// COSE algorithm ES256.
pub const ES256: i64 = -7;

pub const DAY: i64 = 86_400;

// ---------------------------------------------------------------------------------------
// Issuer: CA, document signer, device key
// ---------------------------------------------------------------------------------------

/// A Proof of Age issuer (CA + document signer) and the holder's device key.
pub struct TestIssuer {
    /// The CA certificate, PEM: the trust anchor file's content.
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    /// The document signer certificate (goes into `x5chain`).
    pub ds_cert_der: Vec<u8>,
    pub ds_cert_pem: String,
    /// The document signer's private key (signs `issuerAuth`).
    pub ds_key: SigningKey,
    /// The holder's device key (its public half is the MSO's `deviceKey`).
    pub device_key: SigningKey,
    ca: Arc<Ca>,
}

impl TestIssuer {
    /// The DeviceResponse, CBOR-encoded (for tests that mutate the bytes themselves).
    pub fn device_response_cbor(&self, req: &impl Request, p: &Presentation) -> Vec<u8> {
        self.device_response_cbor_over(redirect_transcript(req, p), p)
    }

    /// The DeviceResponse, CBOR-encoded, its device signature over `transcript` (any
    /// SessionTranscript: the Digital Credentials API's, say).
    pub fn device_response_cbor_over(&self, transcript: Value, p: &Presentation) -> Vec<u8> {
        let (value, splices) = self.build(transcript, p);
        let mut out = cbor(&value);
        // Items sent with a non-preferred header: no enclosing bstr holds them, so
        // swapping their bytes leaves every other length intact.
        for (short, long) in splices {
            let at = out
                .windows(short.len())
                .position(|w| w == short)
                .expect("item bytes in the response");
            out.splice(at..at + short.len(), long);
        }
        out
    }

    /// base64url (no padding) of the CBOR DeviceResponse.
    pub fn device_response(&self, req: &impl Request, p: &Presentation) -> String {
        URL_SAFE_NO_PAD.encode(self.device_response_cbor(req, p))
    }

    /// The `vp_token` form field: `{"<dcql credential id>": ["<device_response>"]}`.
    pub fn vp_token(&self, req: &impl Request, p: &Presentation) -> String {
        let mut map = serde_json::Map::new();
        map.insert(
            req.id_for(&p.doc_type),
            serde_json::json!([self.device_response(req, p)]),
        );
        serde_json::Value::Object(map).to_string()
    }

    /// The whole `application/x-www-form-urlencoded` answer: `state` and `vp_token`.
    pub fn answer_form(&self, req: &impl Request, p: &Presentation) -> Vec<(&'static str, String)> {
        vec![
            ("state", req.state().to_owned()),
            ("vp_token", self.vp_token(req, p)),
        ]
    }

    /// The DeviceResponse as a CBOR value (`long_item_header` cannot show in a value:
    /// only `device_response_cbor` applies it).
    pub fn device_response_value(&self, req: &impl Request, p: &Presentation) -> Value {
        self.build(redirect_transcript(req, p), p).0
    }
}

/// The redirect SessionTranscript the device signs for `req` (OpenID4VP 1.0 B.2.6.1),
/// with the knobs' overrides.
fn redirect_transcript(req: &impl Request, p: &Presentation) -> Value {
    let client_id = p.client_id.as_deref().unwrap_or(req.client_id());
    let nonce = p.nonce.as_deref().unwrap_or(req.nonce());
    let response_uri = p.response_uri.as_deref().unwrap_or(req.response_uri());
    session_transcript(client_id, nonce, None, response_uri)
}

// ---------------------------------------------------------------------------------------
// Presentation knobs
// ---------------------------------------------------------------------------------------

/// Knobs for one presentation. `Presentation::for_request` (or `Default`) is a valid
/// answer; each knob makes it wrong in exactly one way.
#[derive(Clone, Debug)]
pub struct Presentation {
    /// Disclosed elements of the namespace. Default `[("age_over_18", true)]`;
    /// `for_request` uses the requested claim.
    pub claims: Vec<(String, Value)>,
    /// Elements put in `deviceSigned.nameSpaces` (device-signed, so they prove nothing).
    pub device_claims: Vec<(String, Value)>,
    /// The Document's `docType`.
    pub doc_type: String,
    /// The MSO's `docType`.
    pub mso_doc_type: String,
    /// Namespace of the disclosed items and of their digests.
    pub namespace: String,
    /// DeviceResponse `status`.
    pub status: u64,
    /// MSO `validityInfo`: `signed` = `validFrom` = `valid_from`; `validUntil`.
    pub valid_from: i64,
    pub valid_until: i64,
    /// Override what the device signs over (the SessionTranscript's inputs).
    pub nonce: Option<String>,
    pub client_id: Option<String>,
    pub response_uri: Option<String>,
    /// Change the first disclosed item after its digest was computed: a `false` value
    /// becomes `true`, anything else gets a different `random`.
    pub tamper_value: bool,
    /// Sign DeviceAuthentication with a fresh key, not the MSO's `deviceKey`.
    pub foreign_device_key: bool,
    /// Flip one bit of the issuerAuth signature.
    pub bad_issuer_signature: bool,
    /// Flip one bit of the deviceSignature.
    pub bad_device_signature: bool,
    /// Send the first disclosed item's `IssuerSignedItemBytes` with a 5-byte bstr length
    /// header (`0x5a`), valid CBOR though not the preferred serialization; its digest is
    /// over the bytes as sent, so a verifier that hashes what it received accepts it.
    pub long_item_header: bool,
    /// Drop the first disclosed item's digest from `valueDigests`.
    pub omit_digest: bool,
    /// How many undisclosed items the MSO also has digests for (valid either way).
    pub undisclosed: usize,
    /// `x5chain` as an array of one certificate instead of a bare bstr (valid either way).
    pub x5chain_array: bool,
    /// Certificates after the DS certificate in `x5chain` (an array then), e.g. a CA.
    pub x5chain_extra: Vec<Vec<u8>>,
    /// No `x5chain` header at all.
    pub omit_x5chain: bool,
    /// Put the DeviceAuthenticationBytes the device signed into the deviceSignature's
    /// payload instead of nil (with `nonce` etc. overridden: a replay that carries its
    /// own stale payload).
    pub attached_device_payload: bool,
    /// `alg` in the protected headers (the signatures are ES256 whatever this says).
    pub issuer_alg: i64,
    pub device_alg: i64,
    /// MSO `digestAlgorithm` (digests are SHA-256 whatever this says).
    pub digest_algorithm: String,
    /// The MSO's `validFrom` (= `signed`) and `validUntil` tdate strings as given, instead
    /// of `valid_from` and `valid_until` (fractions, offsets, nonsense).
    pub validity_tdates: Option<(String, String)>,
    /// Digest IDs from 7 in order and `random` = 16 bytes of the ID: reproducible items.
    pub fixed_salts: bool,
    /// If set, disclosed instead of `claims`' values (same IDs and salts): tampering.
    pub disclosed_values: Option<Vec<Value>>,
    /// `deviceMac` instead of `deviceSignature` (holding the same COSE_Sign1).
    pub device_mac: bool,
    /// DeviceNameSpacesBytes sent (and signed) with a 4-byte bstr length head.
    pub long_device_ns_header: bool,
    /// The MSO's `status` member (docs/credential-status.md); none when `None`.
    pub mso_status: Option<Value>,
}

impl Default for Presentation {
    /// A valid presentation of `age_over_18`, its validity around the wall clock.
    /// Tests on the app's manual clock use [`Presentation::for_request`].
    fn default() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        Presentation {
            claims: vec![("age_over_18".to_owned(), Value::Bool(true))],
            device_claims: vec![],
            doc_type: AV_DOCTYPE.to_owned(),
            mso_doc_type: AV_DOCTYPE.to_owned(),
            namespace: AV_NAMESPACE.to_owned(),
            status: 0,
            valid_from: now - DAY,
            valid_until: now + 90 * DAY,
            nonce: None,
            client_id: None,
            response_uri: None,
            tamper_value: false,
            foreign_device_key: false,
            bad_issuer_signature: false,
            bad_device_signature: false,
            omit_digest: false,
            long_item_header: false,
            undisclosed: 2,
            x5chain_array: false,
            x5chain_extra: vec![],
            omit_x5chain: false,
            attached_device_payload: false,
            issuer_alg: ES256,
            device_alg: ES256,
            digest_algorithm: "SHA-256".to_owned(),
            validity_tdates: None,
            fixed_salts: false,
            disclosed_values: None,
            device_mac: false,
            long_device_ns_header: false,
            mso_status: None,
        }
    }
}

impl Presentation {
    /// A valid answer to `req` at `now`: the requested claim, `true`; MSO valid from
    /// `now - 1d` to `now + 90d`.
    pub fn for_request(req: &impl Request, now: i64) -> Self {
        Presentation {
            claims: vec![(req.requested_claim().to_owned(), Value::Bool(true))],
            valid_from: now - DAY,
            valid_until: now + 90 * DAY,
            ..Default::default()
        }
    }

    /// A valid answer asking for `claim` (e.g. `age_over_18`) at `now`.
    pub fn for_claim(claim: &str, now: i64) -> Self {
        Presentation {
            claims: vec![(claim.to_owned(), Value::Bool(true))],
            valid_from: now - DAY,
            valid_until: now + 90 * DAY,
            ..Default::default()
        }
    }

    /// The same presentation, of the document `doc_type` with its items in `namespace`
    /// (a PID or a driving licence instead of a proof of age).
    pub fn of_doc(mut self, doc_type: &str, namespace: &str) -> Self {
        self.doc_type = doc_type.to_owned();
        self.mso_doc_type = doc_type.to_owned();
        self.namespace = namespace.to_owned();
        self
    }

    /// The same, its MSO naming its status (`status_list_ref`, `identifier_list_ref`).
    pub fn with_status(mut self, status: Value) -> Self {
        self.mso_status = Some(status);
        self
    }

    /// Replace the disclosed claims by one `name: value`.
    pub fn claim(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.claims = vec![(name.to_owned(), value.into())];
        self
    }
}
