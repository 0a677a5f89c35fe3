//! Every acceptance rule of interface §7, each broken on its own: the answer is a 400
//! whose message names the rule, the invite stays pending, and the request stays live
//! (a correct answer with the same state is accepted afterwards).

use crate::eu_av::{answer, answer_with_state, eu_av_app, invite_with_request};
use crate::helpers::{assert_error, SiteOptions, TestApp, TestSite, T0};
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use base64::Engine;
use serde_json::Value;

const DAY: i64 = 86_400;

struct Case {
    issuer: TestIssuer,
    app: TestApp,
    site: TestSite,
    invite_id: String,
    req: AuthorizationRequest,
}

async fn case() -> Case {
    let issuer = TestIssuer::new(T0);
    let app = eu_av_app(&issuer).await;
    let (site, invite, req) = invite_with_request(&app, SiteOptions::default()).await;
    let invite_id = invite["inviteId"].as_str().unwrap().to_owned();
    Case {
        issuer,
        app,
        site,
        invite_id,
        req,
    }
}

impl Case {
    fn valid(&self) -> Presentation {
        Presentation::for_request(&self.req, T0)
    }

    /// Posts `vp_token`, expects a refusal naming `reason`, then checks nothing moved.
    async fn refused(&self, vp_token: &str, code: u32, reason: &str) {
        self.refused_only(vp_token, code, reason).await;
        self.still_pending_and_live().await;
    }

    /// Posts `vp_token` and expects a refusal naming `reason`.
    async fn refused_only(&self, vp_token: &str, code: u32, reason: &str) {
        let body = assert_error(answer(&self.app, &self.req, vp_token).await, 400, code).await;
        let message = body["message"].as_str().unwrap();
        assert!(
            message.to_lowercase().contains(&reason.to_lowercase()),
            "message {message:?} names {reason:?}"
        );
    }

    async fn refused_presentation(&self, p: &Presentation, reason: &str) {
        self.refused(&self.issuer.vp_token(&self.req, p), 40010, reason)
            .await;
    }

    async fn still_pending_and_live(&self) {
        let record = self.app.status_record(&self.site, &self.invite_id).await;
        assert_eq!(record["status"], "pending");
        let vp = self.issuer.vp_token(&self.req, &self.valid());
        assert_eq!(
            answer(&self.app, &self.req, &vp).await.status(),
            200,
            "request still live"
        );
    }
}

#[tokio::test]
async fn a_tampered_value_fails_its_digest() {
    let c = case().await;
    let p = Presentation {
        tamper_value: true,
        ..c.valid()
    };
    c.refused_presentation(&p, "digest").await;
}

#[tokio::test]
async fn a_disclosed_item_without_a_digest_is_refused() {
    let c = case().await;
    let p = Presentation {
        omit_digest: true,
        ..c.valid()
    };
    c.refused_presentation(&p, "digest").await;
}

#[tokio::test]
async fn a_device_signature_over_another_nonce_is_refused() {
    let c = case().await;
    let p = Presentation {
        nonce: Some("another-nonce-0123456789".into()),
        ..c.valid()
    };
    c.refused_presentation(&p, "device signature").await;
}

#[tokio::test]
async fn a_device_signature_for_another_client_id_is_refused() {
    let c = case().await;
    let p = Presentation {
        client_id: Some("redirect_uri:https://evil.example/cb".into()),
        ..c.valid()
    };
    c.refused_presentation(&p, "device signature").await;
}

#[tokio::test]
async fn a_device_signature_for_another_response_uri_is_refused() {
    let c = case().await;
    let p = Presentation {
        response_uri: Some("https://evil.example/cb".into()),
        ..c.valid()
    };
    c.refused_presentation(&p, "device signature").await;
}

#[tokio::test]
async fn a_device_signature_by_another_key_than_the_msos_is_refused() {
    let c = case().await;
    let p = Presentation {
        foreign_device_key: true,
        ..c.valid()
    };
    c.refused_presentation(&p, "device signature").await;
}

#[tokio::test]
async fn an_issuer_not_chained_to_a_trust_anchor_is_refused() {
    let c = case().await;
    let stranger = TestIssuer::new(T0);
    let vp = stranger.vp_token(&c.req, &c.valid());
    c.refused(&vp, 40010, "trust").await;
}

#[tokio::test]
async fn a_bad_issuer_signature_is_refused() {
    let c = case().await;
    let p = Presentation {
        bad_issuer_signature: true,
        ..c.valid()
    };
    c.refused_presentation(&p, "issuer signature").await;
}

#[tokio::test]
async fn an_expired_attestation_is_refused() {
    let c = case().await;
    let p = Presentation {
        valid_from: T0 - 30 * DAY,
        valid_until: T0 - 1,
        ..c.valid()
    };
    c.refused_presentation(&p, "expired").await;
}

#[tokio::test]
async fn an_attestation_not_yet_valid_is_refused() {
    let c = case().await;
    let p = Presentation {
        valid_from: T0 + 60,
        valid_until: T0 + 30 * DAY,
        ..c.valid()
    };
    c.refused_presentation(&p, "not yet valid").await;
}

#[tokio::test]
async fn an_expired_document_signer_certificate_is_refused() {
    let c = case().await;
    let signer = c.issuer.with_signer_validity(T0 - 400 * DAY, T0 - DAY);
    let vp = signer.vp_token(&c.req, &c.valid());
    c.refused(&vp, 40010, "certificate").await;
}

#[tokio::test]
async fn a_document_signer_certificate_not_yet_valid_is_refused() {
    let c = case().await;
    let signer = c.issuer.with_signer_validity(T0 + DAY, T0 + 400 * DAY);
    let vp = signer.vp_token(&c.req, &c.valid());
    c.refused(&vp, 40010, "certificate").await;
}

#[tokio::test]
async fn a_document_of_another_doctype_is_refused() {
    let c = case().await;
    let p = Presentation {
        doc_type: "org.iso.18013.5.1.mDL".into(),
        ..c.valid()
    };
    c.refused_presentation(&p, "document type").await;
}

#[tokio::test]
async fn an_mso_of_another_doctype_is_refused() {
    let c = case().await;
    let p = Presentation {
        mso_doc_type: "org.iso.18013.5.1.mDL".into(),
        ..c.valid()
    };
    c.refused_presentation(&p, "mobile security object is not for")
        .await;
}

#[tokio::test]
async fn age_over_18_false_is_refused() {
    let c = case().await;
    let p = Presentation {
        claims: vec![("age_over_18".into(), false.into())],
        ..c.valid()
    };
    c.refused_presentation(&p, "age_over").await;
}

#[tokio::test]
async fn a_missing_age_claim_is_refused() {
    let c = case().await;
    let p = Presentation {
        claims: vec![],
        ..c.valid()
    };
    c.refused_presentation(&p, "age_over").await;
}

#[tokio::test]
async fn a_lower_age_claim_does_not_prove_the_minimum() {
    let c = case().await;
    let p = Presentation {
        claims: vec![("age_over_16".into(), true.into())],
        ..c.valid()
    };
    c.refused_presentation(&p, "age_over").await;
}

#[tokio::test]
async fn a_higher_age_claim_proves_the_minimum() {
    let c = case().await;
    let p = Presentation {
        claims: vec![("age_over_21".into(), true.into())],
        ..c.valid()
    };
    let vp = c.issuer.vp_token(&c.req, &p);
    assert_eq!(answer(&c.app, &c.req, &vp).await.status(), 200);
    let record = c.app.status_record(&c.site, &c.invite_id).await;
    assert_eq!(record["status"], "verified");
}

#[tokio::test]
async fn a_device_response_with_status_other_than_0_is_refused() {
    let c = case().await;
    let p = Presentation {
        status: 10,
        ..c.valid()
    };
    c.refused_presentation(&p, "status").await;
}

#[tokio::test]
async fn garbage_vp_tokens_are_refused() {
    let c = case().await;
    c.refused_only("not json", 40010, "vp_token is not json")
        .await;
    c.refused_only(r#"{"other": ["x"]}"#, 40010, "proof_of_age")
        .await;
    c.refused_only(r#"{"proof_of_age": []}"#, 40010, "proof_of_age")
        .await;
    c.refused_only(r#"{"proof_of_age": ["***"]}"#, 40010, "base64")
        .await;
    let cbor_garbage = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b"\xff\x00garbage");
    let vp = format!(r#"{{"proof_of_age": ["{cbor_garbage}"]}}"#);
    c.refused(&vp, 40010, "malformed device response").await;
}

#[tokio::test]
async fn a_form_without_state_or_vp_token_is_refused() {
    let c = case().await;
    let resp = answer_with_state(&c.app, &c.req, "", "x").await;
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
    c.still_pending_and_live().await;
}

/// Arbitrary bytes never crash the endpoint or cause a 5xx: every refusal is a JSON
/// error body (a deterministic generator, so a failure reproduces).
#[tokio::test]
async fn arbitrary_bytes_to_the_response_endpoint_get_a_json_error_never_a_5xx() {
    let c = case().await;
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
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        match status {
            // A flip in a part no rule covers (an unsigned version text, say) may pass.
            200 => assert!(body["redirect_uri"].is_string(), "{body}"),
            400 => assert!(
                body["error"].is_u64() && body["message"].is_string(),
                "{body}"
            ),
            other => panic!("round {round}: status {other}: {body}"),
        }
    }
}

fn form(state: &str, vp_token: &str) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("state", state)
        .append_pair("vp_token", vp_token)
        .finish()
        .into_bytes()
}
