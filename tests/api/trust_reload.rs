//! SIGHUP reloading the anchors of a running server (docs/trust.md#trust-show-reloading-and-expiry):
//! seen in `/metrics`' expiry gauge, the log and the verification of a driving licence; a
//! bad file keeps the old anchors.

use crate::helpers::{cli_site, client, eventually, gateway_page, temp_db, ServerProcess};
use crate::kinds_ops::*;
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer, MDL_DOCTYPE, MDL_NAMESPACE};
use serde_json::{json, Value};
use std::time::Duration;

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

/// The expiry gauge's samples: sha256 → (kind, seconds).
pub(crate) async fn expiry_gauge(metrics: &str) -> Vec<(String, String, i64)> {
    let text = crate::helpers::scrape(metrics).await;
    let label = |labels: &str, name: &str| {
        let start = labels.find(&format!("{name}=\""))? + name.len() + 2;
        let end = start + labels[start..].find('"')?;
        Some(labels[start..end].to_owned())
    };
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("agegate_trust_anchor_expiry_seconds{")?;
            let (labels, value) = rest.split_once("} ")?;
            Some((
                label(labels, "sha256")?,
                label(labels, "kind")?,
                value.trim().parse::<f64>().ok()? as i64,
            ))
        })
        .collect()
}

/// Opens the invite's gateway page and reads the wallet link's request.
pub(crate) async fn request_of(invite: &Value) -> AuthorizationRequest {
    AuthorizationRequest::from_gateway_html(
        &gateway_page(&client(), invite["url"].as_str().unwrap()).await,
    )
}

/// `issuer`'s driving licence, answering `req`: the response's status.
pub(crate) async fn answer_with_mdl(
    issuer: &TestIssuer,
    req: &AuthorizationRequest,
) -> reqwest::StatusCode {
    let p = Presentation::for_request(req, now()).of_doc(MDL_DOCTYPE, MDL_NAMESPACE);
    client()
        .post(&req.response_uri)
        .form(&issuer.answer_form(req, &p))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
pub(crate) async fn sighup_reloads_the_anchor_files_and_a_bad_file_keeps_the_old_ones() {
    let t = now();
    let dir = tempfile::tempdir().unwrap();
    let a = TestIssuer::named("agegate test IACA root A", t);
    let b = TestIssuer::named("agegate test IACA root B", t);
    let (sha_a, sha_b) = (fingerprint(&a.ca_der), fingerprint(&b.ca_der));
    let anchors = write(dir.path(), "mdl.pem", &a.ca_pem);
    let anchors_s = anchors.display().to_string();
    let (_db_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "mdl"]);
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let metrics = format!("http://{metrics_addr}");
    let mut server = ServerProcess::start(
        &db,
        &[
            "--mdl-trust-anchors",
            &anchors_s,
            "--metrics-listen",
            &metrics_addr,
        ],
    );
    let gauge = expiry_gauge(&metrics).await;
    assert_eq!(gauge.len(), 1, "{gauge:?}");
    assert_eq!(
        (gauge[0].0.as_str(), gauge[0].1.as_str()),
        (sha_a.as_str(), "mdl")
    );
    let left = gauge[0].2;
    assert!(
        (364 * DAY..=365 * DAY).contains(&left),
        "seconds to A's notAfter: {left}"
    );
    // A request shown while A is trusted.
    let invite = server
        .new_invite(&site, Some(json!({"customId": "before-reload"})))
        .await;
    let req = request_of(&invite).await;
    assert_eq!(req.credential_id, "mdl", "{}", req.uri);

    // B replaces A.
    std::fs::write(&anchors, &b.ca_pem).unwrap();
    server.signal("HUP");
    eventually(
        "the gauge shows B and not A",
        Duration::from_secs(10),
        || {
            let metrics = metrics.clone();
            let (sha_a, sha_b) = (sha_a.clone(), sha_b.clone());
            async move {
                let gauge = expiry_gauge(&metrics).await;
                gauge.iter().any(|g| g.0 == sha_b) && !gauge.iter().any(|g| g.0 == sha_a)
            }
        },
    )
    .await;
    server.logged("SIGHUP: trust anchors reloaded").await;
    // The verifier follows: a licence under A is refused now, one under B accepted (the
    // live request survives the refusal).
    assert_eq!(answer_with_mdl(&a, &req).await, 400, "A no longer trusted");
    assert_eq!(answer_with_mdl(&b, &req).await, 200, "B trusted");
    let record = server
        .status_record(&site, invite["inviteId"].as_str().unwrap())
        .await;
    assert_eq!(record["status"], "verified", "{record}");

    // A bad file keeps B, and the log says why, naming the file.
    std::fs::write(&anchors, "garbage, not a PEM file").unwrap();
    server.signal("HUP");
    server
        .logged("SIGHUP: trust anchors not reloaded, the old ones stay")
        .await;
    let why = server.log_lines("SIGHUP: trust anchors not reloaded");
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(why[0].contains(&anchors_s), "names the file: {}", why[0]);
    assert_eq!(server.log_count("SIGHUP: trust anchors reloaded"), 1);
    let gauge = expiry_gauge(&metrics).await;
    assert_eq!(gauge.len(), 1, "{gauge:?}");
    assert_eq!(gauge[0].0, sha_b, "B stays in force");
    let invite = server
        .new_invite(&site, Some(json!({"customId": "after-bad-reload"})))
        .await;
    let req = request_of(&invite).await;
    assert_eq!(answer_with_mdl(&b, &req).await, 200, "B still trusted");
    server.stop().await;
}
