//! The repository explains itself: code, tests and docs cite the pages under `docs/`
//! (never a section of a document outside the repository), every such citation names a
//! page and a heading that exist, and the reports stay short enough to read.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The section sign, written so that this file does not match its own check.
const SECTION_SIGN: char = '\u{a7}';

/// Every text file under `dir` (relative to the root), skipping build output and
/// installed npm packages (not the repository's: setup.sh installs them).
fn files_under(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![Path::new(ROOT).join(dir)];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in fs::read_dir(&path).unwrap() {
                let entry = entry.unwrap().path();
                if entry
                    .file_name()
                    .is_some_and(|n| n != "target" && n != "node_modules")
                {
                    stack.push(entry);
                }
            }
        } else if fs::read_to_string(&path).is_ok() {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(ROOT).unwrap().display().to_string()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

/// The files whose citations are checked: the code, the workspace's crates, the pages'
/// templates, the tests, the docs, the scripts and benchmarks, and the README.
fn cited_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "src",
        "crates",
        "templates",
        "tests",
        "docs",
        "examples",
        "scripts",
        "bench",
    ] {
        files.extend(files_under(dir));
    }
    files.push(Path::new(ROOT).join("README.md"));
    files.push(Path::new(ROOT).join("BENCHMARKS.md"));
    files
}

/// GitHub's anchor of a heading: lower case; letters, digits, `-` and `_` kept, spaces
/// made `-`, the rest dropped; a repeated anchor gets `-1`, `-2`, ….
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if in_fence {
            continue;
        }
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

/// The `page.md#anchor` targets a file names: `docs/<page>.md#<anchor>` anywhere, and in
/// Markdown also relative links `(page.md#anchor)`, each resolved to a path from the root.
fn citations(path: &Path, text: &str) -> Vec<(String, String)> {
    let is_markdown = path.extension().is_some_and(|e| e == "md");
    let dir = path
        .parent()
        .unwrap()
        .strip_prefix(ROOT)
        .unwrap()
        .to_path_buf();
    let mut out = Vec::new();
    for (at, _) in text.match_indices(".md#") {
        let start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "-_./".contains(c)))
            .map_or(0, |i| i + text[i..].chars().next().unwrap().len_utf8());
        let file = &text[start..at + 3];
        let anchor: String = text[at + 4..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let target = if file.starts_with("docs/") {
            PathBuf::from(file)
        } else if is_markdown && text[..start].ends_with('(') {
            dir.join(file)
        } else {
            continue;
        };
        // `docs/../README.md` and the like, written out.
        let mut parts: Vec<&str> = Vec::new();
        for part in target.to_str().unwrap().split('/') {
            match part {
                ".." => {
                    parts.pop();
                }
                "." | "" => {}
                p => parts.push(p),
            }
        }
        out.push((parts.join("/"), anchor));
    }
    out
}

#[test]
fn no_file_cites_a_section_of_a_document_outside_the_repository() {
    let mut found = Vec::new();
    for path in cited_files() {
        for (n, line) in read(&path).lines().enumerate() {
            let section = line
                .match_indices(SECTION_SIGN)
                .any(|(i, s)| line[i + s.len()..].starts_with(|c: char| c.is_ascii_digit()));
            if section || line.to_lowercase().contains("interface \u{a7}") {
                found.push(format!("{}:{}: {}", relative(&path), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "cite the page under docs/ and its anchor (docs/api.md#...), not a numbered \
         section:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_cited_docs_page_and_anchor_exists() {
    let mut broken = Vec::new();
    let mut checked = 0;
    // The journal is kept as it was written, links included.
    let journal = Path::new(ROOT).join("bench/journal");
    for path in cited_files()
        .into_iter()
        .filter(|p| !p.starts_with(&journal))
    {
        for (target, anchor) in citations(&path, &read(&path)) {
            checked += 1;
            let page = Path::new(ROOT).join(&target);
            if !page.is_file() {
                broken.push(format!("{}: {target} does not exist", relative(&path)));
            } else if !anchor.is_empty() && !anchors(&read(&page)).contains(&anchor) {
                broken.push(format!(
                    "{}: {target} has no heading #{anchor}",
                    relative(&path)
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} citations found: is the scan broken?"
    );
    assert!(
        broken.is_empty(),
        "broken citations:\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_follow_github() {
    let page =
        "# Top\n## Retrying a create safely (Idempotency-Key)\n```sh\n# not a heading\n```\n\
                ### `trust show`, reloading and expiry\n## An invite's lifecycle\n## Top\n";
    let got = anchors(page);
    for want in [
        "top",
        "retrying-a-create-safely-idempotency-key",
        "trust-show-reloading-and-expiry",
        "an-invites-lifecycle",
        "top-1",
    ] {
        assert!(got.contains(want), "{want} missing from {got:?}");
    }
    assert!(!got.contains("not-a-heading"));
}

/// The number of lines of a file, from the root.
fn line_count(path: &str) -> usize {
    read(&Path::new(ROOT).join(path)).lines().count()
}

#[test]
fn benchmarks_md_is_a_report_of_at_most_250_lines() {
    let lines = line_count("BENCHMARKS.md");
    assert!(
        lines <= 250,
        "BENCHMARKS.md has {lines} lines: keep the report (method, current results, the \
         floor, caveats, measured design choices, reproducing) and move dated entries and \
         dropped experiments to bench/journal/"
    );
}

#[test]
fn the_architecture_page_is_a_map_of_at_most_120_lines() {
    let lines = line_count("docs/architecture.md");
    assert!(
        lines <= 120,
        "docs/architecture.md has {lines} lines: keep it a map (layers, where things live, \
         one flow sketch per path); internals go to docs/internals-*.md, rules to \
         docs/invariants.md"
    );
}

/// Whether `text` names a tracker issue: the word (any case, or its plural), then spaces,
/// hyphens or hash signs, then a number; the forms are in the test below.
fn names_an_issue(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.match_indices("issue").any(|(at, word)| {
        let before = lower[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric()) {
            return false;
        }
        let rest = &lower[at + word.len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let rest = rest.trim_start_matches([' ', '-', '#']);
        rest.len() < lower[at + word.len()..].len()
            && rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[test]
fn no_file_names_a_tracker_issue() {
    // The tracker is not part of the repository: say what is meant instead.
    let mut found = Vec::new();
    for path in cited_files() {
        let name = relative(&path);
        if names_an_issue(&name) {
            found.push(format!("{name}: the file's name"));
        }
        for (n, line) in read(&path).lines().enumerate() {
            if names_an_issue(line) {
                found.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the issue tracker is not part of the repository: say what is meant instead of its \
         numbers:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_tracker_issue_is_recognised_in_its_forms() {
    let (issue, upper) = ("issue", "Issue");
    for named in [
        format!("({upper} 47)"),
        format!("{issue} 28"),
        format!("{issue}-28-distinct.md"),
        format!("({issue} #53)"),
        format!("{issue}s 45 and 47"),
    ] {
        assert!(names_an_issue(&named), "{named}");
    }
    for plain in [
        "issued 2026",
        "an issuer 4",
        "issue a key",
        "reissue 3",
        "vicalIssueID 42",
        "issue_id: 42",
    ] {
        assert!(!names_an_issue(plain), "{plain}");
    }
}
