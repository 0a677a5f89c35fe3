//! Prometheus metrics (docs/operations.md#metrics), kept in one registry object that the server
//! owns and passes on (no global recorder): requests by route and status with latency
//! histograms, invites created and verified by method, webhook attempts by outcome and
//! the undelivered backlog, database errors. Served as text on `--metrics-listen` only.

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    /// The route's template (`/v1/website/{siteId}/invite`), never the concrete path:
    /// ids stay out of the metrics and the label set stays small.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    pub route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MethodLabels {
    pub method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

/// A presentation's kind of credential, its transport and the outcome word.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PresentationLabels {
    pub kind: String,
    pub transport: String,
    pub outcome: String,
}

/// One trust anchor: its kind and the SHA-256 (hex) of its DER, as `trust show` lists it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AnchorLabels {
    pub kind: String,
    pub sha256: String,
}

/// A signed trust list, by its location (path or URL).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListLabels {
    pub source: String,
}

/// A list's failed refreshes, by location and a reason of a short fixed set
/// (`crate::trust::lists::Reason`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListFailureLabels {
    pub source: String,
    pub reason: String,
}

/// A status list fetch's result, a word of a short fixed set.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

/// What a verification recorded of its credential's status, by kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindStatusLabels {
    pub kind: String,
    pub status: String,
}

pub struct Metrics {
    registry: Registry,
    /// Credential status list fetches, by result (docs/credential-status.md).
    pub status_list_fetches: Family<ResultLabels, Counter>,
    /// Credential status of each presentation judged, by kind and status (valid,
    /// unknown, unchecked, none, revoked, suspended, invalid).
    pub credential_status: Family<KindStatusLabels, Counter>,
    /// Per signed list in force: when a node last fetched and verified it, and its
    /// `NextUpdate`; set at each scrape, like the anchors.
    pub list_last_success: Family<ListLabels, Gauge>,
    pub list_next_update: Family<ListLabels, Gauge>,
    /// Failed refreshes, copied at each scrape from the trust handle's counts.
    pub list_failures: Family<ListFailureLabels, Counter>,
    /// Seconds until each anchor in force expires (negative once it has): set from the
    /// anchors at each scrape, so a reload shows at once.
    pub anchor_expiry: Family<AnchorLabels, Gauge>,
    anchor_scrape: std::sync::Mutex<()>,
    pub presentations: Family<PresentationLabels, Counter>,
    pub requests: Family<RequestLabels, Counter>,
    pub request_seconds: Family<RouteLabels, Histogram>,
    /// Time a zero-knowledge proof's check took on its worker (the queue not counted).
    pub zk_verify_seconds: Histogram,
    pub invites_created: Counter,
    pub invites_verified: Family<MethodLabels, Counter>,
    pub webhook_attempts: Family<OutcomeLabels, Counter>,
    pub webhook_backlog: Gauge,
    pub database_errors: Counter,
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::with_prefix("agegate");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route and status",
            requests.clone(),
        );
        let request_seconds = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            // 100 µs to ~3.3 s.
            Histogram::new(exponential_buckets(0.0001, 2.0, 16))
        });
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route",
            request_seconds.clone(),
        );
        // 50 ms to 6.4 s: a check takes about a quarter of a second of one core.
        let zk_verify_seconds = Histogram::new(exponential_buckets(0.05, 2.0, 8));
        registry.register(
            "zk_verify_seconds",
            "Time to check a zero-knowledge proof of age on a worker of the proof pool",
            zk_verify_seconds.clone(),
        );
        let invites_created = Counter::default();
        registry.register(
            "invites_created",
            "Invites created",
            invites_created.clone(),
        );
        let invites_verified = Family::<MethodLabels, Counter>::default();
        registry.register(
            "invites_verified",
            "Invites verified, by method (a credential kind: eu-av, eudi-pid, mdl, google-id, photo-id; sandbox, verifier)",
            invites_verified.clone(),
        );
        let webhook_attempts = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts, by outcome (delivered, retry, failed)",
            webhook_attempts.clone(),
        );
        let webhook_backlog = Gauge::default();
        registry.register(
            "webhook_backlog",
            "Webhook events not yet delivered (pending or waiting for a retry)",
            webhook_backlog.clone(),
        );
        let presentations = Family::<PresentationLabels, Counter>::default();
        registry.register(
            "presentations",
            "Wallet presentations answered, by kind, transport (openid4vp, dc-api) and outcome \
             (accepted, or the refusal's reason as one stable word: see docs/evidence.md)",
            presentations.clone(),
        );
        let anchor_expiry = Family::<AnchorLabels, Gauge>::default();
        registry.register(
            "trust_anchor_expiry_seconds",
            "Seconds until each trust anchor in force expires (negative once it has), by \
             credential kind and SHA-256 fingerprint; alert well before it reaches 0",
            anchor_expiry.clone(),
        );
        let list_last_success = Family::<ListLabels, Gauge>::default();
        registry.register(
            "trust_list_last_success_timestamp_seconds",
            "When each signed trust list in force was last fetched and verified (Unix \
             seconds), by source",
            list_last_success.clone(),
        );
        let list_next_update = Family::<ListLabels, Gauge>::default();
        registry.register(
            "trust_list_next_update_timestamp_seconds",
            "The NextUpdate of each signed trust list in force (Unix seconds), by source; \
             7 days past it the list gives no anchors",
            list_next_update.clone(),
        );
        let list_failures = Family::<ListFailureLabels, Counter>::default();
        registry.register(
            "trust_list_refresh_failures",
            "Refreshes of a signed trust list that failed, by source and reason \
             (unreachable, timeout, too_large, signer, signature, invalid, stale, older)",
            list_failures.clone(),
        );
        let status_list_fetches = Family::<ResultLabels, Counter>::default();
        registry.register(
            "status_list_fetches",
            "Fetches of credential status lists, by result (ok, timeout, too_large, \
             http_status, network, uri, invalid, untrusted)",
            status_list_fetches.clone(),
        );
        let credential_status = Family::<KindStatusLabels, Counter>::default();
        registry.register(
            "credential_status",
            "Credential status of the presentations judged, by kind and status (valid, \
             unknown, unchecked, none, revoked, suspended, invalid)",
            credential_status.clone(),
        );
        let database_errors = Counter::default();
        registry.register(
            "database_errors",
            "Database operations that failed (unreachable, refused writes, faults)",
            database_errors.clone(),
        );
        Arc::new(Self {
            registry,
            status_list_fetches,
            credential_status,
            list_last_success,
            list_next_update,
            list_failures,
            anchor_expiry,
            anchor_scrape: std::sync::Mutex::new(()),
            presentations,
            requests,
            request_seconds,
            zk_verify_seconds,
            invites_created,
            invites_verified,
            webhook_attempts,
            webhook_backlog,
            database_errors,
        })
    }

    /// Counts one presentation answered: `outcome` is `accepted` or a refusal's word.
    pub fn presentation(&self, kind: &str, transport: &str, outcome: &str) {
        self.presentations
            .get_or_create(&PresentationLabels {
                kind: kind.to_owned(),
                transport: transport.to_owned(),
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// Counts one status list fetch by its result word.
    pub fn status_list_fetch(&self, result: &str) {
        self.status_list_fetches
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }

    /// Counts one presentation's credential status.
    pub fn credential_status(&self, kind: &str, status: &str) {
        self.credential_status
            .get_or_create(&KindStatusLabels {
                kind: kind.to_owned(),
                status: status.to_owned(),
            })
            .inc();
    }

    pub fn verified(&self, method: crate::domain::VerifyMethod) {
        self.invites_verified
            .get_or_create(&MethodLabels {
                method: method.as_str().to_owned(),
            })
            .inc();
    }

    pub fn webhook_attempt(&self, outcome: &str) {
        self.webhook_attempts
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// The exposition with the anchor expiry gauge set to exactly `anchors` at `now` (an
    /// anchor no longer in force disappears). One scrape at a time refills and encodes,
    /// so a concurrent scrape never sees the gauge half filled.
    pub fn render_with_anchors(&self, anchors: &[crate::trust::AnchorListing], now: i64) -> String {
        let _one_at_a_time = self.anchor_scrape.lock().unwrap_or_else(|e| e.into_inner());
        self.set_anchors(anchors, now);
        self.render()
    }

    /// The exposition with the anchor expiry gauge and the trust lists' metrics set from
    /// the set in force at `now`.
    pub fn render_with_trust(&self, trust: &crate::trust::TrustHandle, now: i64) -> String {
        let _one_at_a_time = self.anchor_scrape.lock().unwrap_or_else(|e| e.into_inner());
        let current = trust.current();
        self.set_anchors(&crate::trust::list(&current.sources, now), now);
        self.list_last_success.clear();
        self.list_next_update.clear();
        for l in &current.lists {
            let labels = ListLabels {
                source: l.location.clone(),
            };
            self.list_last_success
                .get_or_create(&labels)
                .set(l.last_success);
            if let Some(next) = l.next_update {
                self.list_next_update.get_or_create(&labels).set(next);
            }
        }
        self.list_failures.clear();
        for ((source, reason), n) in trust.failures.snapshot() {
            self.list_failures
                .get_or_create(&ListFailureLabels {
                    source,
                    reason: reason.to_owned(),
                })
                .inc_by(n);
        }
        self.render()
    }

    fn set_anchors(&self, anchors: &[crate::trust::AnchorListing], now: i64) {
        self.anchor_expiry.clear();
        for a in anchors {
            self.anchor_expiry
                .get_or_create(&AnchorLabels {
                    kind: a.kind.name().to_owned(),
                    sha256: a.sha256.clone(),
                })
                .set(a.not_after - now);
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode metrics");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_every_metric() {
        let m = Metrics::new();
        m.invites_created.inc();
        m.verified(crate::domain::VerifyMethod::EU_AV);
        m.webhook_attempt("delivered");
        m.zk_verify_seconds.observe(0.25);
        m.requests
            .get_or_create(&RequestLabels {
                method: "GET".into(),
                route: "/healthz".into(),
                status: 200,
            })
            .inc();
        let text = m.render();
        for name in [
            "agegate_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1",
            "agegate_invites_created_total 1",
            "agegate_invites_verified_total{method=\"eu-av\"} 1",
            "agegate_webhook_attempts_total{outcome=\"delivered\"} 1",
            "agegate_webhook_backlog 0",
            "agegate_database_errors_total 0",
            "agegate_zk_verify_seconds_bucket{le=\"0.4\"} 1",
            "agegate_zk_verify_seconds_count 1",
        ] {
            assert!(text.contains(name), "{name} in\n{text}");
        }
    }
}
