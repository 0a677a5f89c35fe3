//! Integration tests: one module per capability, each talking HTTP to a real server.

mod auth;
mod browser;
mod cli;
mod create_invite;
mod errors;
mod gateway;
mod get_invite;
mod helpers;
mod lifecycle;
mod openapi;
mod process;
mod receiver;
mod webhooks;
