//! Every acceptance rule of docs/presentations.md#what-is-checked, each broken on its own: the answer is a 400
//! whose message names the rule, the invite stays pending, and the request stays live
//! (a correct answer with the same state is accepted afterwards).

use crate::eu_av::{answer, answer_with_state, eu_av_app, invite_with_request};
use crate::helpers::{assert_error, SiteOptions, TestApp, TestSite, T0};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use base64::Engine;
use serde_json::Value;

const DAY: i64 = 86_400;

/// How a case breaks the wallet's answer.
enum Break {
    /// The valid presentation, changed.
    Presentation(fn(Presentation) -> Presentation),
    /// The valid presentation, signed by another issuer made from the trusted one.
    Issuer(fn(&TestIssuer) -> TestIssuer),
    /// A vp_token that is no presentation at all.
    VpToken(fn() -> String),
}

/// One rule broken: its name, how, and the answer's status, error code and (a part
/// of) its message.
type Rule = (&'static str, Break, u16, u32, &'static str);

// A table: one rule a line.
#[rustfmt::skip]
fn rules() -> Vec<Rule> {
    use Break::{Issuer, Presentation as P, VpToken};
    const MDL: &str = "org.iso.18013.5.1.mDL";
    vec![
        ("a tampered value fails its digest", P(|p| Presentation { tamper_value: true, ..p }), 400, 40010, "digest"),
        ("a disclosed item without a digest", P(|p| Presentation { omit_digest: true, ..p }), 400, 40010, "digest"),
        ("a device signature over another nonce", P(|p| Presentation { nonce: Some("another-nonce-0123456789".into()), ..p }), 400, 40010, "device signature"),
        ("a device signature for another client_id", P(|p| Presentation { client_id: Some("redirect_uri:https://evil.example/cb".into()), ..p }), 400, 40010, "device signature"),
        ("a device signature for another response_uri", P(|p| Presentation { response_uri: Some("https://evil.example/cb".into()), ..p }), 400, 40010, "device signature"),
        ("a device signature by another key than the MSO's", P(|p| Presentation { foreign_device_key: true, ..p }), 400, 40010, "device signature"),
        ("an issuer not chained to a trust anchor", Issuer(|_| TestIssuer::new(T0)), 400, 40010, "trust"),
        ("a bad issuer signature", P(|p| Presentation { bad_issuer_signature: true, ..p }), 400, 40010, "issuer signature"),
        ("an expired attestation", P(|p| Presentation { valid_from: T0 - 30 * DAY, valid_until: T0 - 1, ..p }), 400, 40010, "expired"),
        ("an attestation not yet valid", P(|p| Presentation { valid_from: T0 + 60, valid_until: T0 + 30 * DAY, ..p }), 400, 40010, "not yet valid"),
        ("an expired document signer certificate", Issuer(|i| i.with_signer_validity(T0 - 400 * DAY, T0 - DAY)), 400, 40010, "certificate"),
        ("a document signer certificate not yet valid", Issuer(|i| i.with_signer_validity(T0 + DAY, T0 + 400 * DAY)), 400, 40010, "certificate"),
        ("a document of another doctype", P(|p| Presentation { doc_type: MDL.into(), ..p }), 400, 40010, "document type"),
        ("an MSO of another doctype", P(|p| Presentation { mso_doc_type: MDL.into(), ..p }), 400, 40010, "mobile security object is for another document type"),
        ("age_over_18 false", P(|p| p.claim("age_over_18", false)), 400, 40010, "age_over"),
        ("a missing age claim", P(|p| Presentation { claims: vec![], ..p }), 400, 40010, "age_over"),
        ("a lower age claim does not prove the minimum", P(|p| p.claim("age_over_16", true)), 400, 40010, "age_over"),
        ("a device response with status other than 0", P(|p| Presentation { status: 10, ..p }), 400, 40010, "status"),
        ("a vp_token that is not JSON", VpToken(|| "not json".into()), 400, 40010, "vp_token is not json"),
        ("a vp_token for a credential not asked for", VpToken(|| r#"{"other": ["x"]}"#.into()), 400, 40010, "vp_token answers \"other\", which was not requested"),
        ("an empty proof_of_age", VpToken(|| r#"{"proof_of_age": []}"#.into()), 400, 40010, "<credential id>"),
        ("a device response that is not base64url", VpToken(|| r#"{"proof_of_age": ["***"]}"#.into()), 400, 40010, "base64"),
        ("a device response that is not CBOR", VpToken(|| format!(r#"{{"proof_of_age": ["{}"]}}"#, b64(b"\xff\x00garbage"))), 400, 40010, "malformed device response"),
    ]
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn each_broken_rule_is_refused_naming_it_and_leaves_the_request_live() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let mut failures = Vec::new();
    for (name, broken, status, code, message) in rules() {
        let c = Case::new(&app, &issuer).await;
        let vp_token = match broken {
            Break::Presentation(change) => issuer.vp_token(&c.req, &change(c.valid())),
            Break::Issuer(other) => other(&issuer).vp_token(&c.req, &c.valid()),
            Break::VpToken(token) => token(),
        };
        if let Err(e) = c.refused(&vp_token, (status, code, message)).await {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A pending invite of a site of its own, and the request its page shows.
struct Case<'a> {
    app: &'a TestApp,
    issuer: &'a TestIssuer,
    site: TestSite,
    invite_id: String,
    req: AuthorizationRequest,
}

impl<'a> Case<'a> {
    async fn new(app: &'a TestApp, issuer: &'a TestIssuer) -> Case<'a> {
        let (site, invite, req) = invite_with_request(app, SiteOptions::default()).await;
        let invite_id = invite["inviteId"].as_str().unwrap().to_owned();
        Case {
            app,
            issuer,
            site,
            invite_id,
            req,
        }
    }

    fn valid(&self) -> Presentation {
        Presentation::for_request(&self.req, T0)
    }

    /// Posts `vp_token`; it must be refused as expected, leaving the invite pending and
    /// the request answerable.
    async fn refused(
        &self,
        vp_token: &str,
        (status, code, message): (u16, u32, &str),
    ) -> Result<(), String> {
        let resp = answer(self.app, &self.req, vp_token).await;
        let got = resp.status().as_u16();
        let body: Value = resp
            .json()
            .await
            .map_err(|e| format!("{got}, not JSON: {e}"))?;
        let said = body["message"].as_str().unwrap_or_default().to_lowercase();
        if got != status || body["error"] != code || !said.contains(message) {
            return Err(format!(
                "want {status} {code} naming {message:?}, got {got} {body}"
            ));
        }
        self.still_pending_and_live().await
    }

    async fn still_pending_and_live(&self) -> Result<(), String> {
        let record = self.app.status_record(&self.site, &self.invite_id).await;
        if record["status"] != "pending" {
            return Err(format!("the invite is {}", record["status"]));
        }
        let valid = self.issuer.vp_token(&self.req, &self.valid());
        match answer(self.app, &self.req, &valid).await.status().as_u16() {
            200 => Ok(()),
            other => Err(format!(
                "the request is no longer live: a valid answer got {other}"
            )),
        }
    }
}

#[tokio::test]
async fn a_higher_age_claim_proves_the_minimum() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let c = Case::new(&app, &issuer).await;
    let p = Presentation {
        claims: vec![("age_over_21".into(), true.into())],
        ..c.valid()
    };
    let vp = issuer.vp_token(&c.req, &p);
    assert_eq!(answer(&app, &c.req, &vp).await.status(), 200);
    let record = app.status_record(&c.site, &c.invite_id).await;
    assert_eq!(record["status"], "verified");
}

#[tokio::test]
async fn a_form_without_state_or_vp_token_is_refused() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let c = Case::new(&app, &issuer).await;
    let resp = answer_with_state(c.app, &c.req, "", "x").await;
    assert_error(resp, 400, 40012).await;
    let resp = c
        .app
        .client
        .post(&c.req.response_uri)
        .header("content-type", "application/json")
        .body(r#"{"state":"s","vp_token":"v"}"#)
        .send()
        .await
        .unwrap();
    assert_error(resp, 400, 40012).await;
    c.still_pending_and_live().await.unwrap();
}

/// Arbitrary bytes never crash the endpoint or cause a 5xx: every refusal is a JSON
/// error body (a deterministic generator, so a failure reproduces).
#[tokio::test]
async fn arbitrary_bytes_to_the_response_endpoint_get_a_json_error_never_a_5xx() {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let c = Case::new(&app, &issuer).await;
    let valid = c.issuer.device_response(&c.req, &c.valid());
    let valid = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(valid)
        .unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    for round in 0..300 {
        let body: Vec<u8> = match round % 3 {
            // Raw bytes as the whole body.
            0 => (0..(next() % 512)).map(|_| next() as u8).collect(),
            // A well-formed form whose DeviceResponse has random bytes flipped.
            1 => {
                let mut bytes = valid.clone();
                for _ in 0..=(next() % 8) {
                    let i = (next() as usize) % bytes.len();
                    bytes[i] ^= (next() as u8) | 1;
                }
                let vp = format!(r#"{{"proof_of_age":["{}"]}}"#, b64.encode(&bytes));
                form(&c.req.state, &vp)
            }
            // A truncated DeviceResponse.
            _ => {
                let cut = (next() as usize) % valid.len();
                let vp = format!(r#"{{"proof_of_age":["{}"]}}"#, b64.encode(&valid[..cut]));
                form(&c.req.state, &vp)
            }
        };
        let resp = c
            .app
            .client
            .post(&c.req.response_uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        // A flip in a part no rule covers (an unsigned version text, say) may pass.
        crate::helpers::assert_accepted_or_refused(resp, round).await;
    }
}

fn form(state: &str, vp_token: &str) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("state", state)
        .append_pair("vp_token", vp_token)
        .finish()
        .into_bytes()
}
