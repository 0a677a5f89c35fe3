//! The new kinds in operations (docs/wallets.md#for-the-operator): `statement` names them
//! with their docTypes, and SIGHUP reloads a Photo ID anchor file as any other.

use crate::helpers::{cli_site, client, gateway_page, now, spawn_app_with, temp_db, ServerProcess};
use crate::receipts::cli;
use crate::wallet::{AuthorizationRequest, Presentation, TestIssuer};
use crate::wallet::{PHOTO_ID_DRAFT_DOCTYPE, PHOTO_ID_NAMESPACE};

#[tokio::test]
async fn the_statement_names_google_id_and_photo_id_with_their_doc_types() {
    let issuer = TestIssuer::new(crate::helpers::T0);
    let app = spawn_app_with(|_| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("photo.pem");
    std::fs::write(&anchors, &issuer.ca_pem).unwrap();
    let (code, stdout, stderr) = cli(
        &app,
        &[
            "statement",
            "--photo-id-trust-anchors",
            anchors.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    for expected in [
        "**Photo ID (ISO/IEC 23220) (`photo-id`)**: on. The visitor's wallet presents an \
         ISO/IEC 18013-5 mdoc of docType `org.iso.23220.photoid.1` or \
         `org.iso.23220.photoID.1` over",
        "**Google Wallet ID pass (`google-id`)**: off (no trust anchors configured).",
    ] {
        assert!(stdout.contains(expected), "{expected:?} in\n{stdout}");
    }
}

#[tokio::test]
async fn sighup_reloads_the_photo_id_anchor_file() {
    let t = now();
    let dir = tempfile::tempdir().unwrap();
    let a = TestIssuer::named("agegate test Photo ID IACA A", t);
    let b = TestIssuer::named("agegate test Photo ID IACA B", t);
    let anchors = dir.path().join("photo.pem");
    std::fs::write(&anchors, &a.ca_pem).unwrap();
    let (_db_dir, db) = temp_db();
    let (site, _) = cli_site(&db, &["--accept", "photo-id"]);
    let server = ServerProcess::start(
        &db,
        &["--photo-id-trust-anchors", anchors.to_str().unwrap()],
    );
    let invite = server.new_invite(&site, None).await;
    let html = gateway_page(&client(), invite["url"].as_str().unwrap()).await;
    let req = AuthorizationRequest::from_gateway_html(&html);
    let answer = |issuer: &TestIssuer| {
        let p =
            Presentation::for_request(&req, t).of_doc(PHOTO_ID_DRAFT_DOCTYPE, PHOTO_ID_NAMESPACE);
        client()
            .post(&req.response_uri)
            .form(&issuer.answer_form(&req, &p))
            .send()
    };
    assert_eq!(answer(&b).await.unwrap().status(), 400, "B not trusted yet");
    std::fs::write(&anchors, &b.ca_pem).unwrap();
    server.signal("HUP");
    server.logged("SIGHUP: trust anchors reloaded").await;
    assert_eq!(
        answer(&a).await.unwrap().status(),
        400,
        "A no longer trusted"
    );
    assert_eq!(answer(&b).await.unwrap().status(), 200, "B trusted");
}
