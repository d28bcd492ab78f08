//! The shape of the code that the project keeps: no file in `src/`, `macros/src/` or `keys/src/` over
//! 1,000 lines, at most eight documented public modules at the crate root, no module of the library
//! that imports one that imports it back, and a short architecture page every module header names.

mod prereq;

use std::path::{Path, PathBuf};

use prompt_tester_testkit::child::repo_root;

/// The most lines a source file of the published crates holds: a longer one is split by concept (two
/// concepts, two files), never to pass this line.
const MAX_LINES: usize = 1000;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_source_file_of_the_published_crates_is_over_1000_lines() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["src", "macros/src", "keys/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(f, lines)| {
            format!(
                "{} ({lines} lines)",
                f.strip_prefix(&root).unwrap().display()
            )
        })
        .collect();
    assert!(long.is_empty(), "split by job: {long:?}");
}

/// The map stays a map: short enough to read first, every line readable in a terminal.
#[test]
fn the_architecture_page_is_at_most_150_lines_of_at_most_120_characters() {
    let page = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let lines: Vec<&str> = page.lines().collect();
    assert!(
        lines.len() <= 150,
        "docs/architecture.md has {} lines",
        lines.len()
    );
    let wide: Vec<usize> = (1..=lines.len())
        .filter(|&n| lines[n - 1].chars().count() > 120)
        .collect();
    assert!(
        wide.is_empty(),
        "docs/architecture.md: lines over 120 characters: {wide:?}"
    );
}

/// Each top-level module's `//!` header leads to the map, so a reader who lands in a module finds its layer.
#[test]
fn every_top_level_module_header_names_the_architecture_page() {
    let src = repo_root().join("src");
    // The crate root, its guide and the hidden modules for the project's tests and tools are no layer.
    let exempt = [
        "lib.rs",
        "guide",
        "testing.rs",
        "test_support.rs",
        "review_support.rs",
        "mcp_off.rs",
    ];
    let mut silent = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let file = if entry.path().is_dir() {
            entry.path().join("mod.rs")
        } else {
            entry.path()
        };
        if exempt.contains(&name.as_str())
            || !file.is_file()
            || !name.ends_with(".rs") && !entry.path().is_dir()
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("//!")).collect();
        if !header.iter().any(|l| l.contains("docs/architecture.md")) {
            silent.push(name);
        }
    }
    silent.sort();
    assert!(
        silent.is_empty(),
        "module headers without `docs/architecture.md`: {silent:?}"
    );
}

#[test]
fn the_crate_root_has_at_most_eight_documented_public_modules() {
    let lib = std::fs::read_to_string(repo_root().join("src/lib.rs")).unwrap();
    let lines: Vec<&str> = lib.lines().collect();
    let documented: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let name = line.strip_prefix("pub mod ")?;
            let name = name.trim_end_matches([';', ' ', '{']);
            let hidden = i > 0 && lines[i - 1].trim() == "#[doc(hidden)]";
            // Modules holding only guide text are named with a leading underscore (clap's `_tutorial`).
            (!hidden && !name.starts_with('_')).then_some(name)
        })
        .collect();
    assert!(documented.len() >= 5, "{documented:?}");
    assert!(
        documented.len() <= 8,
        "{} documented public modules: {documented:?}",
        documented.len()
    );
}

#[test]
fn no_module_imports_one_that_imports_it_back_nor_does_a_top_level_module() {
    let root = repo_root();
    let tool = root.join("../shared/tools/module-cycles.py");
    if !tool.is_file() {
        return prereq::missing(
            "no_module_imports_one_that_imports_it_back_nor_does_a_top_level_module",
            &format!("{} is absent", tool.display()),
            "the import-circle check is part of the shared tools beside the clone (../shared/tools)",
        );
    }
    let out = std::process::Command::new("python3")
        .arg(&tool)
        // `--top`: also the circles between the crate root's modules, made of arrows between files.
        .arg("--top")
        .arg("src")
        .current_dir(&root)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.to_lowercase().contains("no import circles"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
