//! Within a module, the files (and submodules) it is made of import each other without a
//! cycle: paths from `crate::`, `super::` and `self::` resolved to the files they name.

use super::*;
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
pub(super) fn code_of(text: &str) -> String {
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
