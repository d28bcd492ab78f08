//! The README's first five minutes, done as a newcomer does them: `cargo new`, the quick start's
//! `Cargo.toml` lines (with the path form of the dependency, pointing at this checkout), its
//! `prompt-tests/main.rs` and `prompt-tester.toml`, all taken from README.md; then the README's record
//! command against a fake Gemini and Anthropic on 127.0.0.1, and its replay command with the fake stopped
//! and no key. It fails when the README's code or commands stop working.
//!
//! The new crate builds in `target/walkthrough/` (shared by every run, so only the first one compiles the
//! dependencies) with cargo offline: it copies this checkout's `Cargo.lock`, whose crates `cargo test`
//! has already fetched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Wire, child};
use serde_json::{Value, json};

const README: &str = include_str!("../README.md");
/// The fake key the README's `...` placeholders stand for.
const KEY: &str = "walkthrough-key";

/// The code blocks of the README's quick start, as (language, text).
fn quick_start_blocks() -> Vec<(&'static str, &'static str)> {
    let start = README
        .find("\n## Quick start\n")
        .expect("README.md has a `## Quick start` section");
    let section = &README[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut blocks = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let (lang, body) = after.split_once('\n').expect("a fence line");
        let close = body.find("\n```").expect("a closed code block");
        blocks.push((lang.trim(), &body[..close + 1]));
        rest = &body[close + 4..];
    }
    blocks
}

/// The one quick-start block of `lang` for which `pick` holds.
fn block(lang: &str, pick: impl Fn(&str) -> bool) -> &'static str {
    let found: Vec<&str> = quick_start_blocks()
        .into_iter()
        .filter(|(l, text)| l.split(',').next() == Some(lang) && pick(text))
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one such ```{lang} block in the quick start, found {found:?}"
    );
    found[0]
}

/// A Rust block as rustdoc compiles it: `# ` lines are hidden, not removed.
fn as_compiled(rust: &str) -> String {
    rust.lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(hidden) => hidden,
            None if line == "#" => "",
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A README command line: its `NAME=value` prefixes (`...` is a key: the fake one) and its words.
fn parse_command(line: &str) -> (Vec<(String, String)>, Vec<String>) {
    let line = line.split(" #").next().unwrap_or(line).trim();
    let mut env = Vec::new();
    let mut words = line.split_whitespace().peekable();
    while let Some((name, value)) = words.peek().and_then(|w| w.split_once('=')) {
        let value = if value == "..." { KEY } else { value };
        env.push((name.to_string(), value.to_string()));
        words.next();
    }
    (env, words.map(str::to_string).collect())
}

/// A directory removed when the test ends, pass or fail.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cargo` (the one running this test) in `dir`, isolated from this process's provider and harness
/// settings, offline, building in the shared walkthrough target directory.
fn cargo(dir: &Path, env: &[(String, String)], args: &[String]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp is inside the target directory")
        .join("walkthrough");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(args).current_dir(dir);
    for (name, _) in std::env::vars() {
        let provider = ["ANTHROPIC_", "GOOGLE_", "GEMINI_", "OPENAI_"]
            .iter()
            .any(|p| name.starts_with(p));
        if provider
            || name.starts_with("PROMPT_TESTER_")
            || name.starts_with("NEXTEST")
            || name == "RUST_TEST_THREADS"
        {
            cmd.env_remove(&name);
        }
    }
    cmd.env("CARGO_TARGET_DIR", target)
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1");
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().expect("cargo runs")
}

/// The outcome libtest printed for `trial` (`ok`, `FAILED`, `ignored`, ...), if it printed one.
fn outcome(output: &Output, trial: &str) -> Option<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .find(|(name, _)| name.trim_end() == trial)
        .map(|(_, outcome)| outcome.to_string())
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Gemini answers the subject call; Anthropic, the judge, answers with a verdict.
fn respond(request: &CapturedRequest) -> Reply {
    match request.wire() {
        Some(Wire::Anthropic) => Reply::structured(
            request,
            &json!({
                "question_type": "factual_presence",
                "reasoning": "The summary names Alice as the lead.",
                "snippet": "Alice leads Project Phoenix",
                "answer": "yes"
            }),
        ),
        _ => Reply::answer(
            request,
            "Alice leads Project Phoenix, which has a $2M budget and a Q3 deadline.",
        ),
    }
}

#[test]
fn a_new_crate_follows_the_quick_start_records_then_replays_offline() {
    let cargo_toml = block("toml", |t| t.contains("[dev-dependencies]"));
    let config = block("toml", |t| !t.contains("[dev-dependencies]"));
    let main_rs = as_compiled(block("rust", |_| true));
    let commands = block("sh", |t| t.contains("PROMPT_TESTER_CASSETTE=record"));

    let dir = TempDir(
        std::env::temp_dir().join(format!("prompt-tester-walkthrough-{}", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let new = cargo(
        &dir.0,
        &[],
        &["new", "--lib", "--vcs", "none", "newcomer"].map(String::from),
    );
    assert!(new.status.success(), "cargo new: {}", text(&new));
    let krate = dir.0.join("newcomer");

    // The README's dependency line is the published one; a newcomer trying a checkout uses the path form.
    let mut readme_manifest: toml::Table =
        toml::from_str(cargo_toml).expect("the README's Cargo.toml lines parse");
    let deps = readme_manifest
        .get_mut("dev-dependencies")
        .and_then(toml::Value::as_table_mut)
        .expect("[dev-dependencies] in the README's Cargo.toml");
    let root_manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(child::repo_root().join("Cargo.toml")).unwrap())
            .unwrap();
    let version = root_manifest["package"]["version"].as_str().unwrap();
    let published = &version[..version.rfind('.').unwrap()];
    assert_eq!(
        deps.get("prompt-tester").and_then(toml::Value::as_str),
        Some(published),
        "the README's dependency line is `prompt-tester = \"{published}\"`"
    );
    deps.insert(
        "prompt-tester".into(),
        toml::Value::Table(toml::Table::from_iter([(
            "path".to_string(),
            toml::Value::from(child::repo_root().to_string_lossy().into_owned()),
        )])),
    );
    let manifest_path = krate.join("Cargo.toml");
    let mut manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest.extend(readme_manifest);
    std::fs::write(&manifest_path, toml::to_string(&manifest).unwrap()).unwrap();
    let test_path = manifest["test"][0]["path"]
        .as_str()
        .expect("the README's [[test]] has a path")
        .to_string();
    std::fs::create_dir_all(krate.join(&test_path).parent().unwrap()).unwrap();
    std::fs::write(krate.join(&test_path), main_rs).unwrap();
    std::fs::write(krate.join("prompt-tester.toml"), config).unwrap();
    std::fs::copy(
        child::repo_root().join("Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();

    let lines: Vec<&str> = commands
        .lines()
        .filter(|l| l.contains("cargo test"))
        .collect();
    let [record, replay] = lines[..] else {
        panic!("expected a record and a replay command in the quick start: {commands}")
    };

    // Record: the README's command, with its keys, against the fake providers.
    let fake = FakeProvider::builder().respond_with(respond).start();
    let (mut env, args) = parse_command(record);
    assert_eq!(args[0], "cargo", "{record}");
    env.push(("GOOGLE_GEMINI_BASE_URL".into(), fake.base_url(Wire::Gemini)));
    env.push(("ANTHROPIC_BASE_URL".into(), fake.base_url(Wire::Anthropic)));
    let recorded = cargo(&krate, &env, &args[1..]);
    assert!(recorded.status.success(), "record: {}", text(&recorded));
    assert_eq!(
        outcome(&recorded, "summary_mentions_alice").as_deref(),
        Some("ok"),
        "record: {}",
        text(&recorded)
    );
    let requests = fake.requests();
    let by = |wire: Wire| requests.iter().filter(|r| r.wire() == Some(wire)).count();
    assert_eq!(
        (by(Wire::Gemini), by(Wire::Anthropic)),
        (5, 5),
        "five samples, each judged once"
    );
    for request in &requests {
        let key = request
            .header("x-goog-api-key")
            .or(request.header("x-api-key"));
        assert_eq!(
            key,
            Some(KEY),
            "the README's key variables are used: {request:?}"
        );
    }
    drop(fake);

    let cassette = krate.join("prompt-tests/cassettes/summary_mentions_alice.cassette.json");
    let cassette: Value = serde_json::from_str(
        &std::fs::read_to_string(&cassette)
            .unwrap_or_else(|e| panic!("no cassette at {}: {e}", cassette.display())),
    )
    .unwrap();
    assert_eq!(cassette["entries"].as_array().map(Vec::len), Some(10));
    assert!(
        !cassette.to_string().contains(KEY),
        "no key in the cassette"
    );

    // Replay: the README's command, no key, the fake gone: every call comes from the cassette.
    let (env, args) = parse_command(replay);
    assert!(env.is_empty(), "{replay}");
    let replayed = cargo(&krate, &env, &args[1..]);
    assert!(replayed.status.success(), "replay: {}", text(&replayed));
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert_eq!(
        outcome(&replayed, "summary_mentions_alice").as_deref(),
        Some("ok"),
        "replay: {}",
        text(&replayed)
    );
    assert!(
        stdout.contains("test result: ok. 1 passed; 0 failed;"),
        "replay: {}",
        text(&replayed)
    );
    assert!(
        stderr.contains("10 model calls (10 replayed from cassettes)"),
        "replay: {}",
        text(&replayed)
    );
}

/// The published crates hold their sources, README and licences: no cassettes, tests, examples,
/// benchmarks or scripts (`include` in each Cargo.toml).
#[test]
fn the_packages_hold_only_sources_readme_and_licences() {
    for (package, sources, root) in [
        ("prompt-tester", "src/", "src/lib.rs"),
        ("prompt-tester-macros", "src/", "src/lib.rs"),
        ("prompt-tester-keys", "src/", "src/lib.rs"),
        ("cargo-prompt-tester", "src/", "src/main.rs"),
    ] {
        let args = ["package", "--list", "--allow-dirty", "-p", package].map(String::from);
        let listed = cargo(&child::repo_root(), &[], &args);
        assert!(listed.status.success(), "{}", text(&listed));
        let files: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        let meta = [
            ".cargo_vcs_info.json",
            "Cargo.lock",
            "Cargo.toml",
            "Cargo.toml.orig",
            "LICENSE-APACHE",
            "LICENSE-MIT",
            "README.md",
        ];
        for file in &files {
            assert!(
                meta.contains(&file.as_str())
                    || (file.starts_with(sources) && file.ends_with(".rs")),
                "{package} would publish {file}: {files:?}"
            );
        }
        for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE", root] {
            assert!(
                files.iter().any(|f| f == file),
                "{package} lacks {file}: {files:?}"
            );
        }
    }
}

/// Packaging the published crates warns of nothing but the missing repository URL (there is no public
/// one yet): no target is declared that the package leaves out, which `cargo publish` would report as
/// "ignoring test ..." (the tests, fixtures and benchmark are the unpublished packages' targets).
#[test]
fn packaging_the_published_crates_warns_only_of_the_missing_repository_url() {
    let args = [
        "package",
        "--no-verify",
        "--allow-dirty",
        "-p",
        "prompt-tester",
        "-p",
        "prompt-tester-macros",
        "-p",
        "prompt-tester-keys",
        "-p",
        "cargo-prompt-tester",
    ]
    .map(String::from);
    let packaged = cargo(&child::repo_root(), &[], &args);
    assert!(packaged.status.success(), "{}", text(&packaged));
    let stderr = String::from_utf8_lossy(&packaged.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(
        warnings, ["warning: manifest has no documentation, homepage or repository"; 4],
        "{stderr}"
    );
    assert_eq!(stderr.matches("   Packaging ").count(), 4, "{stderr}");
}
