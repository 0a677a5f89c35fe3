//! PEM files: every block as (label, DER), and the certificates of a bundle.

use super::{Cert, CertError};

/// One PEM block: its label and DER contents, or why they cannot be read.
pub type PemBlock = Result<(String, Vec<u8>), String>;

/// The PEM blocks of `pem` as (label, DER) or why a block is unreadable. Text around
/// the blocks (comments, as in CA bundles) is skipped, since `pem-rfc7468` reads one
/// document alone; each block it then decodes strictly (label grammar, padded base64).
/// Err when a block has no END line.
pub fn pem_blocks(pem: &str) -> Result<Vec<PemBlock>, String> {
    let boundary = |line: &str, kind: &str| -> Option<String> {
        let label = line.strip_prefix(kind)?.strip_suffix("-----")?;
        Some(label.to_owned())
    };
    let mut blocks = Vec::new();
    let mut lines = pem.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(label) = boundary(line, "-----BEGIN ") else {
            continue;
        };
        let mut body = Vec::new();
        let end = loop {
            let Some(line) = lines.next() else {
                let n = blocks.len() + 1;
                return Err(format!("block {n}: no END line"));
            };
            match boundary(line, "-----END ") {
                Some(end) => break end,
                None if line.is_empty() => {}
                None => body.push(line),
            }
        };
        blocks.push(if end == label {
            pem_block(&label, &body)
        } else {
            Err(format!("BEGIN {label} ends with END {end}"))
        });
    }
    Ok(blocks)
}

/// One block's DER, by `pem-rfc7468`. It wants every line but the last to be one width;
/// that width is taken from the first line, so bundles wrapped at 76 (as some tools
/// write them) or with CRLF read as well as RFC 7468's 64.
fn pem_block(label: &str, body: &[&str]) -> PemBlock {
    let width = body
        .first()
        .map_or(pem_rfc7468::BASE64_WRAP_WIDTH, |l| l.len());
    let text = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    );
    let mut der = Vec::new();
    pem_rfc7468::Decoder::new_wrapped(text.as_bytes(), width)
        .and_then(|mut decoder| decoder.decode_to_end(&mut der).map(|_| ()))
        .map(|()| (label.to_owned(), der))
        .map_err(|e| format!("invalid PEM ({e})"))
}

/// Every CERTIFICATE block of a bundle, parsed by `parse` ([`Cert::from_der`] or
/// [`Cert::from_der_ec`]), in order. Another block type is an error (a key or CSR in a
/// certificate file is surely a mistake); each error names its block. An empty result
/// is the caller's to judge.
pub fn certificates_from_pem(
    pem: &str,
    parse: fn(&[u8]) -> Result<Cert, CertError>,
) -> Result<Vec<Cert>, (usize, CertError)> {
    let blocks = pem_blocks(pem).map_err(|why| (0, CertError::Malformed(why)))?;
    blocks
        .into_iter()
        .enumerate()
        .map(|(i, block)| {
            let n = i + 1;
            let (label, der) = block.map_err(|why| (n, CertError::Malformed(why)))?;
            if label != "CERTIFICATE" {
                return Err((
                    n,
                    CertError::Malformed(format!("a {label} block, not a CERTIFICATE")),
                ));
            }
            parse(&der).map_err(|e| (n, e))
        })
        .collect()
}
