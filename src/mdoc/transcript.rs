//! The OpenID4VP 1.0 redirect handover (Appendix B.2.6.1) and the bytes the device
//! signs (ISO/IEC 18013-5 section 9.1.3.4 `DeviceAuthenticationBytes`).

use sha2::{Digest, Sha256};

use super::cbor::{tag24_encoded, Enc};

/// CBOR `OpenID4VPHandoverInfo = [clientId, nonce, jwkThumbprint / null, responseUri]`.
/// The thumbprint is only present when the response is encrypted (`direct_post.jwt`).
pub(crate) fn handover_info_with_thumbprint(
    client_id: &str,
    nonce: &str,
    jwk_thumbprint: Option<&[u8]>,
    response_uri: &str,
) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.array(4).text(client_id).text(nonce);
    match jwk_thumbprint {
        Some(t) => enc.bytes(t),
        None => enc.null(),
    };
    enc.text(response_uri);
    enc.finish()
}

/// CBOR `SessionTranscript = [null, null, ["OpenID4VPHandover", SHA-256(handover info)]]`.
pub(crate) fn session_transcript_from_info(handover_info: &[u8]) -> Vec<u8> {
    hashed_handover_transcript("OpenID4VPHandover", handover_info)
}

/// CBOR `SessionTranscript = [null, null, [name, SHA-256(handover info)]]`: the shape
/// every handover without device engagement shares (OpenID4VP redirect and DC API,
/// ISO/IEC 18013-7 Annex C `dcapi`).
pub(crate) fn hashed_handover_transcript(name: &str, handover_info: &[u8]) -> Vec<u8> {
    let hash = Sha256::digest(handover_info);
    let mut enc = Enc::default();
    enc.array(3).null().null().array(2).text(name).bytes(&hash);
    enc.finish()
}

/// `DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication",
/// SessionTranscript, DocType, DeviceNameSpacesBytes])`, the detached payload of the
/// device signature. `device_namespaces_bytes` is the whole received
/// `DeviceNameSpacesBytes` item (`#6.24(bstr)`, heads included), embedded exactly as
/// sent: the wallet signed its own encoding, which may not be the shortest.
pub(crate) fn device_authentication_bytes(
    session_transcript: &[u8],
    doc_type: &str,
    device_namespaces_bytes: &[u8],
) -> Vec<u8> {
    let mut enc = Enc::default();
    enc.array(4)
        .text("DeviceAuthentication")
        .raw(session_transcript)
        .text(doc_type)
        .raw(device_namespaces_bytes);
    tag24_encoded(&enc.finish())
}

#[cfg(test)]
mod tests {
    use super::super::{handover_info, session_transcript};
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    /// OpenID for Verifiable Presentations 1.0, Appendix B.2.6.1 ("Invocation via
    /// Redirects"), the non-normative examples of `OpenID4VPHandoverInfo`,
    /// `OpenID4VPHandover` and `SessionTranscript`, copied verbatim from the spec source
    /// (github.com/openid/OpenID4VP, `1.0/openid-4-verifiable-presentations-1_0.md`).
    /// The published example is for an encrypted response, so its third element is the
    /// 32-byte JWK thumbprint rather than null.
    #[test]
    fn openid4vp_b_2_6_1_handover_test_vector() {
        let client_id = "x509_san_dns:example.com";
        let nonce = "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA";
        let response_uri = "https://example.com/response";
        let thumbprint = hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047");

        let expected_info = hex(
            "847818783530395f73616e5f646e733a6578616d706c652e636f6d782b6578633767
             426b786a7831726463397564527276654b7653734a4971383061766c58654c486847
             7771744158204283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6
             bd669047781c68747470733a2f2f6578616d706c652e636f6d2f726573706f6e7365",
        );
        let expected_handover = hex(
            "82714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494c
             efdd9d95240d254b046b11b68013722aad38ac",
        );
        let expected_transcript = hex(
            "83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8e
             ed494cefdd9d95240d254b046b11b68013722aad38ac",
        );

        let info = handover_info_with_thumbprint(client_id, nonce, Some(&thumbprint), response_uri);
        assert_eq!(info, expected_info);
        // The handover's second element is SHA-256 of the info bytes.
        let digest = Sha256::digest(&info);
        assert_eq!(
            expected_handover.get(expected_handover.len() - 32..),
            Some(&digest[..])
        );
        let transcript = session_transcript_from_info(&info);
        assert_eq!(transcript, expected_transcript);
        assert_eq!(transcript.get(3..), Some(&expected_handover[..]));
    }

    /// The thumbprint in the published example is RFC 7638's over the example JWK given
    /// just above it in B.2.6.1; checking it ties the example's inputs together.
    #[test]
    fn openid4vp_b_2_6_1_thumbprint_is_of_the_example_jwk() {
        let canonical = r#"{"crv":"P-256","kty":"EC","x":"DxiH5Q4Yx3UrukE2lWCErq8N8bqC9CHLLrAwLz5BmE0","y":"XtLM4-3h5o3HUH0MHVJV0kyq0iBlrBwlh8qEDMZ4-Pc"}"#;
        assert_eq!(
            Sha256::digest(canonical.as_bytes()).to_vec(),
            hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047")
        );
    }

    /// Unencrypted `direct_post` (our case): the third element is CBOR null (0xf6).
    #[test]
    fn handover_info_without_encryption_has_null_thumbprint() {
        let info = handover_info(
            "redirect_uri:https://a.example/r",
            "n",
            "https://a.example/r",
        );
        let mut expected = vec![0x84, 0x78, 0x20];
        expected.extend_from_slice(b"redirect_uri:https://a.example/r");
        expected.extend_from_slice(&[0x61, b'n', 0xf6, 0x73]);
        expected.extend_from_slice(b"https://a.example/r");
        assert_eq!(info, expected);
        assert_eq!(
            session_transcript(
                "redirect_uri:https://a.example/r",
                "n",
                "https://a.example/r"
            ),
            session_transcript_from_info(&info)
        );
    }

    #[test]
    fn device_authentication_bytes_wrap_the_array_in_tag_24() {
        let st = session_transcript_from_info(&[0x80]);
        let out = device_authentication_bytes(&st, "eu.europa.ec.av.1", &[0xd8, 0x18, 0x41, 0xa0]);
        let value = crate::mdoc::cbor::decode(&out).expect("cbor");
        let inner = crate::mdoc::cbor::tag24_content(&value).expect("tag 24");
        let arr = crate::mdoc::cbor::decode(inner).expect("inner cbor");
        let arr = arr.as_array().expect("array");
        assert_eq!(arr.len(), 4);
        assert_eq!(arr[0].as_text(), Some("DeviceAuthentication"));
        assert_eq!(arr[2].as_text(), Some("eu.europa.ec.av.1"));
        assert_eq!(
            crate::mdoc::cbor::tag24_content(&arr[3]),
            Some(&[0xa0u8][..])
        );
    }

    #[test]
    fn device_namespaces_bytes_are_embedded_as_received() {
        let st = session_transcript_from_info(&[0x80]);
        let long = [0xd8, 0x18, 0x5a, 0, 0, 0, 1, 0xa0];
        let out = device_authentication_bytes(&st, "eu.europa.ec.av.1", &long);
        let value = crate::mdoc::cbor::decode(&out).expect("cbor");
        let inner = crate::mdoc::cbor::tag24_content(&value).expect("tag 24");
        assert!(inner.ends_with(&long));
    }
}
