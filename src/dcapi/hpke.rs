//! HPKE (RFC 9180) base mode, single shot, with the one suite ISO/IEC 18013-7 Annex C
//! uses: DHKEM(P-256, HKDF-SHA256) (0x0010), HKDF-SHA256 (0x0001), AES-128-GCM
//! (0x0001). Built on the `hpke` crate (rozbb); this module only fixes the suite and
//! maps keys and errors.

use ::hpke::aead::AesGcm128;
use ::hpke::kdf::HkdfSha256;
use ::hpke::kem::DhP256HkdfSha256;
use ::hpke::{Deserializable, Kem, OpModeR, OpModeS, Serializable};
use p256::elliptic_curve::rand_core::CryptoRngCore;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::PublicKey;

use super::jwk::ResponseKey;
use super::MAX_RESPONSE_LEN;

type Suite = DhP256HkdfSha256;
type HpkePrivateKey = <Suite as Kem>::PrivateKey;
type HpkePublicKey = <Suite as Kem>::PublicKey;
type EncappedKey = <Suite as Kem>::EncappedKey;

/// Why an HPKE ciphertext cannot be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpkeError {
    #[error("HPKE enc is not an uncompressed P-256 point (65 bytes, on the curve)")]
    BadEncapsulatedKey,
    #[error("HPKE ciphertext is larger than 2 MiB")]
    TooLarge,
    #[error("HPKE ciphertext does not open with this request's key and session transcript")]
    Decryption,
    #[error("HPKE sealing failed")]
    Seal,
}

/// A sealed message: the encapsulated key `enc` (65 bytes) and the ciphertext with its tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    pub enc: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

/// Opens `ciphertext` sent with encapsulated key `enc` to `key`, with `info` and an empty
/// aad (Annex C: `info` is the SessionTranscript's CBOR).
pub fn open(
    key: &ResponseKey,
    enc: &[u8],
    ciphertext: &[u8],
    info: &[u8],
) -> Result<Vec<u8>, HpkeError> {
    open_with_aad(key, enc, ciphertext, info, &[])
}

pub(crate) fn open_with_aad(
    key: &ResponseKey,
    enc: &[u8],
    ciphertext: &[u8],
    info: &[u8],
    aad: &[u8],
) -> Result<Vec<u8>, HpkeError> {
    if ciphertext.len() > MAX_RESPONSE_LEN {
        return Err(HpkeError::TooLarge);
    }
    let enc = EncappedKey::from_bytes(enc).map_err(|_| HpkeError::BadEncapsulatedKey)?;
    // A ResponseKey is always a valid scalar, so this conversion cannot fail.
    let sk = HpkePrivateKey::from_bytes(&key.to_bytes()[..]).map_err(|_| HpkeError::Decryption)?;
    ::hpke::single_shot_open::<AesGcm128, HkdfSha256, Suite>(
        &OpModeR::Base,
        &sk,
        &enc,
        info,
        ciphertext,
        aad,
    )
    .map_err(|_| HpkeError::Decryption)
}

/// Seals `plaintext` to `recipient` with `info` and an empty aad, as a wallet does (the
/// test wallet and tests use it). The ephemeral key comes from `rng`.
pub fn seal(
    rng: &mut impl CryptoRngCore,
    recipient: &PublicKey,
    info: &[u8],
    plaintext: &[u8],
) -> Result<Sealed, HpkeError> {
    seal_with_aad(rng, recipient, info, plaintext, &[])
}

pub(crate) fn seal_with_aad(
    rng: &mut impl CryptoRngCore,
    recipient: &PublicKey,
    info: &[u8],
    plaintext: &[u8],
    aad: &[u8],
) -> Result<Sealed, HpkeError> {
    if plaintext.len() > MAX_RESPONSE_LEN {
        return Err(HpkeError::TooLarge);
    }
    let pk = HpkePublicKey::from_bytes(recipient.to_encoded_point(false).as_bytes())
        .map_err(|_| HpkeError::Seal)?;
    let (enc, ciphertext) = ::hpke::single_shot_seal::<AesGcm128, HkdfSha256, Suite, _>(
        &OpModeS::Base,
        &pk,
        info,
        plaintext,
        aad,
        rng,
    )
    .map_err(|_| HpkeError::Seal)?;
    Ok(Sealed {
        enc: enc.to_bytes().to_vec(),
        ciphertext,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hex;
    use super::*;
    use p256::elliptic_curve::rand_core::{CryptoRng, RngCore};
    use rand::rngs::OsRng;

    /// RFC 9180 Appendix A.3.1 (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM,
    /// Base Setup) and its first encryption (sequence number 0, which is what a single
    /// shot uses). Hex from the CFRG test-vectors.json (mode 0, kem 16, kdf 1, aead 1)
    /// shipped in the hpke crate and quoted identically by other implementations' tests.
    const INFO: &str = "4f6465206f6e2061204772656369616e2055726e";
    const IKM_E: &str = "4270e54ffd08d79d5928020af4686d8f6b7d35dbe470265f1f5aa22816ce860e";
    const PK_EM: &str = "04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4";
    const SK_RM: &str = "f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2";
    const PK_RM: &str = "04fe8c19ce0905191ebc298a9245792531f26f0cece2460639e8bc39cb7f706a826a779b4cf969b8a0e539c7f62fb3d30ad6aa8f80e30f1d128aafd68a2ce72ea0";
    const AAD_0: &str = "436f756e742d30";
    const PT: &str = "4265617574792069732074727574682c20747275746820626561757479";
    const CT_0: &str = "5ad590bb8baa577f8619db35a36311226a896e7342a6d836d8b7bcd2f20b6c7f9076ac232e3ab2523f39513434";

    fn recipient() -> ResponseKey {
        ResponseKey::from_bytes(&hex(SK_RM)).expect("skRm")
    }

    #[test]
    fn rfc9180_a_3_1_open() {
        let key = recipient();
        assert_eq!(
            key.public_key().to_encoded_point(false).as_bytes(),
            hex(PK_RM)
        );
        let pt = open_with_aad(&key, &hex(PK_EM), &hex(CT_0), &hex(INFO), &hex(AAD_0));
        assert_eq!(pt, Ok(hex(PT)));
        // Any other info (our SessionTranscript) or aad fails.
        assert_eq!(
            open_with_aad(&key, &hex(PK_EM), &hex(CT_0), b"other", &hex(AAD_0)),
            Err(HpkeError::Decryption)
        );
        assert_eq!(
            open(&key, &hex(PK_EM), &hex(CT_0), &hex(INFO)),
            Err(HpkeError::Decryption)
        );
    }

    /// Replays the vector's ikmE as the "random" bytes, so the crate derives the
    /// vector's ephemeral key (DeriveKeyPair) and sealing must give its exact bytes.
    struct FixedRng(Vec<u8>);
    impl RngCore for FixedRng {
        fn next_u32(&mut self) -> u32 {
            panic!("only fill_bytes is used")
        }
        fn next_u64(&mut self) -> u64 {
            panic!("only fill_bytes is used")
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            assert_eq!(dest.len(), self.0.len(), "one draw of ikmE");
            dest.copy_from_slice(&self.0);
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }
    impl CryptoRng for FixedRng {}

    #[test]
    fn rfc9180_a_3_1_seal_with_the_vectors_ephemeral_key() {
        let pk = recipient().public_key();
        let sealed = seal_with_aad(
            &mut FixedRng(hex(IKM_E)),
            &pk,
            &hex(INFO),
            &hex(PT),
            &hex(AAD_0),
        )
        .expect("seal");
        assert_eq!(sealed.enc, hex(PK_EM));
        assert_eq!(sealed.ciphertext, hex(CT_0));
    }

    #[test]
    fn round_trip_and_faults() {
        let key = ResponseKey::generate(&mut OsRng);
        let sealed = seal(
            &mut OsRng,
            &key.public_key(),
            b"transcript",
            b"device response",
        )
        .expect("seal");
        assert_eq!(sealed.enc.len(), 65);
        let opened = open(&key, &sealed.enc, &sealed.ciphertext, b"transcript");
        assert_eq!(opened.as_deref(), Ok(&b"device response"[..]));
        let other = ResponseKey::generate(&mut OsRng);
        assert_eq!(
            open(&other, &sealed.enc, &sealed.ciphertext, b"transcript"),
            Err(HpkeError::Decryption)
        );
        let mut flipped = sealed.ciphertext.clone();
        flipped[0] ^= 1;
        assert_eq!(
            open(&key, &sealed.enc, &flipped, b"transcript"),
            Err(HpkeError::Decryption)
        );
        // Compressed, truncated, off-curve.
        let compressed = key.public_key().to_encoded_point(true);
        for enc in [compressed.as_bytes(), &sealed.enc[..64], &[4u8; 65][..]] {
            assert_eq!(
                open(&key, enc, &sealed.ciphertext, b"transcript"),
                Err(HpkeError::BadEncapsulatedKey)
            );
        }
        let big = vec![0u8; MAX_RESPONSE_LEN + 1];
        assert_eq!(open(&key, &sealed.enc, &big, b""), Err(HpkeError::TooLarge));
    }
}
