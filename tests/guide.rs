//! The front page and the guide keep their links and their examples working. The guide's chapters
//! (`src/guide/*.md`) are rustdoc modules (`prompt_tester::_guide::*`), so their links must work on
//! docs.rs, where only the package's files exist: a chapter links to another with a reference link whose
//! definition at its end names the file (for GitHub), and `src/guide/links.md`, included first, defines
//! the same label as an intra-doc link (for rustdoc). These tests resolve every relative and intra-doc
//! link without the network (external links are not followed); `cargo doc` with `-D warnings` resolves
//! the intra-doc links to items.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use prompt_tester_testkit::child::repo_root;

/// A markdown text without its fenced code blocks and code spans, where nothing is a link.
fn without_code(text: &str) -> String {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    // A code span opens with a run of backticks and closes at the next run of as many.
    let mut out = String::new();
    let mut rest = prose.as_str();
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..open]);
        let run = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let after = &rest[open + run..];
        let fence = "`".repeat(run);
        let mut close = None;
        let mut from = 0;
        while let Some(at) = after[from..].find(&fence) {
            let at = from + at;
            let longer = after[at + run..].starts_with('`');
            if !longer && (at == 0 || !after[..at].ends_with('`')) {
                close = Some(at);
                break;
            }
            from = at + after[at..].len() - after[at..].trim_start_matches('`').len();
        }
        match close {
            Some(at) => rest = &after[at + run..],
            None => {
                out.push_str(&rest[open..open + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A heading's anchor as rustdoc (and GitHub) makes it: letters, digits, `-` and `_` kept (lowercased),
/// ASCII spaces as `-`, the rest dropped; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for line in without_fences(text).lines() {
        let Some(title) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if !line.starts_with('#') {
            continue;
        }
        let slug: String = title
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                ' ' => Some('-'),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        found.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    found
}

/// A markdown text without its fenced code blocks (a `# comment` in one is not a heading).
fn without_fences(text: &str) -> String {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// What a markdown text links to.
#[derive(Default, Debug)]
struct Links {
    /// `[text](dest)` and `![alt](dest)`.
    inline: Vec<String>,
    /// The labels of `[text][label]` and of `[label]` where `label` is defined, lowercased.
    references: BTreeSet<String>,
    /// `[label]: dest` lines, by lowercased label.
    definitions: BTreeMap<String, String>,
}

fn links(text: &str, known: &BTreeSet<String>) -> Links {
    let prose = without_code(text);
    let mut found = Links::default();
    for line in prose.lines() {
        if let Some((label, dest)) = line
            .strip_prefix('[')
            .and_then(|l| l.split_once("]: "))
            .filter(|(label, _)| !label.contains(']'))
        {
            found
                .definitions
                .insert(label.to_lowercase(), dest.trim().to_string());
        }
    }
    let chars: Vec<char> = prose.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '[' || (i > 0 && chars[i - 1] == '\\') {
            i += 1;
            continue;
        }
        let Some(len) = chars[i + 1..].iter().position(|&c| c == ']') else {
            break;
        };
        let inner: String = chars[i + 1..i + 1 + len].iter().collect();
        let after = i + 2 + len;
        let at_line_start = i == 0 || chars[i - 1] == '\n';
        if inner.contains('[') {
            // `[[cases]]` and the like: not a link.
            i += 1;
            continue;
        }
        match chars.get(after) {
            Some('(') => {
                let end = chars[after..].iter().position(|&c| c == ')').unwrap_or(0);
                found
                    .inline
                    .push(chars[after + 1..after + end].iter().collect());
                i = after + end;
            }
            Some('[') => {
                let end = chars[after..].iter().position(|&c| c == ']').unwrap_or(0);
                let label: String = chars[after + 1..after + end].iter().collect();
                found.references.insert(label.to_lowercase());
                i = after + end;
            }
            Some(':') if at_line_start => i = after,
            _ => {
                if known.contains(&inner.to_lowercase())
                    || found.definitions.contains_key(&inner.to_lowercase())
                {
                    found.references.insert(inner.to_lowercase());
                }
                i = after;
            }
        }
    }
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn guide_dir() -> PathBuf {
    repo_root().join("src/guide")
}

/// The chapters, by module name (`_guide` for the index), as `src/guide/mod.rs` declares them.
fn chapters() -> BTreeMap<String, String> {
    let module = read(&guide_dir().join("mod.rs"));
    let mut found = BTreeMap::new();
    let mut name = "_guide".to_string();
    for line in module.lines() {
        if let Some(m) = line.trim().strip_prefix("pub mod ") {
            name = m.trim_end_matches([' ', '{']).to_string();
        }
        if let Some(file) = line
            .trim()
            .strip_prefix("#![doc = include_str!(\"")
            .and_then(|f| f.strip_suffix("\")]"))
            .filter(|f| *f != "links.md")
        {
            found.insert(name.clone(), file.to_string());
        }
    }
    found
}

/// `src/guide/links.md`: each label's intra-doc destination.
fn intra_doc_definitions() -> BTreeMap<String, String> {
    links(&read(&guide_dir().join("links.md")), &BTreeSet::new()).definitions
}

/// The file and anchor an intra-doc link to the guide leads to: `crate::_guide::keys#x` is
/// `("keys.md", Some("x"))`; `None` for a link to an item, which rustdoc checks.
fn guide_target(dest: &str) -> Option<(String, Option<String>)> {
    let (path, anchor) = match dest.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor.to_string())),
        None => (dest, None),
    };
    let module = path.strip_prefix("crate::_guide")?;
    let chapters = chapters();
    let name = module.strip_prefix("::").unwrap_or("_guide");
    let file = chapters
        .get(name)
        .unwrap_or_else(|| panic!("{dest}: src/guide/mod.rs declares no chapter `{name}`"));
    Some((file.clone(), anchor))
}

/// `anchor` is a heading of the guide's `file`, or the problem.
fn check_anchor(problems: &mut Vec<String>, from: &str, file: &Path, anchor: Option<&str>) {
    if let Some(anchor) = anchor
        && !anchors(&read(file)).contains(anchor)
    {
        problems.push(format!(
            "{from}: no heading #{anchor} in {}",
            file.display()
        ));
    }
}

#[test]
fn every_chapter_is_a_module_and_every_module_a_chapter() {
    let declared: BTreeSet<String> = chapters().into_values().collect();
    let files: BTreeSet<String> = std::fs::read_dir(guide_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md") && name != "links.md")
        .collect();
    assert_eq!(
        declared, files,
        "src/guide/mod.rs and the chapters in src/guide/"
    );
    assert!(declared.len() >= 15, "{declared:?}");
}

#[test]
fn the_intra_doc_definitions_lead_to_chapters_and_their_headings() {
    let mut problems = Vec::new();
    let definitions = intra_doc_definitions();
    assert!(definitions.len() >= 15, "{definitions:?}");
    for (label, dest) in &definitions {
        match guide_target(dest) {
            Some((file, anchor)) => check_anchor(
                &mut problems,
                &format!("links.md [{label}]"),
                &guide_dir().join(file),
                anchor.as_deref(),
            ),
            None => problems.push(format!(
                "links.md [{label}]: {dest} is not a chapter of the guide"
            )),
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every link of every chapter works on docs.rs and on GitHub.
#[test]
fn every_link_of_the_guide_resolves() {
    let definitions = intra_doc_definitions();
    let labels: BTreeSet<String> = definitions.keys().cloned().collect();
    let mut problems = Vec::new();
    for file in chapters().into_values() {
        let path = guide_dir().join(&file);
        let text = read(&path);
        let found = links(&text, &labels);
        for dest in &found.inline {
            if dest.starts_with("https://") || dest.starts_with("http://") {
                continue;
            }
            if let Some(anchor) = dest.strip_prefix('#') {
                check_anchor(
                    &mut problems,
                    &format!("{file} ({dest})"),
                    &path,
                    Some(anchor),
                );
            } else if let Some((target, anchor)) = guide_target(dest) {
                check_anchor(
                    &mut problems,
                    &format!("{file} ({dest})"),
                    &guide_dir().join(target),
                    anchor.as_deref(),
                );
            } else if !dest.starts_with("crate::") {
                problems.push(format!(
                    "{file}: ({dest}) is dead on docs.rs: link a chapter with a reference link \
                     defined in links.md, or an item with an intra-doc link (crate::...)"
                ));
            }
        }
        for label in &found.references {
            let Some(intra) = definitions.get(label) else {
                problems.push(format!("{file}: [{label}] is not defined in links.md"));
                continue;
            };
            let (target, anchor) = guide_target(intra).expect("checked above");
            let github = format!(
                "{target}{}",
                anchor.map(|a| format!("#{a}")).unwrap_or_default()
            );
            match found.definitions.get(label) {
                Some(own) if *own == github => {}
                own => problems.push(format!(
                    "{file}: [{label}] needs the definition `[{label}]: {github}` at its end (for GitHub), \
                     has {own:?}"
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The package's `include` patterns (`/src/**/*.rs`, `/README.md`) hold `path` (relative to the root).
fn packaged(path: &str) -> bool {
    fn matches(pattern: &[&str], path: &[&str]) -> bool {
        match (pattern.first(), path.first()) {
            (None, None) => true,
            (Some(&"**"), _) => {
                matches(&pattern[1..], path) || (!path.is_empty() && matches(pattern, &path[1..]))
            }
            (Some(p), Some(part)) => {
                let ok = match p.split_once('*') {
                    Some((before, after)) => {
                        part.len() >= before.len() + after.len()
                            && part.starts_with(before)
                            && part.ends_with(after)
                    }
                    None => p == part,
                };
                ok && matches(&pattern[1..], &path[1..])
            }
            _ => false,
        }
    }
    let manifest: toml::Table = toml::from_str(&read(&repo_root().join("Cargo.toml"))).unwrap();
    let include = manifest["package"]["include"].as_array().unwrap();
    let parts: Vec<&str> = path.split('/').collect();
    include.iter().any(|p| {
        let pattern: Vec<&str> = p
            .as_str()
            .unwrap()
            .trim_start_matches('/')
            .split('/')
            .collect();
        matches(&pattern, &parts)
    })
}

/// The front page's links lead to files the published package holds (the guide's chapters), and on
/// docs.rs, where it is the crate's page, each label leads to the same chapter's module.
#[test]
fn every_link_of_the_front_page_resolves_in_the_package_and_on_docs_rs() {
    let definitions = intra_doc_definitions();
    let labels: BTreeSet<String> = definitions.keys().cloned().collect();
    let root = repo_root();
    let readme = read(&root.join("README.md"));
    let found = links(&readme, &labels);
    assert!(found.references.len() >= 10, "{found:?}");
    let mut problems = Vec::new();
    for dest in &found.inline {
        if let Some(anchor) = dest.strip_prefix('#') {
            // The README is the crate's page on docs.rs too: its own headings are there.
            check_anchor(
                &mut problems,
                &format!("README.md ({dest})"),
                &root.join("README.md"),
                Some(anchor),
            );
        } else if !dest.starts_with("https://") && !dest.starts_with("http://") {
            problems.push(format!(
                "README.md: ({dest}): use a reference link, defined in the README and in links.md"
            ));
        }
    }
    for label in &found.references {
        let (Some(own), Some(intra)) = (found.definitions.get(label), definitions.get(label))
        else {
            problems.push(format!(
                "README.md: [{label}] is not defined both in the README and in links.md"
            ));
            continue;
        };
        let (file, anchor) = match own.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (own.as_str(), None),
        };
        if !root.join(file).is_file() {
            problems.push(format!("README.md: [{label}]: {file} does not exist"));
            continue;
        }
        if !packaged(file) {
            problems.push(format!(
                "README.md: [{label}]: the package does not hold {file} (Cargo.toml's include)"
            ));
        }
        check_anchor(
            &mut problems,
            &format!("README.md [{label}]"),
            &root.join(file),
            anchor,
        );
        let (target, intra_anchor) = guide_target(intra).expect("a chapter");
        if format!("src/guide/{target}") != file || intra_anchor.as_deref() != anchor {
            problems.push(format!(
                "README.md: [{label}] leads to {own}, but on docs.rs to {intra}"
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_include_patterns_are_read_as_cargo_reads_them() {
    assert!(
        packaged("src/lib.rs") && packaged("src/guide/mod.rs") && packaged("src/guide/keys.md")
    );
    assert!(
        packaged("README.md") && !packaged("docs/developing.md") && !packaged("src/guide/x.txt")
    );
}

/// The link reader finds what it should, and nothing in code.
#[test]
fn links_are_read_outside_code_only() {
    let known: BTreeSet<String> = ["keys".to_string()].into();
    let text = "See [Keys][keys], [keys], [a](#x) and `[keys]`, `` `[keys]` `` and [[cases]].\n\n```toml\n[keys]\n```\n\n[keys]: keys.md\n";
    let found = links(text, &known);
    assert_eq!(found.inline, ["#x"]);
    assert_eq!(found.references, ["keys".to_string()].into());
    assert_eq!(found.definitions["keys"], "keys.md");
    let headings = anchors("# A b\n## `#[prompt_test]` keys\n```\n# not a heading\n```\n## A b\n");
    assert_eq!(
        headings,
        ["a-b", "a-b-1", "prompt_test-keys"]
            .map(String::from)
            .into()
    );
}

/// The nextest configuration the CI chapter tells users to copy is the one this repository runs.
#[test]
fn the_guide_s_nextest_configuration_is_the_repository_s() {
    let shipped = read(&repo_root().join(".config/nextest.toml"));
    let ci = read(&guide_dir().join("ci.md"));
    assert!(
        ci.contains(&format!("```toml\n{shipped}```")),
        "src/guide/ci.md should show .config/nextest.toml as it is:\n{shipped}"
    );
}

/// The front page's suite twin is a suite the harness reads without a problem (beside it, a broken
/// suite is found: the folder is read).
#[test]
fn the_front_page_s_suite_is_valid() {
    let readme = read(&repo_root().join("README.md"));
    let (_, rest) = readme
        .split_once("```toml\n# prompt-tests/summary.evals.toml\n")
        .expect("the README's suite twin");
    let suite = &rest[..rest.find("```").unwrap()];
    let root = std::env::temp_dir().join(format!("prompt-tester-guide-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("prompt-tests")).unwrap();
    std::fs::write(root.join("prompt-tests/summary.evals.toml"), suite).unwrap();
    std::fs::write(
        root.join("prompt-tests/zz_broken.evals.toml"),
        "prompt = 1\n",
    )
    .unwrap();
    let problems = prompt_tester::testing::readers::listing(&root);
    let _ = std::fs::remove_dir_all(&root);
    let problems = problems.expect("the folder lists");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("zz_broken"), "{problems:#?}");
}

/// The README is a front page: the guide holds the rest.
#[test]
fn the_front_page_stays_at_most_200_lines() {
    let lines = read(&repo_root().join("README.md")).lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: the front page stays at most 200 (move detail into the guide)"
    );
}

/// Where the guide names the cassette format's current version, it is the one files are written in.
#[test]
fn the_guide_names_the_cassette_format_version_files_are_written_in() {
    let mut named = Vec::new();
    for (_, file) in chapters() {
        let text = read(&guide_dir().join(&file)).replace('\n', " ");
        for (at, _) in text.match_indices("current version (") {
            let digits: String = text[at + "current version (".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            named.push((file.clone(), digits.parse::<u32>().ok()));
        }
    }
    assert!(!named.is_empty(), "the guide names the current version");
    let code = prompt_tester::testing::cassette::FORMAT_VERSION;
    for (file, version) in named {
        assert_eq!(
            version,
            Some(code),
            "{file} names the current cassette format version"
        );
    }
}
