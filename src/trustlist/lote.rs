//! EU lists of trusted entities (ETSI TS 119 602 "LoTE": JSON in a compact JWS, JAdES
//! baseline B): the PID providers' and the mDL providers'. The JWS (ES256, ES384 or
//! RS256, through src/jose) must verify under its `x5c` leaf, which must be a pinned
//! certificate or chain to one; then the payload is read: type, sequence number, dates,
//! and the certificates of current issuance services.

use base64::Engine;
use serde_json::Value;

use super::cert::{check_chain, SignerCert};
use super::tsl::STALE_AFTER_SECS;
use super::ListError;
use crate::jose::{Alg, Jws};
use crate::pki::{Cert, CertError};

/// Which list: its `LoTEType` and the ending of its anchors' `ServiceTypeIdentifier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoteKind {
    EudiPid,
    Mdl,
}

impl LoteKind {
    fn type_endings(self) -> &'static [&'static str] {
        match self {
            LoteKind::EudiPid => &["/LoTEType/EUPIDProvidersList"],
            LoteKind::Mdl => &["/mDLProvidersListType", "/LoTEType/EUmDLProvidersList"],
        }
    }

    fn service_ending(self) -> &'static str {
        match self {
            LoteKind::EudiPid => "/PID/Issuance",
            LoteKind::Mdl => "/mDL/Issuance",
        }
    }
}

/// A verified list of trusted entities and what it admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityList {
    pub lote_type: String,
    pub sequence: u64,
    pub issued: i64,
    pub next_update: i64,
    /// DER of each anchor, in the list's order, each once.
    pub anchors: Vec<Vec<u8>>,
    pub skipped_unsupported_key: usize,
    /// The `x5c` leaf that signed.
    pub signer: Vec<u8>,
}

/// Verifies and reads a list of trusted entities of `kind` at `now`, refusing one older
/// (sequence number) than `in_force`.
pub fn lote(
    bytes: &[u8],
    kind: LoteKind,
    signers: &[SignerCert],
    now: i64,
    in_force: Option<u64>,
) -> Result<EntityList, ListError> {
    if bytes.len() > super::MAX_LIST_BYTES {
        return Err(ListError::TooLarge);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| ListError::Jws("not utf-8".into()))?;
    let jws = Jws::parse(text, &[Alg::Es256, Alg::Es384, Alg::Rs256])
        .map_err(|e| ListError::Jws(e.to_string()))?;
    let ders = match jws.x5c() {
        None => return Err(ListError::Jws("no x5c: the signer is missing".into())),
        Some(chain) => chain.map_err(|e| ListError::Jws(e.to_string()))?,
    };
    let chain = ders
        .iter()
        .enumerate()
        .map(|(i, der)| {
            SignerCert::from_der(der).map_err(|e| ListError::Jws(format!("x5c[{i}]: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_chain(&chain, signers, now).map_err(|e| ListError::Jws(e.to_string()))?;
    let signer = chain.first().ok_or(ListError::Jws("empty x5c".into()))?;
    let verified = jws
        .verify(&signer.key)
        .map_err(|e| ListError::Jws(e.to_string()))?;
    let payload: Value = super::json::parse(&verified.payload).ok_or(ListError::Malformed(
        "LoTE payload (JSON, each member once)",
    ))?;
    let info = &payload["LoTE"]["ListAndSchemeInformation"];
    let lote_type = info["LoTEType"]
        .as_str()
        .ok_or(ListError::Malformed("LoTEType"))?;
    if !kind.type_endings().iter().any(|e| lote_type.ends_with(e)) {
        return Err(ListError::WrongType(lote_type.to_owned()));
    }
    signer_is_the_operator(signer, info)?;
    let sequence = info["LoTESequenceNumber"]
        .as_u64()
        .ok_or(ListError::Malformed("LoTESequenceNumber"))?;
    let date = |name: &'static str| {
        info[name]
            .as_str()
            .and_then(super::tsl::date_time)
            .ok_or(ListError::Malformed(name))
    };
    let issued = date("ListIssueDateTime")?;
    let next_update = date("NextUpdate")?;
    if now > next_update.saturating_add(STALE_AFTER_SECS) {
        return Err(ListError::Stale);
    }
    if let Some(in_force) = in_force.filter(|f| sequence < *f) {
        return Err(ListError::Older {
            got: sequence,
            in_force,
        });
    }
    let (anchors, skipped_unsupported_key) = issuance_certificates(&payload, kind)?;
    Ok(EntityList {
        lote_type: lote_type.to_owned(),
        sequence,
        issued,
        next_update,
        anchors,
        skipped_unsupported_key,
        signer: signer.der().to_vec(),
    })
}

/// TS 119 602 clause 6.8: the signing certificate's subject names the list's operator,
/// its O one of `SchemeOperatorName`'s entries (any language) and its C the
/// `SchemeTerritory`; so a certificate that chains to the pin but belongs to another
/// operator (another territory's list signer under a shared CA) cannot sign this list.
fn signer_is_the_operator(signer: &SignerCert, info: &Value) -> Result<(), ListError> {
    let names: Vec<&str> = info["SchemeOperatorName"]
        .as_array()
        .map(|entries| entries.iter().filter_map(|e| e["value"].as_str()).collect())
        .unwrap_or_default();
    if names.is_empty() {
        return Err(ListError::Malformed("SchemeOperatorName"));
    }
    let territory = info["SchemeTerritory"]
        .as_str()
        .ok_or(ListError::Malformed("SchemeTerritory"))?;
    let o_matches = signer
        .organizations()
        .iter()
        .any(|o| names.iter().any(|n| n.trim() == o.trim()));
    let c_matches = signer
        .countries()
        .iter()
        .any(|c| c.trim().eq_ignore_ascii_case(territory.trim()));
    if o_matches && c_matches {
        return Ok(());
    }
    Err(ListError::SignerNotOperator {
        organization: signer.organizations().join(", "),
        country: signer.countries().join(", "),
    })
}

/// `TrustedEntitiesList[].TrustedEntityServices[].ServiceInformation` of the kind's
/// issuance service: its `X509Certificates[].val` (never `ServiceHistory`'s).
fn issuance_certificates(
    payload: &Value,
    kind: LoteKind,
) -> Result<(Vec<Vec<u8>>, usize), ListError> {
    let empty = Vec::new();
    let array = |v: &Value| v.as_array().unwrap_or(&empty).clone();
    let mut anchors: Vec<Vec<u8>> = Vec::new();
    let mut skipped = 0;
    let mut n = 0;
    for entity in array(&payload["LoTE"]["TrustedEntitiesList"]) {
        for service in array(&entity["TrustedEntityServices"]) {
            let info = &service["ServiceInformation"];
            let service_type = info["ServiceTypeIdentifier"].as_str().unwrap_or("");
            if !service_type.ends_with(kind.service_ending()) {
                continue;
            }
            for cert in array(&info["ServiceDigitalIdentity"]["X509Certificates"]) {
                n += 1;
                let der = cert["val"]
                    .as_str()
                    .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
                    .ok_or(ListError::BadCertificate(n))?;
                match Cert::from_der_ec(&der) {
                    Ok(_) if anchors.contains(&der) => {}
                    Ok(_) => anchors.push(der),
                    Err(CertError::UnsupportedKey(_)) => skipped += 1,
                    Err(CertError::Malformed(_)) => return Err(ListError::BadCertificate(n)),
                }
            }
        }
    }
    Ok((anchors, skipped))
}
