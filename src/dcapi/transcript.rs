//! The two SessionTranscripts of the Digital Credentials API channel (docs/dc-api.md#the-answers), as
//! CBOR bytes: what the wallet's device signature covers and, for Annex C, the HPKE
//! `info`. Both are `[null, null, [name, SHA-256(CBOR handover info)]]`.

use crate::mdoc::cbor::Enc;
use crate::mdoc::transcript::{
    handover_info_with_thumbprint, hashed_handover_transcript, session_transcript_from_info,
};

/// `OpenID4VPDCAPIHandoverInfo = [origin, nonce, jwkThumbprint]` (OpenID4VP 1.0
/// Appendix B.2.6.2, response mode `dc_api.jwt`), CBOR.
pub fn openid4vp_handover_info(origin: &str, nonce: &str, jwk_thumbprint: &[u8; 32]) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.array(3).text(origin).text(nonce).bytes(jwk_thumbprint);
    enc.finish()
}

/// `[null, null, ["OpenID4VPDCAPIHandover", SHA-256(OpenID4VPDCAPIHandoverInfo)]]`.
/// `origin` is the page's origin as the browser serializes it (no `origin:` prefix);
/// `jwk_thumbprint` that of the request's key ([`super::ResponseKey::thumbprint`]).
pub fn openid4vp(origin: &str, nonce: &str, jwk_thumbprint: &[u8; 32]) -> Vec<u8> {
    hashed_handover_transcript(
        "OpenID4VPDCAPIHandover",
        &openid4vp_handover_info(origin, nonce, jwk_thumbprint),
    )
}

/// `[null, null, ["OpenID4VPHandover", SHA-256(CBOR([client_id, nonce, jwkThumbprint,
/// response_uri]))]]` (OpenID4VP 1.0 Appendix B.2.6.1): a `direct_post.jwt` answer to a
/// request by reference, `jwk_thumbprint` that of the request's own key.
pub fn by_reference(
    client_id: &str,
    nonce: &str,
    jwk_thumbprint: &[u8; 32],
    response_uri: &str,
) -> Vec<u8> {
    session_transcript_from_info(&handover_info_with_thumbprint(
        client_id,
        nonce,
        Some(jwk_thumbprint),
        response_uri,
    ))
}

/// `dcapiInfo = [Base64EncryptionInfo, SerializedOrigin]` (ISO/IEC 18013-7 Annex C),
/// CBOR; `encryption_info` is the base64url text exactly as sent in the request.
pub fn annex_c_handover_info(encryption_info: &str, origin: &str) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.array(2).text(encryption_info).text(origin);
    enc.finish()
}

/// `[null, null, ["dcapi", SHA-256(dcapiInfo)]]`: also the HPKE `info` of the answer.
pub fn annex_c(encryption_info: &str, origin: &str) -> Vec<u8> {
    hashed_handover_transcript("dcapi", &annex_c_handover_info(encryption_info, origin))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hex;
    use super::*;
    use crate::mdoc::cbor;
    use sha2::{Digest, Sha256};

    /// OpenID4VP 1.0 Appendix B.2.6.2 ("Invocation via the Digital Credentials API"),
    /// every published example byte for byte (spec source: github.com/openid/OpenID4VP,
    /// 1.0/openid-4-verifiable-presentations-1_0.md). The thumbprint is of the example
    /// JWK (checked in `jwk`'s tests).
    #[test]
    fn openid4vp_b_2_6_2_dc_api_handover_test_vector() {
        let origin = "https://example.com";
        let nonce = "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA";
        let thumbprint: [u8; 32] =
            hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047")
                .try_into()
                .expect("32 bytes");
        let expected_info = hex(
            "837368747470733a2f2f6578616d706c652e636f6d782b6578633767426b786a7831
             726463397564527276654b7653734a4971383061766c58654c486847777174415820
             4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047",
        );
        let expected_handover = hex(
            "82764f70656e4944345650444341504948616e646f7665725820fbece366f4212f97
             62c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a",
        );
        let expected_transcript = hex(
            "83f6f682764f70656e4944345650444341504948616e646f7665725820fbece366f4
             212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a",
        );

        let info = openid4vp_handover_info(origin, nonce, &thumbprint);
        assert_eq!(info, expected_info);
        assert_eq!(
            Sha256::digest(&info).to_vec(),
            hex("fbece366f4212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a")
        );
        let transcript = openid4vp(origin, nonce, &thumbprint);
        assert_eq!(transcript.len(), 61);
        assert_eq!(transcript, expected_transcript);
        assert_eq!(transcript.get(3..), Some(&expected_handover[..]));
    }

    /// No published Annex C vector is public (ISO/IEC 18013-7 is paywalled), so this
    /// checks the structure by decoding it with an independent CBOR decoder.
    #[test]
    fn annex_c_transcript_structure() {
        let encryption_info = "gmVkY2FwaaJlbm9uY2VQAAAAAAAAAAAAAAAAAAAAAA";
        let origin = "https://verifier.example:8443";
        let info = annex_c_handover_info(encryption_info, origin);
        let value = cbor::decode(&info).expect("cbor");
        let items = value.as_array().expect("array");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_text(), Some(encryption_info));
        assert_eq!(items[1].as_text(), Some(origin));

        let transcript = annex_c(encryption_info, origin);
        let value = cbor::decode(&transcript).expect("cbor");
        let parts = value.as_array().expect("array");
        assert!(parts[0].is_null() && parts[1].is_null());
        let handover = parts[2].as_array().expect("handover");
        assert_eq!(handover[0].as_text(), Some("dcapi"));
        assert_eq!(
            handover[1].as_bytes().map(Vec::as_slice),
            Some(&Sha256::digest(&info)[..])
        );
        // Bound to the origin and to the exact text of encryptionInfo.
        assert_ne!(
            transcript,
            annex_c(encryption_info, "https://verifier.example")
        );
        assert_ne!(transcript, annex_c(&format!("{encryption_info}="), origin));
    }
}
