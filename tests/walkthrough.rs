//! The README's first five minutes, done as a newcomer does them: `cargo new`, the quick start's
//! `Cargo.toml` lines (with the path form of the dependency, pointing at this checkout), its
//! `prompt-tests/main.rs` and `prompt-tester.toml`, all taken from README.md; then the README's record
//! command against a fake Gemini and Anthropic on 127.0.0.1, and its replay command with the fake stopped
//! and no key. Then the step after, as the quick start goes on: the prompt edited, the README's run with
//! keys (the changed answers go pending), and `cargo prompt-tester` (this checkout's binary, found by
//! cargo on `PATH` as an installed one is) accepting them, or rejecting the next change. It fails when
//! the README's code or commands stop working.
//!
//! The new crates build in `target/walkthrough/` (shared by every run, so only the first one compiles the
//! dependencies) with cargo offline: each copies this checkout's `Cargo.lock`, whose crates `cargo test`
//! has already fetched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Wire, child};
use serde_json::{Value, json};

#[path = "walkthrough/init.rs"]
mod init;

const README: &str = include_str!("../README.md");
/// The fake key the README's `...` placeholders stand for.
const KEY: &str = "walkthrough-key";
/// The quick start's test, and so its cassette's name.
const TEST: &str = "summary_mentions_alice";

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

/// The record and the replay command of the quick start's first `sh` block with them.
fn record_and_replay() -> (&'static str, &'static str) {
    let commands = block("sh", |t| t.contains("PROMPT_TESTER_CASSETTE=record"));
    let lines: Vec<&str> = commands
        .lines()
        .filter(|l| l.contains("cargo test"))
        .collect();
    let [record, replay] = lines[..] else {
        panic!("expected a record and a replay command in the quick start: {commands}")
    };
    (record, replay)
}

/// A directory removed when the test ends, pass or fail.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cargo` (the one running this test) in `dir`, isolated from this process's provider and harness
/// settings, offline, building in the shared walkthrough target directory. `CI` is removed too (the
/// project's own CI sets it, and it changes what auto mode does): a command run as under CI says so in
/// `env`.
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
            || name == "CI"
            || name == "GITHUB_STEP_SUMMARY"
        {
            cmd.env_remove(&name);
        }
    }
    // No debug info in the new crates' builds: they are thrown away, and full debug info is most of a
    // debug build's size on disk.
    cmd.env("CARGO_TARGET_DIR", target)
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
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

/// Panics with the output unless the command succeeded with each of `trials` passing.
fn assert_passed(output: &Output, trials: &[&str], what: &str) {
    assert!(output.status.success(), "{what}: {}", text(output));
    for trial in trials {
        assert_eq!(
            outcome(output, trial).as_deref(),
            Some("ok"),
            "{what}: {trial}: {}",
            text(output)
        );
    }
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
        Some(Wire::Anthropic) => judge_says_alice_is_named(request),
        _ => Reply::answer(
            request,
            "Alice leads Project Phoenix, which has a $2M budget and a Q3 deadline.",
        ),
    }
}

/// The judge's verdict on the quick start's question: yes, Alice is named.
fn judge_says_alice_is_named(request: &CapturedRequest) -> Reply {
    Reply::structured(
        request,
        &json!({
            "question_type": "factual_presence",
            "reasoning": "The summary names Alice as the lead.",
            "snippet": "Alice leads Project Phoenix",
            "answer": "yes"
        }),
    )
}

/// The quick start's crate after its first command: the README's files in a new crate, recorded with
/// the README's record command against the fake providers.
struct Newcomer {
    krate: PathBuf,
    _dir: TempDir,
}

impl Newcomer {
    /// `cargo new` in a folder of its own (`name` tells the tests' folders apart), the README's files,
    /// and the README's record command, checked: every sample called and judged, with the README's keys.
    fn recorded(name: &str) -> Self {
        let cargo_toml = block("toml", |t| t.contains("[dev-dependencies]"));
        let config = block("toml", |t| !t.contains("[dev-dependencies]"));
        let main_rs = as_compiled(block("rust", |_| true));

        let dir = TempDir(std::env::temp_dir().join(format!(
            "prompt-tester-walkthrough-{name}-{}",
            std::process::id()
        )));
        let _ = std::fs::remove_dir_all(&dir.0);
        std::fs::create_dir_all(&dir.0).unwrap();
        // A package name of its own: cargo's artifact names hash a package's path relative to its
        // workspace, the same for every one-package crate, so two crates of one name building at once
        // in the shared target directory would run each other's test binary.
        let package = format!("newcomer-{name}");
        let new = cargo(
            &dir.0,
            &[],
            &["new", "--lib", "--vcs", "none", &package].map(String::from),
        );
        assert!(new.status.success(), "cargo new: {}", text(&new));
        let krate = dir.0.join(&package);

        // The README's dependency line is the published one; a newcomer trying a checkout uses the path
        // form.
        let mut readme_manifest: toml::Table =
            toml::from_str(cargo_toml).expect("the README's Cargo.toml lines parse");
        let deps = readme_manifest
            .get_mut("dev-dependencies")
            .and_then(toml::Value::as_table_mut)
            .expect("[dev-dependencies] in the README's Cargo.toml");
        let root_manifest: toml::Table = toml::from_str(
            &std::fs::read_to_string(child::repo_root().join("Cargo.toml")).unwrap(),
        )
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
        assert_eq!(
            test_path, "prompt-tests/main.rs",
            "the README shows this file as `prompt-tests/main.rs`"
        );
        std::fs::create_dir_all(krate.join(&test_path).parent().unwrap()).unwrap();
        std::fs::write(krate.join(&test_path), main_rs).unwrap();
        std::fs::write(krate.join("prompt-tester.toml"), config).unwrap();
        std::fs::copy(
            child::repo_root().join("Cargo.lock"),
            krate.join("Cargo.lock"),
        )
        .unwrap();
        let newcomer = Self { krate, _dir: dir };

        // Record: the README's command, with its keys, against the fake providers.
        let (record, _) = record_and_replay();
        newcomer.live(record, "record");

        let cassette: Value = serde_json::from_str(&newcomer.cassette_text()).unwrap();
        assert_eq!(cassette["entries"].as_array().map(Vec::len), Some(10));
        assert!(
            !cassette.to_string().contains(KEY),
            "no key in the cassette"
        );
        newcomer
    }

    /// The README command `line` run live against a fresh fake with the README's keys: it passes,
    /// every one of the five samples is called and judged once.
    fn live(&self, line: &str, what: &str) -> Output {
        let fake = FakeProvider::builder().respond_with(respond).start();
        let ran = self.with_keys(line, &fake, &[]);
        assert_passed(&ran, &[TEST], what);
        assert_eq!(
            calls(&fake),
            (5, 5),
            "{what}: five samples, each called and judged once: {}",
            text(&ran)
        );
        ran
    }

    /// The README command `line`, which sets the keys, run against `fake` (with `env` too); it checks
    /// the keys the fake was sent are the README's.
    fn with_keys(&self, line: &str, fake: &FakeProvider, env: &[(String, String)]) -> Output {
        let (mut vars, args) = parse_command(line);
        assert_eq!(args[0], "cargo", "{line}");
        assert!(
            vars.iter().any(|(name, _)| name.ends_with("_API_KEY")),
            "{line} sets the keys"
        );
        vars.push(("GOOGLE_GEMINI_BASE_URL".into(), fake.base_url(Wire::Gemini)));
        vars.push(("ANTHROPIC_BASE_URL".into(), fake.base_url(Wire::Anthropic)));
        vars.extend_from_slice(env);
        let output = cargo(&self.krate, &vars, &args[1..]);
        for request in fake.requests() {
            let key = request
                .header("x-goog-api-key")
                .or(request.header("x-api-key"));
            assert_eq!(
                key,
                Some(KEY),
                "the README's key variables are used: {request:?}"
            );
        }
        output
    }

    /// The README's replay command: no key, no provider to reach (`env` adds `CI` when it is run as
    /// under CI).
    fn replay(&self, env: &[(String, String)]) -> Output {
        let (_, replay) = record_and_replay();
        let (vars, args) = parse_command(replay);
        assert!(vars.is_empty(), "{replay}");
        assert_eq!(args[0], "cargo", "{replay}");
        cargo(&self.krate, env, &args[1..])
    }

    /// The README's replay command (with `env`), checked: it passes, every one of the ten calls
    /// replayed from the cassette.
    fn replays_every_call(&self, env: &[(String, String)]) -> Output {
        let replayed = self.replay(env);
        assert_passed(&replayed, &[TEST], "replay");
        assert!(
            String::from_utf8_lossy(&replayed.stderr)
                .contains("10 model calls (10 replayed from cassettes)"),
            "replay: {}",
            text(&replayed)
        );
        replayed
    }

    fn cassettes(&self) -> PathBuf {
        self.krate.join("prompt-tests/cassettes")
    }

    fn cassette_text(&self) -> String {
        let path = self.cassettes().join(format!("{TEST}.cassette.json"));
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no cassette at {}: {e}", path.display()))
    }

    /// The pending files in the cassette folder, where the README says they are.
    fn pending(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.cassettes())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".pending.json"))
            .collect()
    }

    /// The quick start's `target_prompt`, as `prompt-tests/main.rs` has it now.
    fn prompt(&self) -> String {
        let main_rs = std::fs::read_to_string(self.krate.join("prompt-tests/main.rs")).unwrap();
        let start = main_rs
            .find("target_prompt = \"")
            .expect("the quick start's test has a `target_prompt = \"...\"`")
            + "target_prompt = \"".len();
        let len = main_rs[start..].find('"').expect("a closing quote");
        main_rs[start..start + len].to_string()
    }

    /// Edits the prompt as a user does: the prompt's text replaced in `prompt-tests/main.rs`.
    fn edit_prompt(&self, new: &str) {
        let path = self.krate.join("prompt-tests/main.rs");
        let main_rs = std::fs::read_to_string(&path).unwrap();
        let old = format!("target_prompt = \"{}\"", self.prompt());
        assert_eq!(main_rs.matches(&old).count(), 1, "{main_rs}");
        std::fs::write(
            &path,
            main_rs.replace(&old, &format!("target_prompt = \"{new}\"")),
        )
        .unwrap();
    }
}

/// How many (Gemini, Anthropic) calls `fake` answered.
fn calls(fake: &FakeProvider) -> (usize, usize) {
    let requests = fake.requests();
    let by = |wire: Wire| requests.iter().filter(|r| r.wire() == Some(wire)).count();
    (by(Wire::Gemini), by(Wire::Anthropic))
}

#[test]
fn a_new_crate_follows_the_quick_start_records_then_replays_offline() {
    let newcomer = Newcomer::recorded("quick-start");

    // Replay: the README's command, no key, the fake gone: every call comes from the cassette.
    let replayed = newcomer.replays_every_call(&[]);
    assert!(
        String::from_utf8_lossy(&replayed.stdout).contains("test result: ok. 1 passed; 0 failed;"),
        "replay: {}",
        text(&replayed)
    );
}

/// The directory holding this checkout's `cargo-prompt-tester`, built once per test process so it is
/// never stale (`cargo test --test walkthrough` alone does not build other packages' binaries), as
/// `cargo install` would put it in `~/.cargo/bin`.
fn installed(package: &str) -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let binary = child::built_binary(package, &child::repo_root().join("Cargo.toml"));
        binary
            .parent()
            .expect("the profile directory")
            .to_path_buf()
    })
}

/// `PATH` with `dir` first, so `cargo prompt-tester` runs the binary there. Cargo looks in its home's
/// `bin/` before `PATH` unless `PATH` names it, so it is named after `dir`: a `cargo-prompt-tester`
/// installed there must not stand in for this checkout's.
fn path_with(dir: &Path) -> (String, String) {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(home.map(|home| home.join("bin")));
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(dirs).expect("PATH's folders join");
    ("PATH".into(), path.into_string().expect("a UTF-8 PATH"))
}

/// A prompt change goes pending, is accepted with `cargo prompt-tester accept` and replays offline;
/// the next change, rejected, leaves the accepted recordings, and the replay fails as stale saying
/// what changed. The commands are the quick start's second `sh` block's: `cargo install` (here: this
/// checkout's package of that name, built), the run with keys, and `cargo prompt-tester review`,
/// which without a terminal names `accept` and `reject`, run next.
#[test]
fn a_prompt_change_goes_pending_then_is_accepted_or_rejected_with_cargo_prompt_tester() {
    let commands = block("sh", |t| t.contains("cargo prompt-tester review"));
    let lines: Vec<&str> = commands.lines().filter(|l| !l.trim().is_empty()).collect();
    let [install, run, review, commit] = lines[..] else {
        panic!("expected install, run, review and commit commands: {commands}")
    };
    let (env, install) = parse_command(install);
    assert!(env.is_empty(), "{install:?}");
    let [cargo_word, install_word, package] = &install[..] else {
        panic!("expected `cargo install PACKAGE`: {install:?}")
    };
    assert_eq!(
        (cargo_word.as_str(), install_word.as_str()),
        ("cargo", "install")
    );
    let path = path_with(installed(package));
    let (env, review) = parse_command(review);
    assert!(env.is_empty(), "{review:?}");
    assert_eq!(review, ["cargo", "prompt-tester", "review"]);
    // `cargo prompt-tester SUBCOMMAND` as a user types it, with the binary on PATH.
    let subcommand = |newcomer: &Newcomer, name: &str| {
        let args = [review[1].clone(), name.to_string()];
        cargo(&newcomer.krate, std::slice::from_ref(&path), &args)
    };
    // `accept` or `reject`: it succeeds, and nothing is left pending.
    let settle = |newcomer: &Newcomer, name: &str| {
        let settled = subcommand(newcomer, name);
        assert!(settled.status.success(), "{name}: {}", text(&settled));
        assert_eq!(
            newcomer.pending(),
            [] as [PathBuf; 0],
            "{name}: {}",
            text(&settled)
        );
        settled
    };
    let ci = [("CI".to_string(), "true".to_string())];

    let newcomer = Newcomer::recorded("review");
    let (_, commit) = parse_command(commit);
    assert_eq!(commit[..2], ["git", "add"], "{commit:?}");
    assert_eq!(
        newcomer.krate.join(&commit[2]),
        newcomer.cassettes(),
        "the README commits the cassette folder"
    );

    // The prompt edited; the README's run with keys, not under CI: the changed calls are made, the
    // test is judged on the new answers, which go pending; the committed cassette is untouched.
    let first = newcomer.prompt();
    let brief = format!("Be brief. {first}");
    newcomer.edit_prompt(&brief);
    let recorded = newcomer.cassette_text();
    let ran = newcomer.live(run, "run");
    assert!(
        newcomer.cassette_text() == recorded,
        "the committed cassette changed: {}",
        text(&ran)
    );
    let pending = newcomer.pending();
    assert_eq!(
        pending,
        [newcomer.cassettes().join(format!("{TEST}.pending.json"))],
        "run: {}",
        text(&ran)
    );
    let stderr = String::from_utf8_lossy(&ran.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    assert!(
        last.is_some_and(
            |l| l.contains("1 test(s) have pending recordings (5 sample(s))")
                && l.contains("`cargo prompt-tester review`")
        ),
        "the summary's last line names the review: {}",
        text(&ran)
    );

    // The README's review, without a terminal, refuses and names the commands that work without one.
    let refused = cargo(&newcomer.krate, std::slice::from_ref(&path), &review[1..]);
    assert_eq!(refused.status.code(), Some(2), "review: {}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    for named in ["cargo prompt-tester accept", "cargo prompt-tester reject"] {
        assert!(stderr.contains(named), "review: {}", text(&refused));
    }
    let listed = subcommand(&newcomer, "pending");
    assert!(listed.status.success(), "pending: {}", text(&listed));
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("5 pending sample(s)"),
        "pending: {}",
        text(&listed)
    );

    // Accept: the new answers replace the old in the cassette, the pending file is gone, and the
    // replay (under CI, no key, the fake gone) passes on them.
    settle(&newcomer, "accept");
    let cassette = newcomer.cassette_text();
    let entries: Value = serde_json::from_str(&cassette).unwrap();
    assert_eq!(
        entries["entries"].as_array().map(Vec::len),
        Some(10),
        "the five samples' subject and judge calls, the old ones gone: {cassette}"
    );
    let (old_head, new_head) = (head(&first), head(&brief));
    assert!(
        cassette.matches(&old_head).count() == cassette.matches(&new_head).count()
            && cassette.contains(&new_head),
        "every recorded prompt is the edited one: {cassette}"
    );
    newcomer.replays_every_call(&ci);

    // The next edit, rejected: the cassette keeps the accepted answers, the pending file is gone, and
    // the replay under CI fails as stale, saying what changed in the prompt.
    let plain = format!("Be brief and plain. {first}");
    newcomer.edit_prompt(&plain);
    let ran = newcomer.live(run, "run");
    assert!(newcomer.cassette_text() == cassette, "run: {}", text(&ran));
    assert_eq!(newcomer.pending().len(), 1, "run: {}", text(&ran));
    let rejected = settle(&newcomer, "reject");
    assert!(
        newcomer.cassette_text() == cassette,
        "reject keeps the cassette as it was: {}",
        text(&rejected)
    );
    let stale = newcomer.replay(&ci);
    assert!(!stale.status.success(), "replay: {}", text(&stale));
    assert_eq!(
        outcome(&stale, TEST).as_deref(),
        Some("FAILED"),
        "replay: {}",
        text(&stale)
    );
    let said = text(&stale);
    let diff = format!("Changed since it was recorded: prompt: -\"{}", head(&brief));
    assert!(
        said.contains(&diff) && said.contains(&format!("+\"{}", head(&plain))),
        "the stale failure shows the prompt's diff ({diff} ...): {said}"
    );
}

/// A prompt template's text before its first placeholder: how the rendered prompt begins.
fn head(template: &str) -> String {
    template[..template.find('{').unwrap_or(template.len())].to_string()
}

/// The published crates hold their sources, README and licences (and the library its guide's chapters):
/// no cassettes, tests, examples, benchmarks or scripts (`include` in each Cargo.toml).
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
            // The library's guide: its chapters are rustdoc modules, so docs.rs needs them.
            let guide = package == "prompt-tester"
                && file.starts_with("src/guide/")
                && file.ends_with(".md");
            assert!(
                meta.contains(&file.as_str())
                    || guide
                    || (file.starts_with(sources) && file.ends_with(".rs")),
                "{package} would publish {file}: {files:?}"
            );
        }
        if package == "prompt-tester" {
            assert!(
                files.iter().any(|f| f == "src/guide/index.md"),
                "{package} lacks its guide: {files:?}"
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
