use crate::helpers::spawn_app;
use agegate::http::error::ErrorCode;
use serde_json::Value;

async fn document(app: &crate::helpers::TestApp) -> Value {
    let resp = app
        .client
        .get(app.url("/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    resp.json().await.unwrap()
}

#[tokio::test]
async fn openapi_document_is_served_without_credentials_as_3_1() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["info"]["version"], "1.0.0");
    for schema in [
        "Invite",
        "InviteStatusRecord",
        "CreateInviteRequest",
        "ErrorBody",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema}"
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["basicAuth"]["scheme"],
        "basic"
    );
}

#[tokio::test]
async fn every_public_route_is_documented() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let expected = [
        ("post", "/v1/website/{siteId}/invite"),
        ("get", "/v1/website/{siteId}/invite"),
        ("get", "/v1/website/{siteId}/invite/{inviteId}"),
        ("delete", "/v1/website/{siteId}/invite/{inviteId}"),
        ("post", "/v1/website/{siteId}/invite/{inviteId}/cancel"),
        ("post", "/v1/verifier/invite/{inviteId}"),
        ("get", "/gateway/{inviteId}"),
        ("post", "/gateway/{inviteId}/approve"),
        ("get", "/healthz"),
        ("get", "/v1/openapi.json"),
    ];
    for (method, path) in expected {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} missing from the document"
        );
    }
}

#[tokio::test]
async fn every_documented_route_exists_on_the_server() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let paths = doc["paths"].as_object().unwrap();
    assert!(!paths.is_empty());
    for (path, item) in paths {
        let concrete = path
            .replace("{siteId}", "6f9619ff-8b86-d011-b42d-00cf4fc964ff")
            .replace("{inviteId}", "AAAAAAAAAAAAAAAAAAAAAA");
        for method in item.as_object().unwrap().keys() {
            let Ok(m) = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()) else {
                continue;
            };
            let resp = app
                .client
                .request(m, app.url(&concrete))
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            assert!(
                status != 405 && body["error"] != 40402,
                "{method} {path} is documented but not served ({status} {body})"
            );
        }
    }
}

#[tokio::test]
async fn the_document_carries_the_error_catalogue() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let description = doc["info"]["description"].as_str().unwrap();
    for code in ErrorCode::ALL {
        assert!(
            description.contains(&format!("| {} | {} |", code.code(), code.status().as_u16())),
            "catalogue lacks {}",
            code.code()
        );
    }
}

#[tokio::test]
async fn health_answers_200_when_the_database_does() {
    let app = spawn_app().await;
    let resp = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body, serde_json::json!({"status": "ok"}));
}

/// The parameter `name` of an operation.
fn parameter<'a>(op: &'a Value, name: &str) -> &'a Value {
    op["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no parameter {name}"))
}

fn statuses(op: &Value) -> Vec<&str> {
    let mut s: Vec<&str> = op["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    s.sort();
    s
}

#[tokio::test]
async fn idempotent_create_is_documented_exactly() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let create = &doc["paths"]["/v1/website/{siteId}/invite"]["post"];
    assert_eq!(
        create["requestBody"]["required"], false,
        "the body is optional"
    );
    assert_eq!(
        create["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/CreateInviteRequest"
    );
    let key = parameter(create, "Idempotency-Key");
    assert_eq!(key["in"], "header");
    assert_eq!(key["required"], false);
    assert_eq!(key["schema"]["type"], "string");
    assert_eq!(key["schema"]["minLength"], 1);
    assert_eq!(key["schema"]["maxLength"], 255);
    assert!(create["responses"]["200"]["headers"]["Idempotent-Replayed"].is_object());
    assert_eq!(
        statuses(create),
        ["200", "400", "401", "403", "408", "413", "422", "429", "503"]
    );
}

#[tokio::test]
async fn list_cancel_and_erase_are_documented_exactly() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let list = &doc["paths"]["/v1/website/{siteId}/invite"]["get"];
    let limit = parameter(list, "limit");
    assert_eq!(limit["in"], "query");
    assert_eq!(
        (
            &limit["schema"]["minimum"],
            &limit["schema"]["maximum"],
            &limit["schema"]["default"]
        ),
        (&1.into(), &500.into(), &50.into())
    );
    assert_eq!(parameter(list, "customId")["schema"]["maxLength"], 128);
    assert_eq!(
        parameter(list, "status")["schema"]["$ref"],
        "#/components/schemas/Status"
    );
    assert_eq!(
        doc["components"]["schemas"]["Status"]["enum"],
        serde_json::json!(["pending", "verified", "expired"])
    );
    assert_eq!(parameter(list, "cursor")["required"], false);
    assert_eq!(statuses(list), ["200", "400", "401", "403", "429", "503"]);
    let page = &doc["components"]["schemas"]["InviteList"];
    assert_eq!(page["required"], serde_json::json!(["data", "nextCursor"]));

    let cancel = &doc["paths"]["/v1/website/{siteId}/invite/{inviteId}/cancel"]["post"];
    assert!(cancel.get("requestBody").is_none());
    assert_eq!(
        statuses(cancel),
        ["200", "400", "401", "403", "404", "409", "429", "503"]
    );
    let erase = &doc["paths"]["/v1/website/{siteId}/invite/{inviteId}"]["delete"];
    assert_eq!(
        statuses(erase),
        ["204", "400", "401", "403", "404", "429", "503"]
    );
    assert!(erase["responses"]["204"].get("content").is_none());
}

/// Identifiers, bodies and challenges say exactly what the server takes and sends (the
/// patterns are the parsers', property-tested in `src/domain`).
#[tokio::test]
async fn identifiers_bodies_and_challenges_are_documented_exactly() {
    use agegate::domain::invite::INVITE_ID_PATTERN;
    use agegate::domain::listing::CURSOR_PATTERN;
    let app = spawn_app().await;
    let doc = document(&app).await;
    let list = &doc["paths"]["/v1/website/{siteId}/invite"]["get"];
    let cursor = &parameter(list, "cursor")["schema"];
    assert_eq!(cursor["pattern"], CURSOR_PATTERN);
    assert_eq!(
        (&cursor["minLength"], &cursor["maxLength"]),
        (&32.into(), &40.into())
    );
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if path.contains("{inviteId}") {
                let id = &parameter(op, "inviteId")["schema"];
                assert_eq!(id["pattern"], INVITE_ID_PATTERN, "{method} {path}");
            }
            let Some(unauthorized) = op["responses"].get("401") else {
                continue;
            };
            let challenge = if path.starts_with("/v1/verifier/") {
                "Bearer realm=\"agegate-verifier\""
            } else {
                "Basic realm=\"agegate\""
            };
            assert_eq!(
                unauthorized["headers"]["WWW-Authenticate"]["schema"]["enum"],
                serde_json::json!([challenge]),
                "{method} {path}"
            );
        }
    }
    // The verifier's body is required and names its one outcome; `{}` is refused.
    let verify = &doc["paths"]["/v1/verifier/invite/{inviteId}"]["post"];
    assert_eq!(verify["requestBody"]["required"], true);
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["VerifierReport"]["required"],
        serde_json::json!(["outcome"])
    );
    assert_eq!(schemas["Outcome"]["enum"], serde_json::json!(["verified"]));
    // Answers promise the same syntax.
    for (schema, field, pattern) in [
        ("Invite", "inviteId", INVITE_ID_PATTERN),
        ("InviteStatusRecord", "inviteId", INVITE_ID_PATTERN),
        ("InviteListItem", "inviteId", INVITE_ID_PATTERN),
        ("InviteList", "nextCursor", CURSOR_PATTERN),
    ] {
        assert_eq!(
            schemas[schema]["properties"][field]["pattern"], pattern,
            "{schema}.{field}"
        );
    }
    // customId is always sent, null when none was given.
    assert!(schemas["InviteStatusRecord"]["required"]
        .as_array()
        .unwrap()
        .contains(&"customId".into()));
}
