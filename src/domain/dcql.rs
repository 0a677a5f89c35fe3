//! The DCQL query of a presentation request (OpenID4VP 1.0 section 6), for the link, the
//! QR code and the Digital Credentials API's R1: one `mso_mdoc` credential query per
//! docType of each requested kind (docs/kinds.md#credential-kinds) and, when the request
//! offers zero-knowledge proofs, one `mso_mdoc_zk` query per docType as well
//! (docs/zk.md#zero-knowledge-proofs). Typed structs, so the key order is the
//! declared one, the one the docs show.

use serde::Serialize;

use super::ask::{MinAge, ZkOffer};
use super::kind::KindSet;

use crate::dcapi::ZK_SYSTEM;

#[derive(Serialize)]
struct Query<'a> {
    credentials: Vec<CredentialQuery<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    credential_sets: Option<[CredentialSet<'a>; 1]>,
}

#[derive(Serialize)]
struct CredentialQuery<'a> {
    id: &'static str,
    format: &'static str,
    meta: Meta<'a>,
    claims: [Claim<'a>; 1],
}

#[derive(Serialize)]
struct Meta<'a> {
    doctype_value: &'static str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    zk_system_type: &'a [ZkSystemType],
}

#[derive(Serialize)]
struct Claim<'a> {
    path: [&'a str; 2],
}

#[derive(Serialize)]
struct CredentialSet<'a> {
    options: Vec<[&'a str; 1]>,
}

/// One offered circuit as a DCQL `zk_system_type` entry: numbers as JSON numbers, hashes
/// as hex text. `id` (the circuit hash, as Longfellow's docs recommend) is not in the
/// docs' list, but Multipaz wallets read it and fail without it.
#[derive(Debug, Serialize)]
pub struct ZkSystemType {
    system: &'static str,
    id: &'static str,
    circuit_hash: &'static str,
    num_attributes: usize,
    version: u8,
    block_enc_hash: usize,
    block_enc_sig: usize,
}

impl ZkSystemType {
    fn of(c: &'static agegate_zk::CircuitInfo) -> Self {
        Self {
            system: ZK_SYSTEM,
            id: c.circuit_hash,
            circuit_hash: c.circuit_hash,
            num_attributes: c.num_attributes,
            version: c.version,
            block_enc_hash: c.block_enc_hash,
            block_enc_sig: c.block_enc_sig,
        }
    }
}

/// What the table of known circuits says of each offered circuit, in the offer's order
/// (newest first); a hash the table does not know is left out.
pub fn offered_circuits(zk: &ZkOffer) -> Vec<&'static agegate_zk::CircuitInfo> {
    zk.circuits
        .iter()
        .filter_map(|hash| {
            agegate_zk::CIRCUITS
                .iter()
                .find(|c| c.circuit_hash == hash.as_str())
        })
        .collect()
}

fn build<'a>(
    kinds: KindSet,
    claim: &'a str,
    zk: Option<&ZkOffer>,
    systems: &'a [ZkSystemType],
) -> Query<'a> {
    let doc_types: Vec<_> = kinds
        .iter()
        .flat_map(|k| {
            let namespace = k.info().namespace;
            k.info().doc_types.iter().map(move |d| (d, namespace))
        })
        .collect();
    let query = |id, format, d: &super::kind::DocType, namespace, zk_system_type| CredentialQuery {
        id,
        format,
        meta: Meta {
            doctype_value: d.doc_type,
            zk_system_type,
        },
        claims: [Claim {
            path: [namespace, claim],
        }],
    };
    let plain = doc_types
        .iter()
        .map(|(d, ns)| query(d.dcql_id, "mso_mdoc", d, ns, &[][..]));
    let offered = zk.filter(|_| !systems.is_empty());
    let proofs = doc_types
        .iter()
        .filter(|_| offered.is_some())
        .map(|(d, ns)| query(d.zk_dcql_id, "mso_mdoc_zk", d, ns, systems));
    let credentials: Vec<CredentialQuery<'a>> = plain.chain(proofs).collect();
    // The wallet answers with any one; proofs first (prefer), or only proofs (require).
    let mut options: Vec<[&'a str; 1]> = Vec::new();
    if offered.is_some() {
        options.extend(doc_types.iter().map(|(d, _)| [d.zk_dcql_id]));
    }
    if !offered.is_some_and(|z| z.required) {
        options.extend(doc_types.iter().map(|(d, _)| [d.dcql_id]));
    }
    let credential_sets = (credentials.len() > 1).then_some([CredentialSet { options }]);
    Query {
        credentials,
        credential_sets,
    }
}

/// The DCQL query for `kinds`, each docType asked for the claim `age_over_NN`, with the
/// proofs `zk` offers; with more than one credential query, `credential_sets` lets the
/// wallet answer with any one.
pub fn dcql_query(kinds: KindSet, min_age: MinAge, zk: Option<&ZkOffer>) -> String {
    let claim = min_age.claim();
    let systems = zk_system_types(zk);
    serde_json::to_string(&build(kinds, &claim, zk, &systems)).expect("a DCQL query serializes")
}

/// [`dcql_query`] as a JSON value (for the Digital Credentials API's R1).
pub fn dcql_query_value(
    kinds: KindSet,
    min_age: MinAge,
    zk: Option<&ZkOffer>,
) -> serde_json::Value {
    let claim = min_age.claim();
    let systems = zk_system_types(zk);
    serde_json::to_value(build(kinds, &claim, zk, &systems)).expect("a DCQL query serializes")
}

fn zk_system_types(zk: Option<&ZkOffer>) -> Vec<ZkSystemType> {
    zk.map(offered_circuits)
        .unwrap_or_default()
        .into_iter()
        .map(ZkSystemType::of)
        .collect()
}

#[cfg(test)]
#[path = "dcql_tests.rs"]
mod tests;
