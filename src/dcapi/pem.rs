//! The signing identity from its PEM files (docs/dc-api.md#signed-and-unsigned-requests, `--dc-api-signing-key` and
//! `--dc-api-signing-cert`): a P-256 private key, PKCS#8 or SEC1 (as `openssl genpkey`
//! and `openssl ecparam -genkey` write them), and its certificate chain, leaf first.
//! Each error says which file is at fault, so the caller can name it.

use p256::pkcs8::DecodePrivateKey;
use p256::SecretKey;

use super::signer::{RequestSigner, SignerError};
use crate::pki::pem_blocks;

/// Which file is at fault, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignerFileError {
    #[error("{0}")]
    Key(String),
    #[error("{0}")]
    Chain(String),
    #[error("the private key does not match the leaf certificate's public key")]
    Mismatch,
}

/// The signer of `key_pem` and `chain_pem`; the key must be the leaf's.
pub fn signer_from_pem(key_pem: &str, chain_pem: &str) -> Result<RequestSigner, SignerFileError> {
    let key = signing_key(key_pem).map_err(SignerFileError::Key)?;
    let chain = chain(chain_pem).map_err(SignerFileError::Chain)?;
    RequestSigner::new(key.into(), chain).map_err(|e| match e {
        SignerError::KeyMismatch => SignerFileError::Mismatch,
        e @ (SignerError::EmptyChain | SignerError::BadLeaf(_)) => {
            SignerFileError::Chain(e.to_string())
        }
    })
}

/// The one private key of a PEM file; `EC PARAMETERS` blocks beside it are ignored.
fn signing_key(pem: &str) -> Result<SecretKey, String> {
    let mut found = None;
    for (i, block) in pem_blocks(pem)?.into_iter().enumerate() {
        let n = i + 1;
        let (label, der) = block.map_err(|why| format!("block {n}: {why}"))?;
        let key = match label.as_str() {
            "EC PARAMETERS" => continue,
            "PRIVATE KEY" => SecretKey::from_pkcs8_der(&der)
                .map_err(|e| format!("block {n}: not a P-256 PKCS#8 private key ({e})"))?,
            "EC PRIVATE KEY" => SecretKey::from_sec1_der(&der)
                .map_err(|e| format!("block {n}: not a P-256 SEC1 private key ({e})"))?,
            "ENCRYPTED PRIVATE KEY" => {
                return Err(format!(
                    "block {n}: the key is encrypted; give it unencrypted \
                     (openssl pkcs8 -topk8 -nocrypt)"
                ))
            }
            other => return Err(format!("block {n}: a {other} block, not a private key")),
        };
        if found.replace(key).is_some() {
            return Err("more than one private key".into());
        }
    }
    found.ok_or_else(|| "no PRIVATE KEY or EC PRIVATE KEY block".into())
}

/// Every CERTIFICATE block, in order (leaf first); text between blocks is ignored.
fn chain(pem: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut chain = Vec::new();
    for (i, block) in pem_blocks(pem)?.into_iter().enumerate() {
        let n = i + 1;
        let (label, der) = block.map_err(|why| format!("block {n}: {why}"))?;
        if label != "CERTIFICATE" {
            return Err(format!("block {n}: a {label} block, not a CERTIFICATE"));
        }
        chain.push(der);
    }
    if chain.is_empty() {
        return Err("no CERTIFICATE block".into());
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(key: &rcgen::KeyPair) -> String {
        let params = rcgen::CertificateParams::new(vec!["verifier.example".into()]).unwrap();
        params.self_signed(key).unwrap().pem()
    }

    fn p256_pair() -> rcgen::KeyPair {
        rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap()
    }

    #[test]
    fn pkcs8_and_sec1_keys_with_their_chain_make_a_signer() {
        let pair = p256_pair();
        let cert = leaf(&pair);
        let pkcs8 = pair.serialize_pem();
        let signer = signer_from_pem(&pkcs8, &cert).expect("pkcs8");
        assert_eq!(signer.chain().len(), 1);
        let secret = SecretKey::from_pkcs8_pem(&pkcs8).unwrap();
        let sec1 = secret.to_sec1_pem(Default::default()).unwrap();
        let with_params = format!(
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n{}",
            sec1.as_str()
        );
        assert!(signer_from_pem(&with_params, &cert).is_ok());
        // A self-signed root after the leaf is not sent (HAIP 1.0: the anchor stays out
        // of x5c); the leaf, self-signed itself, is kept and said so.
        let root = leaf(&p256_pair());
        let two = signer_from_pem(&pkcs8, &format!("{cert}\n# CA\n{root}")).unwrap();
        assert_eq!(two.chain().len(), 1);
        assert!(two.self_signed_leaf());
    }

    #[test]
    fn each_fault_names_its_file() {
        let pair = p256_pair();
        let cert = leaf(&pair);
        let key = pair.serialize_pem();
        let other = p256_pair().serialize_pem();
        let err = |k: &str, c: &str| signer_from_pem(k, c).unwrap_err();
        assert_eq!(err(&other, &cert), SignerFileError::Mismatch);
        assert!(
            matches!(err("garbage", &cert), SignerFileError::Key(m) if m.contains("no PRIVATE KEY"))
        );
        assert!(
            matches!(err(&key, "garbage"), SignerFileError::Chain(m) if m.contains("no CERTIFICATE"))
        );
        assert!(
            matches!(err(&cert, &cert), SignerFileError::Key(m) if m.contains("CERTIFICATE block, not a private key"))
        );
        assert!(
            matches!(err(&key, &key), SignerFileError::Chain(m) if m.contains("PRIVATE KEY block, not a CERTIFICATE"))
        );
        assert!(
            matches!(err(&format!("{key}{key}"), &cert), SignerFileError::Key(m) if m.contains("more than one"))
        );
        let broken = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert!(matches!(err(&key, broken), SignerFileError::Chain(_)));
        let encrypted =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert!(
            matches!(err(encrypted, &cert), SignerFileError::Key(m) if m.contains("encrypted"))
        );
        // A P-384 key is no P-256 key.
        let p384 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
        assert!(
            matches!(err(&p384.serialize_pem(), &cert), SignerFileError::Key(m) if m.contains("P-256"))
        );
        let p384_cert = leaf(&p384);
        assert!(matches!(
            err(&key, &p384_cert),
            SignerFileError::Chain(_) | SignerFileError::Mismatch
        ));
    }
}
