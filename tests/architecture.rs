//! The layers stay layered (docs/architecture.md#layers): read from `src/`, every
//! `crate::…` path is an import of one top-level module by another, and the graph they
//! make has no cycle; within a module, the files (and submodules) it is made of import
//! each other without a cycle either; the edges (`cli`, `http`) are imported only where
//! they belong; and every top-level module is named in the map, docs/architecture.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every `.rs` file under `src/`, as its path relative to `src/`.
fn sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(SRC)];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(SRC).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

/// The top-level module a file belongs to (`http/console/sites.rs` → `http`,
/// `startup.rs` → `startup`); `None` for the crate roots.
fn module_of(file: &Path) -> Option<String> {
    let first = file.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The top-level modules `code` names through `crate::` (`crate::a::b`, `crate::{a, b::c}`,
/// groups over several lines too), comments left out.
fn imports(code: &str) -> BTreeSet<String> {
    let code: Vec<&str> = code
        .lines()
        .map(str::trim_start)
        .filter(|line| !line.starts_with("//"))
        .map(|line| line.find(" //").map_or(line, |comment| &line[..comment]))
        .collect();
    let code = code.join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `other_crate::x` and a macro's `$crate::` are not paths of this crate.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        match rest.strip_prefix('{') {
            Some(group) => out.extend(group_heads(group)),
            None => out.extend(ident(rest)),
        }
    }
    out
}

/// The first name of each item of a `{…}` group (its opening brace already read).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item_start = true;
    for (i, c) in group.char_indices() {
        if at_item_start && !c.is_whitespace() {
            heads.extend(ident(&group[i..]));
            at_item_start = false;
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item_start = true,
            _ => {}
        }
    }
    heads
}

/// The identifier `text` starts with.
fn ident(text: &str) -> Option<String> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    (end > 0 && text[..end] != *"self").then(|| text[..end].to_owned())
}

/// For each file, the top-level modules it imports.
fn file_imports() -> Vec<(PathBuf, BTreeSet<String>)> {
    sources()
        .into_iter()
        .map(|file| {
            let code = fs::read_to_string(Path::new(SRC).join(&file)).unwrap();
            (file, imports(&code))
        })
        .collect()
}

/// The files a module declares under `#[cfg(test)]` (`mdoc/tests.rs`, `mdoc/testkit.rs`):
/// unit tests sit above every layer, so they may use the test kit that uses the module.
fn test_only_files() -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for file in sources() {
        let code = fs::read_to_string(Path::new(SRC).join(&file)).unwrap();
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        let lines: Vec<&str> = code.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if pair[0] != "#[cfg(test)]" {
                continue;
            }
            let decl = pair[1]
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                out.insert(dir.join(format!("{name}.rs")));
                out.insert(dir.join(name).join("mod.rs"));
            }
        }
    }
    out
}

/// Module → the modules it imports (itself left out), test-only files left out.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let tests = test_only_files();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, used) in file_imports() {
        if tests.contains(&file) {
            continue;
        }
        let Some(module) = module_of(&file) else {
            continue;
        };
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(used.into_iter().filter(|m| *m != module));
    }
    graph
}

/// One cycle of `graph`, as the path that closes it, if there is any.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|n| n == node).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

#[test]
fn module_imports_have_no_cycles() {
    let graph = module_graph();
    assert!(
        graph.len() > 10 && graph["app"].contains("store"),
        "the graph was not read: {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        let edges: Vec<String> = cycle
            .windows(2)
            .map(|pair| {
                let files: Vec<String> = file_imports()
                    .into_iter()
                    .filter(|(f, used)| {
                        module_of(f).as_deref() == Some(pair[0].as_str()) && used.contains(&pair[1])
                    })
                    .map(|(f, _)| f.display().to_string())
                    .collect();
                format!("{} → {} ({})", pair[0], pair[1], files.join(", "))
            })
            .collect();
        panic!(
            "the module imports make a cycle: {}\n{}",
            cycle.join(" → "),
            edges.join("\n")
        );
    }
}

#[test]
fn the_edges_are_imported_only_by_their_callers() {
    let mut misplaced = Vec::new();
    for (file, used) in file_imports() {
        let path = file.display().to_string();
        let module = module_of(&file);
        if used.contains("cli") && module.as_deref() != Some("cli") {
            misplaced.push(format!("{path} imports crate::cli"));
        }
        let may_use_http =
            matches!(module.as_deref(), Some("http" | "startup")) || path == "cli/serve.rs";
        if used.contains("http") && !may_use_http {
            misplaced.push(format!("{path} imports crate::http"));
        }
    }
    assert!(misplaced.is_empty(), "{}", misplaced.join("\n"));
}

#[test]
fn imports_are_read_from_paths_and_groups_not_comments() {
    let code = "use crate::{app::sites, store::{self, Store}};\n\
        use crate::{\n    clock::Clock,\n    receipt,\n};\n\
        // crate::cli in a comment\n\
        let x = crate::http::error::ErrorCode::X; // crate::webhooks\n\
        /// [`crate::mdoc`]\n\
        macro_rules! m { () => { $crate::clock::now() } }\n";
    let found: Vec<String> = imports(code).into_iter().collect();
    assert_eq!(found, ["app", "clock", "http", "receipt", "store"]);
}

#[test]
fn a_cycle_is_found_and_named() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    let cyclic = graph(&[("domain", "dcapi"), ("dcapi", "mdoc"), ("mdoc", "domain")]);
    assert_eq!(
        find_cycle(&cyclic).unwrap(),
        ["dcapi", "mdoc", "domain", "dcapi"]
    );
    let layered = graph(&[("app", "domain"), ("app", "mdoc"), ("mdoc", "kind")]);
    assert_eq!(find_cycle(&layered), None);
}

/// A file's module path: `app/verification/mod.rs` → `app::verification`,
/// `mdoc/cose.rs` → `mdoc::cose`, `lib.rs` → the crate root (empty).
fn module_path(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if !(stem == "mod" || (parts.is_empty() && matches!(stem, "lib" | "main"))) {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file without its comments and without an inline `#[cfg(test)] mod … {`
/// and what follows it (a file's own unit tests name `super::` as the file itself).
fn code_of(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim_start).peekable();
    while let Some(line) = lines.next() {
        if line == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|l| l.starts_with("mod ") && l.ends_with('{'))
        {
            break;
        }
        if line.starts_with("//") {
            continue;
        }
        out.push(line.find(" //").map_or(line, |comment| &line[..comment]));
    }
    out.join("\n")
}

/// The paths `code` names from `crate::`, `super::` or `self::`, each as the module path
/// it starts from and the names after it, `{…}` groups expanded
/// (`super::{a::X, b}` → `[super, a, X]`, `[super, b]`).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(head) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let root = head.trim_end_matches(':').to_owned();
            expand(&code[at + head.len()..], vec![root], &mut out);
        }
    }
    out
}

/// Reads `name::name::…` or `name::{…}` from the start of `rest` onto `prefix`.
fn expand(rest: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        expand(group[start..i].trim_start(), prefix.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(group[start..i].trim_start(), prefix.clone(), out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let Some(name) = ident(rest) else {
            out.push(prefix);
            return;
        };
        rest = &rest[name.len()..];
        prefix.push(name);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => {
                out.push(prefix);
                return;
            }
        }
    }
}

/// The module path a path names from `file`'s module, as far as it names modules
/// (`super::x::Y` from `a::b` → `a::x` when `a::x` is a module, `super::Y` → `a`).
fn resolve(from: &[String], path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut at: Vec<String> = from.to_vec();
    let mut names = path.iter().peekable();
    match names.next().map(String::as_str) {
        Some("crate") => at.clear(),
        Some("self") => {}
        Some("super") => {
            at.pop();
        }
        _ => unreachable!(),
    }
    while names.peek().is_some_and(|n| *n == "super") {
        names.next();
        at.pop();
    }
    for name in names {
        let mut next = at.clone();
        next.push(name.clone());
        if !modules.contains(&next) {
            break;
        }
        at = next;
    }
    at
}

/// For each module with submodules, the submodules and which of them each imports:
/// `app::verification` → `answering` → `{dc_api}` when a file of `answering` names a path
/// into `dc_api`. Test-only files are left out, as in the module graph.
fn file_graphs() -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let tests = test_only_files();
    let files: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|f| !tests.contains(f))
        .collect();
    let modules: BTreeSet<Vec<String>> = sources().iter().map(|f| module_path(f)).collect();
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let from = module_path(file);
        let code = code_of(&fs::read_to_string(Path::new(SRC).join(file)).unwrap());
        for path in paths(&code) {
            let to = resolve(&from, &path, &modules);
            // The longest module both lie in; the edge is between its children on each side.
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if shared < from.len() && shared < to.len() {
                let parent = from[..shared].to_vec();
                graphs
                    .entry(parent)
                    .or_default()
                    .entry(from[shared].clone())
                    .or_default()
                    .insert(to[shared].clone());
            }
        }
    }
    graphs
}

#[test]
fn the_files_of_a_module_import_each_other_without_a_cycle() {
    let graphs = file_graphs();
    assert!(
        graphs.len() > 5 && graphs[&vec!["trust".to_owned()]].contains_key("refresh"),
        "the files' graph was not read: {graphs:?}"
    );
    let mut cycles = Vec::new();
    for (module, graph) in &graphs {
        if let Some(cycle) = find_cycle(graph) {
            let name = if module.is_empty() {
                "the crate".to_owned()
            } else {
                module.join("::")
            };
            cycles.push(format!("{name}: {}", cycle.join(" → ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "files of one module import each other in a circle (move what both need to a file \
         they both import, or below):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn paths_are_resolved_to_the_files_they_name() {
    let code = "use super::{dc_api::{open, Opened}, Outcome};\nuse crate::trust::load::X;\n\
        let y = self::inner::f(); // super::hidden\n";
    let modules: BTreeSet<Vec<String>> = [
        vec!["app"],
        vec!["app", "verification"],
        vec!["app", "verification", "dc_api"],
        vec!["app", "verification", "answering"],
        vec!["app", "verification", "answering", "inner"],
        vec!["trust"],
        vec!["trust", "load"],
    ]
    .into_iter()
    .map(|m| m.into_iter().map(str::to_owned).collect())
    .collect();
    let from: Vec<String> = ["app", "verification", "answering"]
        .map(str::to_owned)
        .to_vec();
    let found: BTreeSet<String> = paths(&code_of(code))
        .iter()
        .map(|p| resolve(&from, p, &modules).join("::"))
        .collect();
    let want: BTreeSet<String> = [
        "app::verification::dc_api",
        "app::verification",
        "trust::load",
        "app::verification::answering::inner",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(found, want);
}

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
