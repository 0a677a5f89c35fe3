//! Every top-level module is named in the map (docs/architecture.md), and the edges
//! (`http/`, `cli/`) call the store only for the plain reads docs/invariants.md lists.

use super::files::code_of;
use super::*;
/// What the map names: every `` `name/` `` and `` `name.rs` `` in docs/architecture.md.
fn named_in_the_map() -> String {
    fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/architecture.md")).unwrap()
}

#[test]
fn every_top_level_module_is_in_the_map() {
    let map = named_in_the_map();
    let mut missing = Vec::new();
    for entry in fs::read_dir(SRC).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let named = if path.is_dir() {
            format!("`{name}/`")
        } else if name.ends_with(".rs") {
            format!("`{name}`")
        } else {
            continue;
        };
        if !map.contains(&named) {
            missing.push(format!("src/{name} (write {named})"));
        }
    }
    let crates = concat!(env!("CARGO_MANIFEST_DIR"), "/crates");
    for entry in fs::read_dir(crates).unwrap() {
        let name = entry.unwrap().file_name().to_str().unwrap().to_owned();
        if !map.contains(&format!("`crates/{name}/`")) {
            missing.push(format!("crates/{name} (write `crates/{name}/`)"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md's map does not name: {}",
        missing.join(", ")
    );
}

/// The store's methods an edge (`http/`, `cli/`) may call itself: reads that decide
/// nothing, each one call (docs/invariants.md, rule 0, says which and why). Everything
/// else, and every write, goes through `app/`.
const EDGE_READS: &[&str] = &[
    // The status read and each request's credential: the API's hottest paths, measured
    // (BENCHMARKS.md), one cached read each.
    "invite",
    "credential",
    // The gateway page's invite (its p99 is measured by bench/zk.sh).
    "gateway_invite",
    // Listing and showing, in the API, the console and the command line.
    "list_invites",
    "invite_events",
    "invite_detail",
    "deliveries",
    "receipt",
    "receipt_keys",
    "sites",
    "site",
    "tallies",
    "webhook_backlog",
    // `trust show`: the status lists kept in the database.
    "status_lists",
    // /healthz.
    "ping",
];

/// The store methods `code` calls on something named `store` (`state.store.invite(…)`,
/// across lines too), comments left out.
fn store_calls(code: &str) -> Vec<String> {
    let code = code_of(code);
    let mut out = Vec::new();
    for (at, _) in code.match_indices("store") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[at + "store".len()..].trim_start();
        let Some(rest) = rest.strip_prefix('.') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(name) = ident(rest) else {
            continue;
        };
        if rest[name.len()..].trim_start().starts_with('(')
            && !matches!(name.as_str(), "as_ref" | "clone")
        {
            out.push(name);
        }
    }
    out
}

#[test]
fn the_edges_change_nothing_but_through_the_application_layer() {
    let mut found = Vec::new();
    let mut read = 0;
    for file in sources() {
        if !matches!(module_of(&file).as_deref(), Some("http" | "cli")) {
            continue;
        }
        let code = fs::read_to_string(Path::new(SRC).join(&file)).unwrap();
        for call in store_calls(&code) {
            read += 1;
            if !EDGE_READS.contains(&call.as_str()) {
                found.push(format!("{}: store.{call}(…)", file.display()));
            }
        }
    }
    assert!(
        read > 5,
        "no store call found in the edges: is the scan broken?"
    );
    assert!(
        found.is_empty(),
        "an edge calls the store itself; put the operation in app/ (or, for a plain read, \
         add it to EDGE_READS and to docs/invariants.md's rule 0 with why):\n{}",
        found.join("\n")
    );
}

#[test]
fn store_calls_are_read_across_lines() {
    let code = "let r = state\n    .store\n    .invite(site, &id) // store.erase_invite(x)\n    .await?;\n\
        create_site(state.store.as_ref(), clock);\nlet s = restore.sites();\nstore.ping()";
    assert_eq!(store_calls(code), ["invite", "ping"]);
}
