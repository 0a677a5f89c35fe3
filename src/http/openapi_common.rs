//! Answers every operation of a kind can give, added to the OpenAPI document in one
//! place so that no route can forget one: 503 wherever the database is asked, 429 (with
//! `Retry-After`) on the rate-limited client API, 408 and 413 wherever a body is read.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder};

fn error_response(description: &str, retry_after: bool) -> RefOr<Response> {
    let mut builder = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build(),
    );
    if retry_after {
        builder = builder.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    utoipa::openapi::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::Type::Integer),
                )
                .description(Some("Whole seconds to wait before trying again"))
                .build(),
        );
    }
    RefOr::T(builder.build())
}

fn add(operation: &mut Operation, status: &str, description: &str, retry_after: bool) {
    operation
        .responses
        .responses
        .entry(status.to_owned())
        .or_insert_with(|| error_response(description, retry_after));
}

/// Adds the common answers to every operation of `api`.
pub fn add_common_responses(api: &mut OpenApi) {
    for (path, item) in api.paths.paths.iter_mut() {
        let operations = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            // Routes that answer errors as JSON (the gateway's pages answer in HTML).
            let json_api =
                path.starts_with("/v1/") || path == "/healthz" || path.ends_with("/openid4vp");
            if json_api && path != "/v1/openapi.json" {
                add(
                    operation,
                    "503",
                    "The database cannot be reached or refuses writes",
                    true,
                );
            }
            if path.starts_with("/v1/website/") {
                add(
                    operation,
                    "429",
                    "Rate limited (`--rate-limit`): too many requests for this site",
                    true,
                );
            }
            if json_api && operation.request_body.is_some() {
                add(operation, "408", "The body did not arrive in time", false);
                add(operation, "413", "Body larger than 64 KiB", false);
            }
        }
    }
}
