//! What many operations share, added to the OpenAPI document in one place so that no
//! route can forget it: 503 wherever the database is asked, 429 (with `Retry-After`) on
//! the rate-limited client API, 408 and 413 wherever a body is read, the challenge of
//! every 401, and the exact syntax of every `inviteId` and `cursor` parameter (the
//! patterns of their parsers, so a document-valid value is never refused as malformed).

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterIn, PathItem};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Response, ResponseBuilder};

use crate::domain::invite::{INVITE_ID_MAX_LEN, INVITE_ID_MIN_LEN, INVITE_ID_PATTERN};
use crate::domain::listing::{CURSOR_MAX_LEN, CURSOR_MIN_LEN, CURSOR_PATTERN};

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

fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.post,
        &mut item.put,
        &mut item.patch,
        &mut item.delete,
    ]
    .into_iter()
    .flatten()
}

/// Adds the common answers to every operation of `api`.
pub fn add_common_responses(api: &mut OpenApi) {
    for (path, item) in api.paths.paths.iter_mut() {
        for operation in operations(item) {
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

/// Documents the `WWW-Authenticate` challenge every 401 carries: Basic for the client
/// API, Bearer for the verifier API.
pub fn add_challenges(api: &mut OpenApi) {
    for (path, item) in api.paths.paths.iter_mut() {
        for operation in operations(item) {
            let (challenge, realm) = if path.starts_with("/v1/verifier/") {
                ("Bearer", "agegate-verifier")
            } else {
                ("Basic", "agegate")
            };
            if let Some(RefOr::T(unauthorized)) = operation.responses.responses.get_mut("401") {
                let value = format!("{challenge} realm=\"{realm}\"");
                let schema = utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([value.clone()]));
                unauthorized.headers.insert(
                    "WWW-Authenticate".to_owned(),
                    HeaderBuilder::new()
                        .schema(schema)
                        .description(Some(format!("Always `{value}`")))
                        .build(),
                );
            }
        }
    }
}

/// Gives every `inviteId` path parameter and the list's `cursor` the exact syntax their
/// parsers accept. A well-formed id of no invite is 404 and a well-formed cursor is a
/// position, so every value the document allows is taken; any other is 404 (inviteId)
/// or 400 (cursor). The same syntax is promised for the `inviteId` and `nextCursor`
/// fields of every answer.
pub fn add_identifier_syntax(api: &mut OpenApi) {
    for item in api.paths.paths.values_mut() {
        for operation in operations(item) {
            for parameter in operation.parameters.iter_mut().flatten() {
                let syntax = match (parameter.name.as_str(), &parameter.parameter_in) {
                    ("inviteId", ParameterIn::Path) => INVITE_ID_SYNTAX,
                    ("cursor", ParameterIn::Query) => CURSOR_SYNTAX,
                    _ => continue,
                };
                if let Some(RefOr::T(Schema::Object(schema))) = parameter.schema.as_mut() {
                    restrict(schema, syntax);
                }
            }
        }
    }
    let schemas = api
        .components
        .iter_mut()
        .flat_map(|c| c.schemas.values_mut());
    for schema in schemas {
        let RefOr::T(Schema::Object(object)) = schema else {
            continue;
        };
        for (name, property) in object.properties.iter_mut() {
            let syntax = match name.as_str() {
                "inviteId" => INVITE_ID_SYNTAX,
                "nextCursor" => CURSOR_SYNTAX,
                _ => continue,
            };
            if let RefOr::T(Schema::Object(property)) = property {
                restrict(property, syntax);
            }
        }
    }
}

/// A pattern and the shortest and longest strings it allows.
const INVITE_ID_SYNTAX: (&str, usize, usize) =
    (INVITE_ID_PATTERN, INVITE_ID_MIN_LEN, INVITE_ID_MAX_LEN);
const CURSOR_SYNTAX: (&str, usize, usize) = (CURSOR_PATTERN, CURSOR_MIN_LEN, CURSOR_MAX_LEN);

fn restrict(
    schema: &mut utoipa::openapi::schema::Object,
    (pattern, min, max): (&str, usize, usize),
) {
    schema.pattern = Some(pattern.to_owned());
    schema.min_length = Some(min);
    schema.max_length = Some(max);
}
