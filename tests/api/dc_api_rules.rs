//! Every way a Digital Credentials API answer can be wrong (docs/dc-api.md#the-answers), each on its
//! own: a 400 whose message names the reason (or 404 / 409 for the invite), the invite
//! still pending and the request still live — a valid answer is accepted afterwards.

use crate::dc_api::{post_dc_api, DcCase};
use crate::helpers::{assert_error, T0};
use crate::wallet::{annex_c_response, DcAnswer, DcWallet as _, TestIssuer};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};

impl DcCase {
    /// Posts `body`, expects `code` with a message naming `reason`, then checks that
    /// nothing moved: pending, and the request still takes a valid answer.
    async fn refused(&self, body: &Value, code: u32, reason: &str) {
        self.refused_only(body, code, reason).await;
        assert_eq!(self.status().await, "pending");
        let valid = self.r2_body(&self.valid(), &DcAnswer::default());
        assert_eq!(self.post(&valid).await.status(), 200, "request still live");
    }

    async fn refused_only(&self, body: &Value, code: u32, reason: &str) {
        let refused = assert_error(self.post(body).await, 400, code).await;
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.to_lowercase().contains(&reason.to_lowercase()),
            "message {message:?} names {reason:?}"
        );
    }

    fn body(&self, protocol: &str, data: Value) -> Value {
        json!({"state": self.page.state, "protocol": protocol, "data": data})
    }
}

const SIGNATURE: &str = "device signature does not match this request";

#[tokio::test]
async fn an_answer_made_for_another_origin_is_refused() {
    let other = DcAnswer {
        origin: Some("https://evil.example".into()),
        ..Default::default()
    };
    let c = DcCase::new().await;
    c.refused(&c.r1_body(&c.valid(), &other), 40010, SIGNATURE)
        .await;
    // Annex C binds the origin into the HPKE info too: it does not even open.
    let c = DcCase::new().await;
    c.refused(&c.r2_body(&c.valid(), &other), 40022, "does not open")
        .await;
}

#[tokio::test]
async fn an_answer_over_another_nonce_is_refused() {
    let c = DcCase::new().await;
    let other = DcAnswer {
        nonce: Some("another-nonce".into()),
        ..Default::default()
    };
    c.refused(&c.r1_body(&c.valid(), &other), 40010, SIGNATURE)
        .await;
}

#[tokio::test]
async fn an_answer_bound_to_or_encrypted_for_another_key_is_refused() {
    let c = DcCase::new().await;
    let thumbprint = DcAnswer {
        other_thumbprint: true,
        ..Default::default()
    };
    c.refused(&c.r1_body(&c.valid(), &thumbprint), 40010, SIGNATURE)
        .await;
    let recipient = DcAnswer {
        other_recipient: true,
        ..Default::default()
    };
    let c = DcCase::new().await;
    c.refused(
        &c.r1_body(&c.valid(), &recipient),
        40022,
        "does not decrypt",
    )
    .await;
    let c = DcCase::new().await;
    c.refused(&c.r2_body(&c.valid(), &recipient), 40022, "does not open")
        .await;
}

#[tokio::test]
async fn an_annex_c_answer_sealed_with_another_hpke_info_is_refused() {
    let c = DcCase::new().await;
    let info = DcAnswer {
        hpke_info: Some(b"not the session transcript".to_vec()),
        ..Default::default()
    };
    c.refused(&c.r2_body(&c.valid(), &info), 40022, "session transcript")
        .await;
}

#[tokio::test]
async fn an_unencrypted_openid4vp_answer_is_refused() {
    let c = DcCase::new().await;
    let clear = DcAnswer {
        unencrypted: true,
        ..Default::default()
    };
    c.refused(&c.r1_body(&c.valid(), &clear), 40022, "not encrypted")
        .await;
}

#[tokio::test]
async fn an_issuer_not_chained_to_a_trust_anchor_is_refused_by_both_protocols() {
    let c = DcCase::new().await;
    let rogue = TestIssuer::new(T0);
    let r1 = rogue.dc_openid4vp_data(&c.page.r1(), &c.origin(), &c.valid(), &DcAnswer::default());
    c.refused_only(
        &c.body("openid4vp-v1-unsigned", r1),
        40010,
        "issuer is not trusted",
    )
    .await;
    let r2 = rogue.dc_annex_c_data(&c.page.r2(), &c.origin(), &c.valid(), &DcAnswer::default());
    c.refused(&c.body("org-iso-mdoc", r2), 40010, "issuer is not trusted")
        .await;
}

#[tokio::test]
async fn a_false_age_claim_is_refused_by_both_protocols() {
    let c = DcCase::new().await;
    let under_age = c.valid().claim("age_over_18", false);
    c.refused_only(
        &c.r1_body(&under_age, &DcAnswer::default()),
        40010,
        "not true",
    )
    .await;
    c.refused(
        &c.r2_body(&under_age, &DcAnswer::default()),
        40010,
        "not true",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_protocol_is_refused_naming_it() {
    let c = DcCase::new().await;
    let r1 = c.r1_body(&c.valid(), &DcAnswer::default());
    let body = c.body("openid4vp", r1["data"].clone());
    c.refused(&body, 40021, "unknown protocol \"openid4vp\"")
        .await;
}

#[tokio::test]
async fn a_credential_that_was_not_requested_is_refused() {
    let c = DcCase::new().await;
    let other = DcAnswer {
        credential_id: Some("mdl".into()),
        ..Default::default()
    };
    c.refused(&c.r1_body(&c.valid(), &other), 40024, "\"mdl\"")
        .await;
}

#[tokio::test]
async fn garbage_answers_are_refused_naming_the_reason() {
    let c = DcCase::new().await;
    let r1 = "openid4vp-v1-unsigned";
    let r2 = "org-iso-mdoc";
    let cases: Vec<(&str, Value, u32, &str)> = vec![
        (r1, json!("text"), 40022, "not a JSON object"),
        (r1, json!({}), 40022, "no response"),
        (r1, json!({"response": 7}), 40022, "not a string"),
        (r1, json!({"response": "a.b.c"}), 40022, "not a jwe"),
        (
            r1,
            json!({"response": "x".repeat(2 * 1024 * 1024)}),
            40022,
            "larger than 2 MiB",
        ),
        (
            r1,
            json!({"error": "access_denied"}),
            40023,
            "access_denied",
        ),
        (r2, json!({"response": "***"}), 40022, "not base64url"),
        (
            r2,
            json!({"response": URL_SAFE_NO_PAD.encode(b"\xff\x00")}),
            40022,
            "not cbor",
        ),
        (
            r2,
            json!({"response": URL_SAFE_NO_PAD.encode(b"\x80")}),
            40022,
            "dcapi",
        ),
        (
            r2,
            json!({"response": annex_c_response(&[4; 65], &[0; 40])}),
            40022,
            "enc",
        ),
        (
            r2,
            json!({"error": "user_cancelled"}),
            40023,
            "user_cancelled",
        ),
    ];
    for (protocol, data, code, reason) in cases {
        // A response of 2 MiB does not fit the answer route's body limit with its framing.
        let body = c.body(protocol, data);
        if body.to_string().len() > 2 * 1024 * 1024 {
            let resp = c.post(&body).await;
            assert_error(resp, 413, 41302).await;
            continue;
        }
        c.refused_only(&body, code, reason).await;
    }
    // A DeviceResponse that is not CBOR, well encrypted: the link's parse error (docs/presentations.md#what-is-checked).
    let p = c.valid();
    let mut r2_garbage = c.r2_body(&p, &DcAnswer::default());
    let sealed = agegate::dcapi::hpke::seal(
        &mut rand::rngs::OsRng,
        &c.page.r2().recipient,
        &crate::wallet::cbor(&crate::wallet::dc_annex_c_transcript(
            &c.page.r2().encryption_info,
            &c.origin(),
        )),
        b"\xff garbage",
    )
    .unwrap();
    r2_garbage["data"] = json!({"response": annex_c_response(&sealed.enc, &sealed.ciphertext)});
    c.refused(&r2_garbage, 40010, "malformed device response")
        .await;
}

#[tokio::test]
async fn a_body_without_state_protocol_or_data_is_refused() {
    let c = DcCase::new().await;
    let valid = c.r2_body(&c.valid(), &DcAnswer::default());
    for field in ["state", "protocol", "data"] {
        let mut body = valid.clone();
        body.as_object_mut().unwrap().remove(field);
        assert_error(c.post(&body).await, 400, 40020).await;
    }
    let mut body = valid.clone();
    body["state"] = json!(5);
    assert_error(c.post(&body).await, 400, 40020).await;
    let send = |content_type: &'static str, body: &'static str| {
        c.app
            .client
            .post(format!("{}/dc-api", c.url))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    assert_error(send("application/json", "{").await.unwrap(), 400, 40001).await;
    assert_error(send("application/json", "[]").await.unwrap(), 400, 40002).await;
    assert_error(send("text/plain", "{}").await.unwrap(), 400, 40005).await;
    assert_error(send("application/json", "").await.unwrap(), 400, 40020).await;
    c.refused(
        &c.body("org-iso-mdoc", json!(null)),
        40022,
        "not a JSON object",
    )
    .await;
}

#[tokio::test]
async fn a_state_that_is_not_live_or_of_another_invite_is_refused() {
    let c = DcCase::new().await;
    // Another invite's live request on the same server, answered at this invite.
    let second = c.app.new_invite(&c.site, None).await;
    let second_url = second["url"].as_str().unwrap();
    let page = crate::dc_api::dc_page(&c.app, second_url).await;
    let data = c
        .issuer
        .dc_annex_c_data(&page.r2(), &c.origin(), &c.valid(), &DcAnswer::default());
    let foreign = json!({"state": page.state, "protocol": "org-iso-mdoc", "data": data});
    c.refused_only(&foreign, 40011, "state").await;
    assert_eq!(
        post_dc_api(&c.app, second_url, &foreign).await.status(),
        200
    );
    let mut unknown = c.r2_body(&c.valid(), &DcAnswer::default());
    unknown["state"] = json!("not-a-state");
    c.refused(&unknown, 40011, "state").await;
}

#[tokio::test]
async fn an_expired_invite_is_409_and_an_unknown_one_404() {
    let c = DcCase::new().await;
    let body = c.r1_body(&c.valid(), &DcAnswer::default());
    let unknown = c.url.replace(&c.invite_id, "AAAAAAAAAAAAAAAAAAAAAA");
    assert_error(post_dc_api(&c.app, &unknown, &body).await, 404, 40401).await;
    let bad = format!("{}/gateway/x", c.app.base);
    assert_error(post_dc_api(&c.app, &bad, &body).await, 404, 40401).await;
    c.app.clock.advance(86_400);
    assert_error(c.post(&body).await, 409, 40901).await;
}

/// Arbitrary bytes and mutated answers never crash the endpoint or cause a 5xx: every
/// answer is 200 or a JSON error (a deterministic generator, so a failure reproduces).
#[tokio::test]
async fn arbitrary_bodies_to_the_dc_api_endpoint_get_a_json_error_never_a_5xx() {
    let c = DcCase::new().await;
    let valid = [
        c.r1_body(&c.valid(), &DcAnswer::default()),
        c.r2_body(&c.valid(), &DcAnswer::default()),
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let body: Vec<u8> = match round % 4 {
            // Raw bytes as the whole body.
            0 => (0..(next() % 512)).map(|_| next() as u8).collect(),
            // A valid answer with random characters of its JSON text changed.
            1 | 2 => {
                let mut text = valid[round % 2].to_string().into_bytes();
                for _ in 0..=(next() % 6) {
                    let i = (next() as usize) % text.len();
                    text[i] = b" !\"#+-./0:=AZ[]_az{}~\\"[(next() as usize) % 22];
                }
                text
            }
            // A valid envelope around a DeviceResponse with random bytes flipped.
            _ => {
                let mut response = URL_SAFE_NO_PAD
                    .decode(valid[1]["data"]["response"].as_str().unwrap())
                    .unwrap();
                let i = (next() as usize) % response.len();
                response[i] ^= (next() as u8) | 1;
                let mut body = valid[1].clone();
                body["data"]["response"] = json!(URL_SAFE_NO_PAD.encode(response));
                body.to_string().into_bytes()
            }
        };
        let resp = c
            .app
            .client
            .post(format!("{}/dc-api", c.url))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        // The state was used up by an accepted answer: every later one is 40011.
        crate::helpers::assert_accepted_or_refused(resp, round).await;
    }
}
