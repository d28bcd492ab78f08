//! `cargo prompt-tester init` as a newcomer runs it: `cargo init --lib`, then `init` (this checkout's
//! binary on `PATH`, the dependency pointed at this checkout with `--prompt-tester-path`), then the
//! commands it prints, each run as printed: the listing, the record with keys against the fake Gemini
//! and Anthropic, the replay offline; then the record against a local OpenAI-compatible server (the
//! fake again) and its replay. The files it writes are the quick start's. And what it refuses: a file
//! in the way names it, and nothing is written.

use std::path::{Path, PathBuf};
use std::process::Output;

use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Wire, child};

use super::{
    KEY, TEST, TempDir, as_compiled, assert_passed, block, cargo, installed,
    judge_says_alice_is_named, parse_command, path_with, respond, text,
};

/// The suite init writes, and its one case.
const SUITE_CASE: &str = "summary::mentions_alice";

/// A new crate (`cargo init --lib`) in a folder of its own, `name` telling the tests' folders apart.
/// Its package is named after `name` too: cargo's artifact names hash a package's path relative to
/// its workspace, the same for every one-package crate, so two crates of one name building at once in
/// the shared target directory would overwrite each other's test binary.
fn new_crate(name: &str) -> (TempDir, PathBuf) {
    let dir = TempDir(
        std::env::temp_dir().join(format!("prompt-tester-init-{name}-{}", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&dir.0);
    let krate = dir.0.join(format!("init_{name}"));
    std::fs::create_dir_all(&krate).unwrap();
    let init = cargo(
        &krate,
        &[],
        &["init", "--lib", "--vcs", "none"].map(String::from),
    );
    assert!(init.status.success(), "cargo init: {}", text(&init));
    (dir, krate)
}

/// `cargo prompt-tester init ARGS` in `krate`, as a user types it (this checkout's binary on `PATH`),
/// the dependency on this checkout.
fn init(krate: &Path, args: &[&str]) -> Output {
    let path = path_with(installed("cargo-prompt-tester"));
    let mut words = vec!["prompt-tester".to_string(), "init".to_string()];
    words.extend(args.iter().map(|a| a.to_string()));
    words.push("--prompt-tester-path".into());
    words.push(child::repo_root().to_string_lossy().into_owned());
    cargo(krate, &[path], &words)
}

/// The printed command (an indented line) that holds each of `parts` and none of `not`: one, without
/// its indent.
fn printed<'a>(said: &'a str, parts: &[&str], not: &[&str]) -> &'a str {
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| {
            l.starts_with("  ")
                && parts.iter().all(|p| l.contains(p))
                && !not.iter().any(|p| l.contains(p))
        })
        .collect();
    let [line] = lines[..] else {
        panic!("expected one printed command with {parts:?} and without {not:?}: {said}")
    };
    line.trim()
}

/// A printed command run in `krate`, with `env` added (a base URL, `CI`), `MODEL` standing for
/// `model`.
fn run_printed(krate: &Path, line: &str, env: &[(&str, String)], model: &str) -> Output {
    let line = line
        .replace("=MODEL", &format!("={model}"))
        .replace("/MODEL", &format!("/{model}"));
    let (mut vars, args) = parse_command(&line);
    assert_eq!(args[0], "cargo", "{line}");
    assert!(
        !line.contains("=MODEL") && !line.contains("/MODEL"),
        "{line}"
    );
    vars.extend(env.iter().map(|(n, v)| (n.to_string(), v.clone())));
    cargo(krate, &vars, &args[1..])
}

/// A local server: one wire for the subject and the judge, told apart by the judge's structured answer.
fn respond_locally(request: &CapturedRequest) -> Reply {
    if request.wants_structured() {
        judge_says_alice_is_named(request)
    } else {
        Reply::answer(
            request,
            "Alice leads Project Phoenix, on a $2M budget, due Q3.",
        )
    }
}

fn assert_both_passed(output: &Output, what: &str) {
    assert_passed(output, &[TEST, SUITE_CASE], what);
}

#[test]
fn a_crate_set_up_by_init_lists_records_and_replays_with_the_commands_it_prints() {
    let (_dir, krate) = new_crate("record");
    let ran = init(&krate, &[]);
    assert!(ran.status.success(), "init: {}", text(&ran));
    let said = String::from_utf8_lossy(&ran.stdout).into_owned();

    // The files are the quick start's.
    let main_rs = std::fs::read_to_string(krate.join("prompt-tests/main.rs")).unwrap();
    assert_eq!(
        main_rs.trim_end(),
        as_compiled(block("rust", |_| true)).trim_end(),
        "{said}"
    );
    let config = std::fs::read_to_string(krate.join("prompt-tester.toml")).unwrap();
    assert_eq!(
        config,
        block("toml", |t| !t.contains("[dev-dependencies]")),
        "{said}"
    );
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(krate.join("Cargo.toml")).unwrap()).unwrap();
    let readme: toml::Table =
        toml::from_str(block("toml", |t| t.contains("[dev-dependencies]"))).unwrap();
    assert_eq!(
        manifest["test"], readme["test"],
        "the quick start's [[test]]"
    );
    assert_eq!(
        manifest["dev-dependencies"]["prompt-tester"]["path"].as_str(),
        Some(&*child::repo_root().to_string_lossy()),
    );
    assert_eq!(manifest["dev-dependencies"]["anyhow"].as_str(), Some("1"));
    let nextest = std::fs::read_to_string(krate.join(".config/nextest.toml")).unwrap();
    assert!(
        nextest.contains("filter = \"binary(prompts)\""),
        "{nextest}"
    );
    std::fs::copy(
        child::repo_root().join("Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();

    // At once: the listing, as printed.
    let list = run_printed(&krate, printed(&said, &["-- --list"], &[]), &[], "");
    assert!(list.status.success(), "--list: {}", text(&list));
    let listed = String::from_utf8_lossy(&list.stdout);
    for trial in [TEST, SUITE_CASE] {
        assert!(
            listed.contains(&format!("{trial}: test")),
            "--list: {}",
            text(&list)
        );
    }

    // The record with keys, as printed, against the fake providers.
    let fake = FakeProvider::builder().respond_with(respond).start();
    let urls = [
        ("GOOGLE_GEMINI_BASE_URL", fake.base_url(Wire::Gemini)),
        ("ANTHROPIC_BASE_URL", fake.base_url(Wire::Anthropic)),
    ];
    let record = printed(&said, &["GOOGLE_API_KEY=...", "CASSETTE=record"], &[]);
    let recorded = run_printed(&krate, record, &urls, "");
    assert_both_passed(&recorded, "record");
    assert_eq!(fake.requests().len(), 20, "{}", text(&recorded));
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.header("x-goog-api-key").or(r.header("x-api-key")) == Some(KEY)),
        "the printed key variables are the ones used"
    );
    drop(fake);

    // The replay, as printed: under CI, no key, the fake gone.
    let ci = [("CI", "true".to_string())];
    let replay = printed(&said, &["cargo test --test prompts"], &["=", "--list"]);
    let replayed = run_printed(&krate, replay, &ci, "");
    assert_both_passed(&replayed, "replay");
    assert!(
        String::from_utf8_lossy(&replayed.stderr)
            .contains("20 model calls (20 replayed from cassettes)"),
        "replay: {}",
        text(&replayed)
    );

    // The local server's route, as printed, in place of the recordings with keys.
    std::fs::remove_dir_all(krate.join("prompt-tests/cassettes")).unwrap();
    let local = FakeProvider::builder()
        .respond_with(respond_locally)
        .start();
    let record = printed(&said, &["OPENAI_BASE_URL=", "CASSETTE=record"], &[]);
    let url = [("OPENAI_BASE_URL", local.base_url(Wire::OpenAi))];
    let recorded = run_printed(&krate, record, &url, "smollm2");
    assert_both_passed(&recorded, "record locally");
    assert_eq!(local.requests().len(), 20, "{}", text(&recorded));
    let models: Vec<Option<String>> = local.requests().iter().map(|r| r.model()).collect();
    assert_eq!(
        models,
        vec![Some("smollm2".to_string()); 20],
        "every call goes to the local model"
    );
    drop(local);
    let replay = printed(&said, &["PROMPT_TESTER_SUBJECT="], &["CASSETTE=record"]);
    let replayed = run_printed(&krate, replay, &ci, "smollm2");
    assert_both_passed(&replayed, "replay what the local server recorded");
}

/// A file in the way is named, the exit is non-zero, and nothing is written; once it is moved away,
/// init adds to the hand-written `Cargo.toml` its lines only, every other byte kept.
#[test]
fn init_refuses_to_overwrite_and_keeps_a_hand_written_manifest_byte_for_byte() {
    let (_dir, krate) = new_crate("refuse");
    let manifest_path = krate.join("Cargo.toml");
    let generated = std::fs::read_to_string(&manifest_path).unwrap();
    let hand_written = format!(
        "# my crate, formatted my way\n{}\n[dev-dependencies]   # tests only\n# snapshots\ninsta = \"1\"\n\n\
         [features]\ndefault = []   # none\n",
        generated.replace("edition = ", "edition    = ")
    );
    std::fs::write(&manifest_path, &hand_written).unwrap();
    std::fs::write(krate.join("prompt-tester.toml"), "# mine\n").unwrap();
    std::fs::create_dir_all(krate.join("prompt-tests")).unwrap();
    std::fs::write(krate.join("prompt-tests/main.rs"), "// mine\n").unwrap();
    let before = files_of(&krate);

    let refused = init(&krate, &[]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(
            "error: init wrote nothing: prompt-tests/main.rs exists; prompt-tester.toml exists. It never \
             overwrites a file or a test target"
        ),
        "{}",
        text(&refused)
    );
    assert_eq!(
        files_of(&krate),
        before,
        "nothing written: {}",
        text(&refused)
    );

    std::fs::remove_file(krate.join("prompt-tester.toml")).unwrap();
    std::fs::remove_dir_all(krate.join("prompt-tests")).unwrap();
    let ran = init(&krate, &[]);
    assert!(ran.status.success(), "{}", text(&ran));
    let edited = std::fs::read_to_string(&manifest_path).unwrap();
    let dependency = format!(
        "prompt-tester = {{ path = \"{}\" }}\nanyhow = \"1\"\n",
        child::repo_root().display()
    );
    let target =
        "\n[[test]]\nname = \"prompts\"\npath = \"prompt-tests/main.rs\"\nharness = false\n";
    assert_eq!(
        edited,
        format!(
            "{}{target}",
            hand_written.replace("insta = \"1\"\n", &format!("insta = \"1\"\n{dependency}"))
        ),
        "only the additions"
    );
    // Run again: now its own files are in the way, and the target too.
    let again = init(&krate, &[]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    let stderr = String::from_utf8_lossy(&again.stderr);
    for named in [
        "prompt-tests/main.rs exists",
        "prompt-tests/summary.evals.toml exists",
        "prompt-tester.toml exists",
        "Cargo.toml already has a test target named `prompts`",
        ".config/nextest.toml already has the test group `prompt-tests`",
    ] {
        assert!(stderr.contains(named), "{named}: {}", text(&again));
    }
}

/// Every file under `dir` with its text.
fn files_of(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                files.push((path, text));
            }
        }
    }
    files.sort();
    files
}

/// A target named `evals`: the nextest group's filter and every command the harness prints name it.
#[test]
fn a_target_named_otherwise_is_named_in_the_nextest_group_and_every_hint() {
    let (_dir, krate) = new_crate("evals");
    let ran = init(&krate, &["--name", "evals"]);
    assert!(ran.status.success(), "init: {}", text(&ran));
    let said = String::from_utf8_lossy(&ran.stdout);
    assert!(!said.contains("--test prompts"), "{said}");
    let nextest = std::fs::read_to_string(krate.join(".config/nextest.toml")).unwrap();
    assert!(nextest.contains("filter = \"binary(evals)\""), "{nextest}");
    std::fs::copy(
        child::repo_root().join("Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();

    // Under CI with nothing recorded: each trial fails, saying how to record it; the summary says how
    // to rerun one. Both name `--test evals`.
    let ci = [("CI".to_string(), "true".to_string())];
    let args = ["test", "--test", "evals"].map(String::from);
    let run = cargo(&krate, &ci, &args);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    let all = text(&run);
    for hint in [
        format!("PROMPT_TESTER_CASSETTE=record cargo test --test evals -- {TEST}"),
        "PROMPT_TESTER_CASSETTE=record cargo test --test evals -- summary. ".to_string(),
        "rerun a failed test: cargo test --test evals -- --exact ".to_string(),
    ] {
        assert!(all.contains(&hint), "{hint}: {all}");
    }
    assert!(!all.contains("--test prompts"), "{all}");
}
