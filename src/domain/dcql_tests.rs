//! The DCQL query with and without zero-knowledge proofs
//! (docs/zk.md#zero-knowledge-proofs), exact texts.

use super::*;
use crate::domain::{Kind, ZkPolicy};

const V7: &str = "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121";
const V6: &str = "137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6";

fn offer(policy: ZkPolicy, circuits: &[&str]) -> ZkOffer {
    ZkOffer::new(policy, circuits.iter().map(|c| c.to_string()).collect()).unwrap()
}

const V7_SYSTEM: &str = concat!(
    r#"{"system":"longfellow-libzk-v1","id":"8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121","#,
    r#""circuit_hash":"8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121","#,
    r#""num_attributes":1,"version":7,"block_enc_hash":4151,"block_enc_sig":4096}"#
);

const V6_SYSTEM: &str = concat!(
    r#"{"system":"longfellow-libzk-v1","id":"137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6","#,
    r#""circuit_hash":"137e5a75ce72735a37c8a72da1a8a0a5df8d13365c2ae3d2c2bd6a0e7197c7c6","#,
    r#""num_attributes":1,"version":6,"block_enc_hash":4096,"block_enc_sig":2945}"#
);

#[test]
fn a_preferring_request_adds_one_zk_credential_per_doc_type_and_lists_the_proofs_first() {
    let zk = offer(ZkPolicy::Prefer, &[V7, V6]);
    let age = MinAge::new(21).unwrap();
    assert_eq!(
        dcql_query(KindSet::one(Kind::EU_AV), age, Some(&zk)),
        [
            r#"{"credentials":["#,
            r#"{"id":"proof_of_age","format":"mso_mdoc","meta":{"doctype_value":"eu.europa.ec.av.1"},"claims":[{"path":["eu.europa.ec.av.1","age_over_21"]}]},"#,
            r#"{"id":"proof_of_age_zk","format":"mso_mdoc_zk","meta":{"doctype_value":"eu.europa.ec.av.1","zk_system_type":["#,
            V7_SYSTEM,
            ",",
            V6_SYSTEM,
            r#"]},"claims":[{"path":["eu.europa.ec.av.1","age_over_21"]}]}"#,
            r#"],"credential_sets":[{"options":[["proof_of_age_zk"],["proof_of_age"]]}]}"#,
        ]
        .concat()
    );
}

#[test]
fn a_requiring_request_lists_only_the_proofs_among_its_options() {
    let zk = offer(ZkPolicy::Require, &[V7]);
    let kinds: KindSet = [Kind::MDL, Kind::PHOTO_ID].into_iter().collect();
    let value = dcql_query_value(kinds, MinAge::DEFAULT, Some(&zk));
    let ids: Vec<_> = value["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["format"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ids,
        [
            ("mdl", "mso_mdoc"),
            ("photo_id", "mso_mdoc"),
            ("photo_id_2", "mso_mdoc"),
            ("mdl_zk", "mso_mdoc_zk"),
            ("photo_id_zk", "mso_mdoc_zk"),
            ("photo_id_2_zk", "mso_mdoc_zk"),
        ]
    );
    assert_eq!(
        value["credential_sets"],
        serde_json::json!([{"options": [["mdl_zk"], ["photo_id_zk"], ["photo_id_2_zk"]]}])
    );
    let photo_id_2 = &value["credentials"][5];
    assert_eq!(
        photo_id_2["meta"]["doctype_value"],
        "org.iso.23220.photoID.1"
    );
    assert_eq!(
        photo_id_2["claims"],
        serde_json::json!([{"path": ["org.iso.23220.1", "age_over_18"]}])
    );
    let system: serde_json::Value = serde_json::from_str(V7_SYSTEM).unwrap();
    assert_eq!(
        photo_id_2["meta"]["zk_system_type"],
        serde_json::json!([system])
    );
}

#[test]
fn the_text_and_the_value_agree_and_without_an_offer_nothing_changes() {
    let kinds = KindSet::all();
    for zk in [
        None,
        Some(offer(ZkPolicy::Prefer, &[V7, V6])),
        Some(offer(ZkPolicy::Require, &[V6])),
    ] {
        let text: serde_json::Value =
            serde_json::from_str(&dcql_query(kinds, MinAge::DEFAULT, zk.as_ref())).unwrap();
        assert_eq!(text, dcql_query_value(kinds, MinAge::DEFAULT, zk.as_ref()));
    }
    // An offer naming no circuit the table knows asks for no proof.
    let unknown = offer(ZkPolicy::Require, &[&"ab".repeat(32)]);
    assert_eq!(
        dcql_query(KindSet::one(Kind::MDL), MinAge::DEFAULT, Some(&unknown)),
        dcql_query(KindSet::one(Kind::MDL), MinAge::DEFAULT, None)
    );
}

#[test]
fn offered_circuits_come_from_the_table_in_the_offers_order() {
    let zk = offer(ZkPolicy::Prefer, &[V7, V6]);
    let found: Vec<_> = offered_circuits(&zk)
        .iter()
        .map(|c| (c.version, c.num_attributes, c.circuit_hash))
        .collect();
    assert_eq!(found, [(7, 1, V7), (6, 1, V6)]);
}
