//! agegate: a self-hostable age-verification invite service.
//!
//! Layout: `domain` holds the rules (no I/O); `store` persists behind a narrow trait;
//! `app` holds the operations the edges share; `http` and `cli` are the edges; `startup`
//! wires a server together.

#![forbid(unsafe_code)]

pub mod app;
pub mod cli;
pub mod clock;
pub mod config;
pub mod dcapi;
pub mod domain;
pub mod http;
pub mod jose;
pub mod kind;
pub mod mdoc;
pub mod metrics;
pub mod pki;
pub mod ratelimit;
pub mod receipt;
pub mod retention;
pub mod server;
pub mod startup;
pub mod store;
pub mod telemetry;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod trust;
pub mod trustlist;
pub mod webhooks;
pub mod zk;
