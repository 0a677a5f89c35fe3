//! The layers stay layered (docs/architecture.md#layers): read from `src/`, every
//! `crate::…` path is an import of one top-level module by another, and the graph they
//! make has no cycle; within a module, the files (and submodules) it is made of import
//! each other without a cycle either; the edges (`cli`, `http`) are imported only where
//! they belong; and every top-level module is named in the map, docs/architecture.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

#[path = "architecture/files.rs"]
mod files;
#[path = "architecture/map_and_edges.rs"]
mod map_and_edges;

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
