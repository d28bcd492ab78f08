//! What a run shares with its process and its platform: rustls's process-wide crypto provider (the
//! application's to choose), a Windows checkout's line endings, and stderr, where the log goes.

use std::path::Path;

use prompt_tester_testkit::child::{self, Child, Scratch};
use prompt_tester_testkit::{FakeProvider, Reply, Wire};

/// The example `name` of this package, built now (`cargo test --test platform` builds no example).
fn fixture(name: &str) -> std::path::PathBuf {
    child::fresh_example_binary(name, Path::new(env!("CARGO_MANIFEST_DIR")))
}

#[test]
fn a_test_body_installs_its_own_tls_provider_under_the_harness() {
    let scratch = Scratch::new("platform", "tls");
    let run = scratch
        .child(fixture("platform_fixture"))
        .args(["installs_a_tls_provider", "--exact"])
        .run();
    assert_eq!(
        run.outcome("installs_a_tls_provider"),
        "ok",
        "{}",
        run.context()
    );
    run.assert_success();
}

/// The files of `dir` (recursively) whose names end with one of `endings`.
fn files_ending(dir: &Path, endings: &[&str], found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                files_ending(&path, endings, found);
            }
        } else if endings.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
}

/// `from` copied to `to` whole (its cassettes and work folders included, `target/` left out).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&path, &target);
            }
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A Windows checkout with git's `autocrlf`: the example crate's prompts, suites, datasets and
/// calibration set in CRLF replay from the cassettes recorded from LF files, under `CI`.
#[test]
fn the_examples_with_windows_line_endings_replay_under_ci() {
    let built = child::cargo()
        .args([
            "test",
            "--quiet",
            "--no-run",
            "--test",
            "prompts",
            "--manifest-path",
        ])
        .arg(child::examples_root().join("Cargo.toml"))
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo test --no-run --test prompts failed");
    let scratch = Scratch::new("platform", "crlf");
    let root = scratch.path().join("prompt-tests");
    copy_dir(&child::examples_root(), &root);
    let mut converted = Vec::new();
    files_ending(
        &root,
        &[
            ".md",
            ".evals.toml",
            ".evals.yaml",
            ".jsonl",
            ".calibration.toml",
        ],
        &mut converted,
    );
    for path in &converted {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains('\r'), "{} already has CRLF", path.display());
        std::fs::write(path, text.replace('\n', "\r\n")).unwrap();
    }
    assert!(converted.len() >= 10, "{converted:?}");
    let run = Child::new(child::test_binary("prompts"))
        .root(&root)
        .env("CI", "true")
        .run();
    assert!(run.success(), "{}", run.context());
    child::assert_lacks(&run.stdout(), "FAILED");
}

/// A provider answering "Blue", after a 429 that the harness retries.
fn rate_limited_once() -> FakeProvider {
    let server = FakeProvider::builder().echo_text("Blue").start();
    server.push(Reply::rate_limited(
        Wire::OpenAi,
        std::time::Duration::from_millis(1),
    ));
    server
}

#[test]
fn prompt_tester_log_writes_the_call_path_to_stderr_and_leaves_stdout_to_libtest() {
    let server = rate_limited_once();
    let scratch = Scratch::new("platform", "log");
    let run = scratch
        .child(fixture("platform_fixture"))
        .args(["fake_call", "--exact", "--record"])
        .base_urls(&server)
        .env("PROMPT_TESTER_LOG", "debug")
        .run();
    assert_eq!(run.code(), Some(0), "{}", run.context());
    let stderr = run.stderr();
    for event in [
        "call{test=fake_call run=1 role=subject provider=openai model=fake-model",
        "reading the cassette",
        "cassette looked up",
        "calling the provider",
        "the provider answered status=429",
        "retrying",
        "the provider answered status=200",
        "answered latency_ms=",
        "recording the answer",
        "recorded",
    ] {
        assert!(stderr.contains(event), "no {event:?} in the log:\n{stderr}");
    }
    // stdout keeps libtest's lines only.
    for line in run.stdout().lines() {
        assert!(
            line.is_empty()
                || line.starts_with("running ")
                || line.starts_with("test ")
                || line.starts_with("test result:"),
            "not a libtest line on stdout: {line:?}\n{}",
            run.stdout()
        );
    }

    // Replayed without the variable: nothing is logged.
    let quiet = scratch
        .child(fixture("platform_fixture"))
        .args(["fake_call", "--exact"])
        .env("CI", "true")
        .run();
    assert_eq!(quiet.code(), Some(0), "{}", quiet.context());
    for word in [" DEBUG ", "cassette looked up", "call{"] {
        child::assert_lacks(&quiet.stderr(), word);
    }
    // Replayed with it: the lookup and the replay, no provider.
    let replayed = scratch
        .child(fixture("platform_fixture"))
        .args(["fake_call", "--exact"])
        .env("CI", "true")
        .env("PROMPT_TESTER_LOG", "debug")
        .run();
    assert_eq!(replayed.code(), Some(0), "{}", replayed.context());
    replayed.assert_stderr_has("replayed latency_ms=");
    child::assert_lacks(&replayed.stderr(), "calling the provider");
}

#[test]
fn the_log_follows_a_call_of_the_application_s_own_client_through_the_endpoint() {
    const SECRET: &str = "sk-fake-platform-log-0123456789";
    let server = FakeProvider::builder().echo_text("Blue").start();
    let scratch = Scratch::new("platform", "endpoint-log");
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n",
        server.base_url(Wire::OpenAi)
    ));
    let run = scratch
        .child(fixture("endpoint_fixture"))
        .args(["relayed", "--exact"])
        .env("FAKE_API_KEY", SECRET)
        .env("PROMPT_TESTER_LOG", "debug")
        .run();
    assert_eq!(run.code(), Some(0), "{}", run.context());
    let stderr = run.stderr();
    for event in [
        "endpoint{method=POST}",
        "a request of the application's client test=relayed run=1 provider=fake path=/v1/chat/completions",
        "cassette looked up",
        "recording the answer",
        "answered the client status=200",
    ] {
        assert!(stderr.contains(event), "no {event:?} in the log:\n{stderr}");
    }
    child::assert_lacks(&stderr, SECRET);
}

#[test]
fn an_unknown_log_level_is_an_error_naming_the_variable_and_the_levels() {
    let scratch = Scratch::new("platform", "bad-log");
    for (var, value, says) in [
        (
            "PROMPT_TESTER_LOG",
            "loud",
            "PROMPT_TESTER_LOG=\"loud\" is not a log level; use one of off, error, warn, info, debug, trace",
        ),
        (
            "RUST_LOG",
            "prompt_tester=[",
            "RUST_LOG=\"prompt_tester=[\" is not a log filter",
        ),
    ] {
        let run = scratch
            .child(fixture("platform_fixture"))
            .args(["installs_a_tls_provider", "--exact"])
            .env(var, value)
            .run();
        assert_eq!(run.code(), Some(2), "{var}={value}: {}", run.context());
        run.assert_stderr_has(says);
        child::assert_lacks(&run.stdout(), "test result");
    }
}
