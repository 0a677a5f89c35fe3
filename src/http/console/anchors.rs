//! The trust anchors the server holds, as `trust show` lists them ([`crate::trust`]).

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::session::Operator;
use super::{page, ConsoleError, ConsoleState, Layout};
use crate::trust::{self, AnchorListing};

#[derive(Template)]
#[template(path = "console/anchors.html")]
struct AnchorsPage {
    layout: Layout,
    anchors: Vec<AnchorListing>,
}

pub async fn show(
    State(state): State<ConsoleState>,
    operator: Operator,
) -> Result<Response, ConsoleError> {
    let html = AnchorsPage {
        layout: operator.layout(None),
        anchors: trust::list(&state.trust.current().sources, state.clock.now()),
    }
    .render();
    Ok(page(StatusCode::OK, html))
}
