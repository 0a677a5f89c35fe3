//! EC P-256 public keys as JWKs (RFC 7517, RFC 7518 section 6.2) and their RFC 7638
//! thumbprints.

use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::PublicKey;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{b64url, b64url_decode_lenient};

/// Why a JWK is not an EC P-256 public key. Each names the member at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JwkError {
    #[error("the JWK is not a JSON object")]
    NotAnObject,
    #[error("the JWK's kty is not EC")]
    NotEc,
    #[error("the JWK's crv is not P-256")]
    WrongCurve,
    #[error("the JWK's x and y are not 32-byte base64url strings")]
    Coordinates,
    #[error("the JWK's point is not on P-256")]
    NotOnCurve,
}

/// A P-256 public key read from a JWK, or to be written as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jwk(pub PublicKey);

impl Jwk {
    /// `{"kty":"EC","crv":"P-256","x","y"}`; a caller adds `kid`, `use`, `alg`.
    /// Other members of a read JWK are not consulted.
    pub fn to_members(&self) -> Map<String, Value> {
        let (x, y) = coordinates(&self.0);
        let mut members = Map::new();
        members.insert("kty".into(), "EC".into());
        members.insert("crv".into(), "P-256".into());
        members.insert("x".into(), b64url(&x).into());
        members.insert("y".into(), b64url(&y).into());
        members
    }

    /// The key of an EC P-256 JWK whose point is on the curve. `x` and `y` may be
    /// padded (some wallets pad); a private `d` beside them is ignored.
    pub fn parse(jwk: &Value) -> Result<Self, JwkError> {
        let jwk = jwk.as_object().ok_or(JwkError::NotAnObject)?;
        let text = |name: &str| jwk.get(name).and_then(Value::as_str);
        if text("kty") != Some("EC") {
            return Err(JwkError::NotEc);
        }
        if text("crv") != Some("P-256") {
            return Err(JwkError::WrongCurve);
        }
        let coordinate = |name| {
            text(name)
                .and_then(b64url_decode_lenient)
                .filter(|c| c.len() == 32)
                .ok_or(JwkError::Coordinates)
        };
        let (x, y) = (coordinate("x")?, coordinate("y")?);
        public_key_from_xy(&x, &y)
            .map(Jwk)
            .ok_or(JwkError::NotOnCurve)
    }

    /// RFC 7638 SHA-256 thumbprint.
    pub fn thumbprint(&self) -> [u8; 32] {
        thumbprint(&self.0)
    }

    /// base64url of the thumbprint: a `kid` that names the key without any state.
    pub fn kid(&self) -> String {
        b64url(&self.thumbprint())
    }
}

/// RFC 7638 section 3: SHA-256 over the required members in lexicographic order, no spaces.
pub fn thumbprint(key: &PublicKey) -> [u8; 32] {
    let (x, y) = coordinates(key);
    let canonical = format!(
        r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
        b64url(&x),
        b64url(&y)
    );
    Sha256::digest(canonical.as_bytes()).into()
}

/// The affine coordinates, each left-padded to 32 bytes as JWK and COSE require.
pub fn coordinates(key: &PublicKey) -> ([u8; 32], [u8; 32]) {
    let point = key.to_encoded_point(false);
    let mut x = [0u8; 32];
    let mut y = [0u8; 32];
    // An uncompressed non-identity point (a PublicKey never is the identity) has both.
    if let (Some(px), Some(py)) = (point.x(), point.y()) {
        x.copy_from_slice(px);
        y.copy_from_slice(py);
    }
    (x, y)
}

/// A public key from 32-byte affine coordinates; None when the lengths are wrong or the
/// point is not on the curve (or is the identity).
pub fn public_key_from_xy(x: &[u8], y: &[u8]) -> Option<PublicKey> {
    if x.len() != 32 || y.len() != 32 {
        return None;
    }
    let mut sec1 = [0u8; 65];
    sec1[0] = 0x04;
    sec1[1..33].copy_from_slice(x);
    sec1[33..].copy_from_slice(y);
    PublicKey::from_sec1_bytes(&sec1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b64(s: &str) -> Vec<u8> {
        b64url_decode_lenient(s).expect("base64url")
    }

    /// OpenID4VP 1.0 Appendix B.2.6.2: the example JWK and its thumbprint.
    #[test]
    fn openid4vp_b_2_6_2_example_jwk_thumbprint() {
        let jwk = Jwk::parse(&json!({
            "kty": "EC", "crv": "P-256",
            "x": "DxiH5Q4Yx3UrukE2lWCErq8N8bqC9CHLLrAwLz5BmE0",
            "y": "XtLM4-3h5o3HUH0MHVJV0kyq0iBlrBwlh8qEDMZ4-Pc",
        }))
        .expect("the example key is on the curve");
        let expected = "4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047";
        let hex: String = jwk
            .thumbprint()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }

    /// RFC 7638 section 3.1's example is an RSA key; its method is checked here on an EC key
    /// against serde_json's rendering (sorted keys, no spaces) of the required members.
    #[test]
    fn thumbprint_is_rfc_7638_over_the_members_written() {
        let jwk = Jwk(public_key_from_xy(
            &b64("weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ"),
            &b64("e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"),
        )
        .expect("RFC 7518 Appendix C's Bob key"));
        let members = Value::Object(jwk.to_members());
        let digest: [u8; 32] = Sha256::digest(members.to_string().as_bytes()).into();
        assert_eq!(jwk.thumbprint(), digest);
        assert_eq!(Jwk::parse(&members), Ok(jwk));
    }

    #[test]
    fn each_fault_is_named() {
        let good = Value::Object(
            Jwk(public_key_from_xy(
                &b64("weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ"),
                &b64("e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"),
            )
            .expect("key"))
            .to_members(),
        );
        let with = |name: &str, value: Value| {
            let mut jwk = good.clone();
            jwk[name] = value;
            Jwk::parse(&jwk)
        };
        assert_eq!(Jwk::parse(&json!([])), Err(JwkError::NotAnObject));
        assert_eq!(with("kty", json!("RSA")), Err(JwkError::NotEc));
        assert_eq!(with("crv", json!("P-384")), Err(JwkError::WrongCurve));
        assert_eq!(with("x", json!("AAAA")), Err(JwkError::Coordinates));
        assert_eq!(with("y", json!(7)), Err(JwkError::Coordinates));
        assert_eq!(
            with("x", json!(b64url(&[1; 32]))),
            Err(JwkError::NotOnCurve)
        );
        let padded = format!("{}=", good["x"].as_str().expect("x"));
        assert!(with("x", json!(padded)).is_ok());
    }

    #[test]
    fn off_curve_points_are_refused() {
        assert!(public_key_from_xy(&[1; 32], &[2; 32]).is_none());
        assert!(public_key_from_xy(&[0; 32], &[0; 32]).is_none());
        assert!(public_key_from_xy(&[1; 31], &[2; 32]).is_none());
    }
}
