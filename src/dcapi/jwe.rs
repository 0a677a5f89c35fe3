//! JWE compact serialization with `alg` ECDH-ES (direct key agreement, RFC 7518 section 4.6)
//! and `enc` A128GCM or A256GCM (RFC 7518 section 5.3): the encrypted OpenID4VP response
//! of `dc_api.jwt` (A128GCM) and of `direct_post.jwt` (as the request offered). Nothing
//! else is accepted, so no algorithm can be chosen by the sender.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes128Gcm, Aes256Gcm, Nonce};
use p256::ecdh::diffie_hellman;
use p256::elliptic_curve::rand_core::CryptoRngCore;
use p256::{NonZeroScalar, PublicKey};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::jwk::ResponseKey;
use super::{b64url_decode, MAX_RESPONSE_LEN};
use crate::jose::{b64url, Jwk, JwkError};

pub const ALG: &str = "ECDH-ES";
/// The content encryption of `dc_api.jwt` answers.
pub const ENC: &str = "A128GCM";

/// A content encryption a request may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    A128Gcm,
    A256Gcm,
}

impl Enc {
    /// Every one, in the order requests list them.
    pub const ALL: [Enc; 2] = [Enc::A128Gcm, Enc::A256Gcm];

    pub fn name(self) -> &'static str {
        match self {
            Enc::A128Gcm => "A128GCM",
            Enc::A256Gcm => "A256GCM",
        }
    }

    pub fn parse(name: &str) -> Option<Enc> {
        Enc::ALL.into_iter().find(|e| e.name() == name)
    }

    fn key_len(self) -> usize {
        match self {
            Enc::A128Gcm => 16,
            Enc::A256Gcm => 32,
        }
    }
}
const IV_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// Why a JWE is refused. Each says which part is at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JweError {
    #[error("the JWE is larger than 2 MiB")]
    TooLarge,
    #[error("not a JWE compact serialization (five dot-separated parts)")]
    NotCompact,
    #[error("JWE {0} is not base64url")]
    NotBase64Url(&'static str),
    #[error("JWE header is not a JSON object")]
    HeaderNotJson,
    #[error("JWE alg is not ECDH-ES")]
    UnsupportedAlg,
    #[error("JWE enc is not one the request offered")]
    UnsupportedEnc,
    #[error("JWE header uses zip or crit, which are not supported")]
    UnsupportedHeader,
    #[error("JWE header has no epk")]
    MissingEpk,
    #[error("JWE epk is not an EC public key JWK with 32-byte x and y")]
    InvalidEpk,
    #[error("JWE epk is not on curve P-256")]
    WrongCurve,
    #[error("JWE epk is not a point on P-256")]
    PointNotOnCurve,
    #[error("JWE {0} is not a base64url string")]
    InvalidPartyInfo(&'static str),
    #[error("JWE encrypted key must be empty for ECDH-ES")]
    EncryptedKeyPresent,
    #[error("JWE iv is not 96 bits")]
    BadIv,
    #[error("JWE tag is not 128 bits")]
    BadTagLength,
    #[error("JWE does not decrypt with this request's key (authentication tag mismatch)")]
    Decryption,
}

/// Decrypts `compact` (enc A128GCM) with the request's key: the plaintext (the JWT
/// claims JSON). A `kid` in the header is not consulted: only our key can produce a
/// valid tag.
pub fn decrypt(compact: &str, key: &ResponseKey) -> Result<Vec<u8>, JweError> {
    decrypt_offered(compact, key, &[Enc::A128Gcm])
}

/// [`decrypt`] accepting any `enc` of `offered`.
pub fn decrypt_offered(
    compact: &str,
    key: &ResponseKey,
    offered: &[Enc],
) -> Result<Vec<u8>, JweError> {
    if compact.len() > MAX_RESPONSE_LEN {
        return Err(JweError::TooLarge);
    }
    let mut parts = compact.split('.');
    let (Some(header_b64), Some(encrypted_key), Some(iv), Some(ciphertext), Some(tag), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(JweError::NotCompact);
    };
    let header = decode_part(header_b64, "header")?;
    let header: Map<String, Value> = match serde_json::from_slice(&header) {
        Ok(Value::Object(map)) => map,
        _ => return Err(JweError::HeaderNotJson),
    };
    if header.get("alg").and_then(Value::as_str) != Some(ALG) {
        return Err(JweError::UnsupportedAlg);
    }
    let enc = header
        .get("enc")
        .and_then(Value::as_str)
        .and_then(Enc::parse)
        .filter(|enc| offered.contains(enc))
        .ok_or(JweError::UnsupportedEnc)?;
    if header.contains_key("zip") || header.contains_key("crit") {
        return Err(JweError::UnsupportedHeader);
    }
    let epk = epk(header.get("epk"))?;
    let apu = party_info(header.get("apu"), "apu")?;
    let apv = party_info(header.get("apv"), "apv")?;
    if !encrypted_key.is_empty() {
        return Err(JweError::EncryptedKeyPresent);
    }
    let iv = decode_part(iv, "iv")?;
    if iv.len() != IV_LEN {
        return Err(JweError::BadIv);
    }
    let ciphertext = decode_part(ciphertext, "ciphertext")?;
    let tag = decode_part(tag, "tag")?;
    if tag.len() != TAG_LEN {
        return Err(JweError::BadTagLength);
    }

    let shared = diffie_hellman(key.secret().to_nonzero_scalar(), epk.as_affine());
    let cek = derive_cek_for(enc, shared.raw_secret_bytes(), &apu, &apv);
    let mut sealed = ciphertext;
    sealed.extend_from_slice(&tag);
    // RFC 7516 section 5.2 step 14: the AAD is the protected header exactly as received.
    let payload = Payload {
        msg: &sealed,
        aad: header_b64.as_bytes(),
    };
    let nonce = Nonce::from_slice(&iv);
    match enc {
        Enc::A128Gcm => Aes128Gcm::new_from_slice(&cek).map(|c| c.decrypt(nonce, payload)),
        Enc::A256Gcm => Aes256Gcm::new_from_slice(&cek).map(|c| c.decrypt(nonce, payload)),
    }
    .map_err(|_| JweError::Decryption)?
    .map_err(|_| JweError::Decryption)
}

/// Encrypts `plaintext` to `recipient` with a fresh ephemeral key and IV from `rng`,
/// as a wallet does (the test wallet and tests use it). `kid` goes into the header
/// when given, as OpenID4VP asks when the chosen JWK has one. A plaintext whose JWE
/// [`decrypt`] would refuse as too large is refused here too.
pub fn encrypt(
    rng: &mut impl CryptoRngCore,
    plaintext: &[u8],
    recipient: &PublicKey,
    kid: Option<&str>,
) -> Result<String, JweError> {
    encrypt_enc(rng, Enc::A128Gcm, plaintext, recipient, kid)
}

/// [`encrypt`] with `enc` chosen (a wallet answering a request that offered it).
pub fn encrypt_enc(
    rng: &mut impl CryptoRngCore,
    enc: Enc,
    plaintext: &[u8],
    recipient: &PublicKey,
    kid: Option<&str>,
) -> Result<String, JweError> {
    let ephemeral = NonZeroScalar::random(&mut *rng);
    let mut iv = [0u8; IV_LEN];
    rng.fill_bytes(&mut iv);
    seal(enc, &ephemeral, &iv, plaintext, recipient, kid, None)
}

/// [`encrypt`] with the ephemeral scalar, IV and optional (apu, apv) given (the
/// tests give them to reproduce RFC 7518's example).
fn seal(
    enc: Enc,
    ephemeral: &NonZeroScalar,
    iv: &[u8; IV_LEN],
    plaintext: &[u8],
    recipient: &PublicKey,
    kid: Option<&str>,
    party_info: Option<(&[u8], &[u8])>,
) -> Result<String, JweError> {
    if plaintext.len() > MAX_RESPONSE_LEN {
        return Err(JweError::TooLarge);
    }
    let epk = PublicKey::from_secret_scalar(ephemeral);
    let mut header = json!({
        "alg": ALG,
        "enc": enc.name(),
        "epk": Jwk(epk).to_members(),
    });
    if let Some(kid) = kid {
        header["kid"] = json!(kid);
    }
    let (apu, apv) = party_info.unwrap_or((&[], &[]));
    if let Some((u, v)) = party_info {
        header["apu"] = json!(b64url(u));
        header["apv"] = json!(b64url(v));
    }
    let header_b64 = b64url(header.to_string().as_bytes());
    let shared = diffie_hellman(ephemeral, recipient.as_affine());
    let cek = derive_cek_for(enc, shared.raw_secret_bytes(), apu, apv);
    let payload = Payload {
        msg: plaintext,
        aad: header_b64.as_bytes(),
    };
    let nonce = Nonce::from_slice(iv);
    let sealed = match enc {
        Enc::A128Gcm => Aes128Gcm::new_from_slice(&cek).map(|c| c.encrypt(nonce, payload)),
        Enc::A256Gcm => Aes256Gcm::new_from_slice(&cek).map(|c| c.encrypt(nonce, payload)),
    }
    // The key has the cipher's length; AES-GCM refuses only plaintexts past 64 GiB.
    .map_err(|_| JweError::TooLarge)?
    .map_err(|_| JweError::TooLarge)?;
    let (ciphertext, tag) = sealed.split_at(sealed.len().saturating_sub(TAG_LEN));
    Ok(format!(
        "{header_b64}..{}.{}.{}",
        b64url(iv),
        b64url(ciphertext),
        b64url(tag)
    ))
}

/// RFC 7518 section 4.6.2: the Concat KDF of NIST SP 800-56A section 5.8.1 with SHA-256, for the
/// 128-bit A128GCM key of direct key agreement. The KDF hashes
/// `counter ‖ Z ‖ OtherInfo` for counter = 1, 2, … until it has enough bits; one
/// SHA-256 output (256 bits) already covers 128, so it is one hash, truncated. Written
/// out rather than taken from the `concat-kdf` crate, whose general API can fail on
/// lengths that cannot occur here. OtherInfo = AlgorithmID (the `enc` value) ‖
/// PartyUInfo ‖ PartyVInfo, each prefixed with its 32-bit big-endian length, ‖
/// SuppPubInfo (the key length in bits, 32-bit big-endian).
#[cfg(test)]
pub(crate) fn derive_cek(z: &[u8], apu: &[u8], apv: &[u8]) -> [u8; 16] {
    let mut cek = [0u8; 16];
    cek.copy_from_slice(&derive_cek_for(Enc::A128Gcm, z, apu, apv));
    cek
}

/// The Concat KDF for `enc`'s key: 128 or 256 bits, so one SHA-256 output either way
/// (truncated for A128GCM); the `enc` name is the AlgorithmID.
fn derive_cek_for(enc: Enc, z: &[u8], apu: &[u8], apv: &[u8]) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(1u32.to_be_bytes());
    hash.update(z);
    for datum in [enc.name().as_bytes(), apu, apv] {
        // apu and apv come from a header bounded to 2 MiB: far below 2^32.
        let len = u32::try_from(datum.len()).unwrap_or(u32::MAX);
        hash.update(len.to_be_bytes());
        hash.update(datum);
    }
    let bits = u32::try_from(enc.key_len() * 8).unwrap_or(u32::MAX);
    hash.update(bits.to_be_bytes());
    hash.finalize()[..enc.key_len()].to_vec()
}

fn decode_part(part: &str, name: &'static str) -> Result<Vec<u8>, JweError> {
    b64url_decode(part).ok_or(JweError::NotBase64Url(name))
}

/// The ephemeral public key: an EC JWK on P-256 whose point is on the curve.
fn epk(value: Option<&Value>) -> Result<PublicKey, JweError> {
    Jwk::parse(value.ok_or(JweError::MissingEpk)?)
        .map(|jwk| jwk.0)
        .map_err(|e| match e {
            JwkError::NotAnObject | JwkError::NotEc | JwkError::Coordinates => JweError::InvalidEpk,
            JwkError::WrongCurve => JweError::WrongCurve,
            JwkError::NotOnCurve => JweError::PointNotOnCurve,
        })
}

/// `apu` / `apv`: absent means empty; present must be a base64url string.
fn party_info(value: Option<&Value>, name: &'static str) -> Result<Vec<u8>, JweError> {
    match value {
        None => Ok(Vec::new()),
        Some(v) => v
            .as_str()
            .and_then(b64url_decode)
            .ok_or(JweError::InvalidPartyInfo(name)),
    }
}

#[cfg(test)]
#[path = "jwe_tests.rs"]
mod tests;
