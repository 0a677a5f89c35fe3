//! Every top-level module is named in the map (docs/architecture.md), and the edges
//! (`http/` with the console, `cli/`) hold application services, not the store: they
//! reach it only through `app::Services` and, for the hot reads docs/invariants.md
//! lists, `app::HotReads` (`serve` opens its database as a `startup::Database`, which it
//! can only hand on).

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

/// The store's methods an edge may call itself, through `app::HotReads` and nothing else:
/// the measured hot reads (docs/invariants.md, rule 0, says which and why). Everything
/// else, reads and writes, goes through the services of `app/`.
const HOT_READS: &[&str] = &["invite", "credential", "gateway_invite", "ping"];

/// The methods `code` calls on something named `name` (`state.reads.invite(…)`, across
/// lines too), comments left out; `as_ref` and `clone` hand it on and are not counted.
fn calls_on(name: &str, code: &str) -> Vec<String> {
    let code = code_of(code);
    let mut out = Vec::new();
    for (at, _) in code.match_indices(name) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[at + name.len()..].trim_start();
        let Some(rest) = rest.strip_prefix('.') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(method) = ident(rest) else {
            continue;
        };
        if rest[method.len()..].trim_start().starts_with('(')
            && !matches!(method.as_str(), "as_ref" | "clone")
        {
            out.push(method);
        }
    }
    out
}

/// The store's types `code` names that can reach the database: its capability traits
/// (`Store`, `InviteStore`, …) and backends (`SqliteStore`, …), every word ending in
/// `Store` but a variant (`SiteError::Store(e)`), comments left out.
fn store_types(code: &str) -> Vec<String> {
    let code = code_of(code);
    let mut out: Vec<String> = Vec::new();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = code.as_str();
    while let Some(start) = rest.find(is_word) {
        let word_len = rest[start..]
            .find(|c| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        rest = &rest[start + word_len..];
        if word.ends_with("Store") && !rest.starts_with('(') && !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
    }
    out
}

/// The text of the block `head` opens in `code`, to its closing brace.
fn block<'a>(code: &'a str, head: &str) -> &'a str {
    let at = code.find(head).unwrap_or_else(|| panic!("no `{head}`"));
    let mut depth = 0;
    for (i, c) in code[at..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => return &code[at..at + i],
            '}' => depth -= 1,
            _ => {}
        }
    }
    panic!("`{head}` is not closed")
}

#[test]
fn the_edges_hold_services_not_the_store() {
    let mut found = Vec::new();
    let mut hot = BTreeSet::new();
    for file in sources() {
        if !matches!(module_of(&file).as_deref(), Some("http" | "cli")) {
            continue;
        }
        let code = fs::read_to_string(Path::new(SRC).join(&file)).unwrap();
        for name in store_types(&code) {
            found.push(format!("{}: names {name}", file.display()));
        }
        for call in calls_on("store", &code) {
            found.push(format!("{}: store.{call}(…)", file.display()));
        }
        if code_of(&code).contains("store::open") {
            found.push(format!("{}: opens the store", file.display()));
        }
        hot.extend(calls_on("reads", &code));
    }
    assert!(
        found.is_empty(),
        "an edge holds or calls the store itself; hold app::Services and put the \
         operation or read in app/ (the hot reads go through app::HotReads):\n{}",
        found.join("\n")
    );
    let expected: BTreeSet<String> = HOT_READS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        hot, expected,
        "the edges' hot reads are not the ones docs/invariants.md lists: is the scan broken?"
    );
}

#[test]
fn the_hot_reads_are_all_an_edge_can_reach() {
    let code = code_of(&fs::read_to_string(Path::new(SRC).join("app/mod.rs")).unwrap());
    let reads: Vec<String> = block(&code, "impl HotReads {")
        .lines()
        .filter_map(|line| ident(line.strip_prefix("pub fn ")?))
        .collect();
    assert_eq!(
        reads, HOT_READS,
        "app::HotReads offers other calls than the hot reads docs/invariants.md lists"
    );
    for head in ["pub struct Services {", "pub struct HotReads {"] {
        let fields = block(&code, head);
        assert!(
            fields.contains("store: Arc<dyn Store>") && !fields.contains("pub store"),
            "`{head}`'s store must stay private to app/"
        );
    }
}

#[test]
fn calls_and_store_types_are_read_across_lines() {
    let code = "let r = state\n    .reads\n    .invite(site, &id) // store.erase_invite(x)\n    .await?;\n\
        create_site(state.store.as_ref(), clock);\nlet s = restore.sites();\nstore.ping()";
    assert_eq!(calls_on("reads", code), ["invite"]);
    assert_eq!(calls_on("store", code), ["ping"]);
    let code =
        "use crate::store::{AdminStore, StoredList};\n// a Store\nArc<dyn Store>, Arc<dyn Store>\n\
        Err(SiteError::Store(e)) => e,";
    assert_eq!(store_types(code), ["AdminStore", "Store"]);
}
