//! The eight supported circuit files load, are recognised by their SHA-256, and their
//! embedded ids are the hashes of their contents; other files are refused.

mod common;

use agegate_zk::{LoadError, ZkCircuit, CIRCUITS};
use common::{json, read};

#[test]
fn every_supported_circuit_loads_with_its_table_entry_and_matching_ids() {
    for version in [6u8, 7] {
        for n in 1..=4usize {
            let name = format!("google-v{version}-{n}attr");
            let meta = json(&format!("circuits/{name}.json"));
            let file = read(&format!("circuits/{name}.circuit"));
            let c = ZkCircuit::load(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.info.version, version);
            assert_eq!(c.info.num_attributes, n);
            assert_eq!(c.info.file_sha256, meta["sha256"].as_str().unwrap());
            // The sidecar's provenance path ends in the circuit_hash.
            assert!(meta["provenance"]["path"]
                .as_str()
                .unwrap()
                .ends_with(c.info.circuit_hash));
            assert!(c.ids_match_contents(), "{name}: ids");
            // Kept compactly: well under the 12 bytes a term takes decompressed.
            let (hash_terms, sig_terms) = c.terms();
            assert!(
                c.memory_bytes() < 12 * (hash_terms + sig_terms) / 3,
                "{name}: {} bytes",
                c.memory_bytes()
            );
        }
    }
    assert_eq!(CIRCUITS.len(), 8);
}

#[test]
fn files_outside_the_table_are_unknown() {
    assert_eq!(ZkCircuit::load(b"").unwrap_err(), LoadError::Unknown);
    let mut file = read("circuits/google-v7-1attr.circuit");
    file.push(0);
    assert_eq!(ZkCircuit::load(&file).unwrap_err(), LoadError::Unknown);
}

#[test]
fn a_loaded_circuit_can_be_shared_by_worker_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<ZkCircuit>();
}
