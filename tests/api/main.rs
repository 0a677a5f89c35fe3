//! Integration tests: one module per capability, each talking HTTP to a real server.

mod auth;
mod browser;
mod browser_eu_av;
mod cli;
mod create_invite;
mod errors;
mod eu_av;
mod eu_av_bench;
mod eu_av_rules;
mod gateway;
mod get_invite;
mod helpers;
mod lifecycle;
mod multinode;
mod openapi;
mod pg;
mod pg_faults;
mod process;
mod receiver;
mod wallet;
mod webhooks;
