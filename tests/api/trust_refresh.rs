//! Signed lists from a URL, kept current (docs/trust.md#lists-kept-current), against the
//! real binary and a real HTTP source on loopback that serves list A, then B (a provider
//! added), then garbage, a 500 and an oversized body: the anchors follow A → B and stay
//! B; each outcome is one log line naming the list; a second node started on the same
//! database while the source is down starts with B; the nodes agree; `/metrics` has the
//! lists' gauges and failure counts; a credential under a provider only B lists verifies
//! once B is in force; a VICAL at a URL is never taken backwards either (an older
//! `vicalIssueID` refused, a newer one taken). On SQLite and PostgreSQL
//! (AGEGATE_TEST_BACKEND).

use crate::helpers::{
    cli_site, client, eventually, gateway_page, json_output, now, scrape, temp_db, trust_show_json,
    ServerProcess,
};
use crate::trust_lists::{eu_av_gauge, fingerprint_of_pem, list_args, lists_a_and_b, testdata};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the source answers next.
#[derive(Clone)]
pub enum Reply {
    List(Vec<u8>),
    Status(u16),
}

/// A list source on loopback whose answer a test switches.
pub struct ListSource {
    pub url: String,
    reply: Arc<Mutex<Reply>>,
}

impl ListSource {
    pub async fn start(first: Reply) -> Self {
        let reply = Arc::new(Mutex::new(first));
        let shared = reply.clone();
        let app = axum::Router::new().route(
            "/lists/av-tl.xml",
            axum::routing::get(move || {
                let reply = shared.lock().unwrap().clone();
                async move {
                    match reply {
                        Reply::List(body) => body.into_response(),
                        Reply::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}/lists/av-tl.xml"),
            reply,
        }
    }

    pub fn serve(&self, reply: Reply) {
        *self.reply.lock().unwrap() = reply;
    }
}

pub fn list(name: &str) -> Reply {
    Reply::List(std::fs::read(testdata(name)).unwrap())
}

fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

/// The value of the metric line that starts with `prefix`, if any.
fn metric(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// A node reading the EU AV list from `source` every second, with `/metrics`.
pub fn node(db: &crate::helpers::TestDb, source: &str) -> (ServerProcess, String) {
    node_pinning(db, source, "signer-ca.pem")
}

fn node_pinning(
    db: &crate::helpers::TestDb,
    source: &str,
    signer: &str,
) -> (ServerProcess, String) {
    let metrics = free_addr();
    let mut args = list_args(source, signer);
    args.extend(["--trust-refresh", "1s", "--metrics-listen", &metrics].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (ServerProcess::start(db, &args), format!("http://{metrics}"))
}

async fn failures(metrics: &str, source: &str, reason: &str) -> f64 {
    let prefix = format!(
        "agegate_trust_list_refresh_failures_total{{source=\"{source}\",reason=\"{reason}\"}}"
    );
    metric(&scrape(metrics).await, &prefix).unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchors_follow_the_list_at_its_url_and_a_list_that_fails_keeps_the_one_in_force() {
    let source = ListSource::start(list("xmlsec-rsa-filter2-exc.xml")).await;
    let (_db_dir, db) = temp_db();
    let (first, metrics) = node(&db, &source.url);
    let (list_a, list_b) = lists_a_and_b();
    assert_eq!(eu_av_gauge(&metrics).await, list_a, "A in force at start");
    let named = format!("trusted list eu-av-trusted-list {}", source.url);
    let needle = format!("{named}: sequence 1 in force");
    first.logged(&needle).await;
    let taken = first.log_lines(&needle);
    assert!(
        taken[0].contains(": sequence 1 in force, issued 2026-01-01T00:00:00Z, next update 2099-01-01T00:00:00Z, 2 anchor(s)"),
        "{}",
        taken[0]
    );

    // B (sequence 2) adds provider g: taken at the next refresh.
    source.serve(list("xmlsec-rsa-filter2-exc-b.xml"));
    eventually("B in force", Duration::from_secs(10), || {
        let (metrics, want) = (metrics.clone(), list_b.clone());
        async move { eu_av_gauge(&metrics).await == want }
    })
    .await;
    first.logged(&format!("{named}: sequence 2 in force")).await;
    let text = scrape(&metrics).await;
    let labels = format!("{{source=\"{}\"}}", source.url);
    assert_eq!(
        metric(
            &text,
            &format!("agegate_trust_list_next_update_timestamp_seconds{labels}")
        ),
        Some(4_070_908_800.0),
        "2099-01-01"
    );
    let last = metric(
        &text,
        &format!("agegate_trust_list_last_success_timestamp_seconds{labels}"),
    )
    .expect("the last success gauge");
    let now = now() as f64;
    assert!((now - 30.0..=now + 1.0).contains(&last), "{last} vs {now}");

    // Garbage, a 500, an oversized body: each refused for its reason, B stays.
    for (reply, reason, why) in [
        (
            Reply::List(b"not a list".to_vec()),
            "invalid",
            "not well-formed XML",
        ),
        (Reply::Status(500), "unreachable", "answered HTTP 500"),
        (
            Reply::List(vec![b' '; 8 * 1024 * 1024 + 1]),
            "too_large",
            "larger than 8388608 bytes",
        ),
    ] {
        source.serve(reply);
        eventually(reason, Duration::from_secs(10), || {
            let (metrics, url) = (metrics.clone(), source.url.clone());
            async move { failures(&metrics, &url, reason).await >= 1.0 }
        })
        .await;
        let needle = format!("{named} refused ({reason}): ");
        first.logged(&needle).await;
        let lines = first.log_lines(&needle);
        assert!(
            lines[0].contains(why) && lines[0].ends_with("; sequence 2 stays in force"),
            "{}",
            lines[0]
        );
        assert_eq!(
            eu_av_gauge(&metrics).await,
            list_b,
            "B stays after {reason}"
        );
    }

    // A second node on the same database while the source answers 500: B from there.
    source.serve(Reply::Status(500));
    let (second, second_metrics) = node(&db, &source.url);
    assert_eq!(
        eu_av_gauge(&second_metrics).await,
        list_b,
        "the nodes agree"
    );
    let needle = format!("{named} refused (unreachable)");
    second.logged(&needle).await;
    let said = second.log_lines(&needle);
    assert!(
        said[0].ends_with(
            "answered HTTP 500; the database's copy is in force (sequence 2, 3 anchor(s))"
        ),
        "{}",
        said[0]
    );

    // An older list (A again) is refused by both: never backwards.
    source.serve(list("xmlsec-rsa-filter2-exc.xml"));
    for (node, metrics) in [(&first, &metrics), (&second, &second_metrics)] {
        eventually("A refused as older", Duration::from_secs(10), || {
            let (metrics, url) = (metrics.clone(), source.url.clone());
            async move { failures(&metrics, &url, "older").await >= 1.0 }
        })
        .await;
        assert_eq!(eu_av_gauge(metrics).await, list_b);
        let needle = format!("{named} refused (older)");
        node.logged(&needle).await;
        let lines = node.log_lines(&needle);
        assert!(
            lines[0].contains("sequence number 1 is lower than the 2 in force"),
            "{}",
            lines[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_url_fails_at_start_without_a_copy_starts_without_that_lists_anchors() {
    let source = ListSource::start(Reply::Status(503)).await;
    let (_db_dir, db) = temp_db();
    let (node, metrics) = node(&db, &source.url);
    assert_eq!(eu_av_gauge(&metrics).await, Vec::<String>::new());
    node.logged("trusted list eu-av-trusted-list").await;
    assert_eq!(node.log_count("credential kind eu-av: off (no anchors)"), 1);
    let lines = node.log_lines("trusted list eu-av-trusted-list");
    assert_eq!(
        lines[0].split_once("trusted list ").map(|(_, l)| l.to_owned()),
        Some(format!(
            "eu-av-trusted-list {} refused (unreachable): answered HTTP 503; no eu-av anchors from it",
            source.url
        )),
    );
    // The source comes back: the list is taken at the next refresh.
    source.serve(list("xmlsec-rsa-filter2-exc.xml"));
    eventually("A in force", Duration::from_secs(10), || {
        let metrics = metrics.clone();
        async move { eu_av_gauge(&metrics).await.len() == 2 }
    })
    .await;

    // Down again: `trust show` shows the database's copy, as a starting node would.
    source.serve(Reply::Status(500));
    let (shown, stderr) =
        json_output(trust_show_json(&db.url).args(list_args(&source.url, "signer-ca.pem")));
    assert!(
        stderr.contains("refused (unreachable): answered HTTP 500; the database's copy is in force (sequence 1, 2 anchor(s))"),
        "{stderr}"
    );
    let s = &shown["sources"][0];
    assert_eq!(
        (&s["list"], &s["location"], &s["sequence"], &s["anchors"]),
        (
            &"eu-av-trusted-list".into(),
            &source.url.as_str().into(),
            &1.into(),
            &2.into()
        )
    );
    assert_eq!(shown["kindsOn"], serde_json::json!(["eu-av"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_under_a_provider_only_list_b_names_verifies_once_b_is_in_force() {
    use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
    let now = now();
    let key = std::fs::read_to_string(testdata("provider-h-added.key")).unwrap();
    let provider_h = TestIssuer::under_ca_key(&key, "Provider h-added", "agegate tests", now);
    let source = ListSource::start(list("refresh-a.xml")).await;
    let (_db_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "eu-av"]);
    let (server, metrics) = node_pinning(&db, &source.url, "refresh-signer-ca.pem");
    assert_eq!(eu_av_gauge(&metrics).await.len(), 1, "A's one provider");
    let invite = server.new_invite(&site, None).await;
    let page = gateway_page(&client(), invite["url"].as_str().unwrap()).await;
    let req = AuthorizationRequest::from_gateway_html(&page);
    let answer = || async {
        let p = Presentation::for_request(&req, now);
        client()
            .post(&req.response_uri)
            .form(&provider_h.answer_form(&req, &p))
            .send()
            .await
            .unwrap()
            .status()
    };
    assert_eq!(answer().await, 400, "provider h is not in A");

    source.serve(list("refresh-b.xml"));
    let h = fingerprint_of_pem("provider-h-added.pem");
    eventually("B in force", Duration::from_secs(10), || {
        let (metrics, h) = (metrics.clone(), h.clone());
        async move { eu_av_gauge(&metrics).await.contains(&h) }
    })
    .await;
    assert_eq!(answer().await, 200, "provider h is in B");
    let record = server
        .status_record(&site, invite["inviteId"].as_str().unwrap())
        .await;
    assert_eq!(record["status"], "verified", "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vical_at_a_url_gives_mdl_anchors_and_is_listed_as_a_source() {
    use crate::wallet::{TestIssuer, VicalEntry, VicalKnobs, VicalPublisher};
    let now = now();
    let state = TestIssuer::named("agegate test IACA root", now);
    let publisher = VicalPublisher::new(now);
    let vical = publisher.vical(&[VicalEntry::mdl(&state.ca_der)], &VicalKnobs::default());
    let source = ListSource::start(Reply::List(vical)).await;
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("vical-anchor.pem");
    std::fs::write(&anchor, &publisher.anchor_pem).unwrap();
    let (_db_dir, db) = temp_db();
    let (shown, _) = json_output(
        trust_show_json(&db.url)
            .args(["--mdl-vical", &source.url, "--mdl-vical-anchor"])
            .arg(&anchor),
    );
    assert_eq!(shown["kindsOn"], serde_json::json!(["mdl"]));
    assert_eq!(
        shown["anchors"][0]["source"],
        format!("vical:{}", source.url)
    );
    let s = &shown["sources"][0];
    assert_eq!(
        (&s["list"], &s["kind"], &s["sequence"], &s["anchors"]),
        (&"mdl-vical".into(), &"mdl".into(), &7.into(), &1.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vical_older_than_the_one_in_force_is_refused_and_a_newer_one_taken() {
    use crate::wallet::{TestIssuer, VicalEntry, VicalKnobs, VicalPublisher};
    let now = now();
    let state = TestIssuer::named("agegate test IACA root", now);
    let publisher = VicalPublisher::new(now);
    let issued = |issue_id| {
        let knobs = VicalKnobs {
            issue_id: Some(issue_id),
            ..VicalKnobs::default()
        };
        Reply::List(publisher.vical(&[VicalEntry::mdl(&state.ca_der)], &knobs))
    };
    let source = ListSource::start(issued(7)).await;
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("vical-anchor.pem");
    std::fs::write(&anchor, &publisher.anchor_pem).unwrap();
    let (_db_dir, db) = temp_db();
    let metrics = free_addr();
    let anchor = anchor.display().to_string();
    let node = ServerProcess::start(
        &db,
        &[
            "--mdl-vical",
            &source.url,
            "--mdl-vical-anchor",
            &anchor,
            "--trust-refresh",
            "1s",
            "--metrics-listen",
            &metrics,
        ],
    );
    let metrics = format!("http://{metrics}");
    let named = format!("trusted list mdl-vical {}", source.url);
    node.logged(&format!("{named}: sequence 7 in force")).await;

    // vicalIssueID 6 after 7: refused as older, every time it is fetched; 7 stays.
    source.serve(issued(6));
    eventually("6 refused as older", Duration::from_secs(10), || {
        let (metrics, url) = (metrics.clone(), source.url.clone());
        async move { failures(&metrics, &url, "older").await >= 2.0 }
    })
    .await;
    let needle = format!("{named} refused (older): ");
    let lines = node.log_lines(&needle);
    assert!(
        lines[0].contains("sequence number 6 is lower than the 7 in force")
            && lines[0].ends_with("; sequence 7 stays in force"),
        "{}",
        lines[0]
    );

    // vicalIssueID 8: taken.
    source.serve(issued(8));
    node.logged(&format!("{named}: sequence 8 in force")).await;
}
