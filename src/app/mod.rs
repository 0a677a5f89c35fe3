//! The application layer: the operations the edges share. The command line, the HTTP API
//! and the console call these; they call the domain rules, the store's capability traits
//! and the clock, and answer with typed errors each edge turns into its own words (an
//! exit message, a JSON error body, a console page). Nothing here knows HTTP or clap.

pub mod accounts;
pub mod invites;
pub mod keys;
pub mod sessions;
pub mod sites;
pub mod verification;
pub mod wallet_requests;

pub use sites::{create_site, CreatedSite, SiteError, SiteSettings};
