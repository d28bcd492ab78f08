//! Cassettes end to end: record against a loopback provider, replay with it stopped, detect a changed
//! prompt, ignore a trial with neither recording nor key (fail it under CI), `live_only`, redact secrets,
//! prune unused entries (and refuse to prune after a partial run), many processes recording into one
//! file, a writer killed with SIGKILL; two test targets sharing the cassettes (`targets.rs`), and names
//! that once shared a file or made one too long (`names.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use prompt_tester_testkit::FakeProvider;
use prompt_tester_testkit::child::Scratch;

#[path = "cassettes/conversations.rs"]
mod conversations;
#[path = "cassettes/names.rs"]
mod names;
#[path = "cassettes/targets.rs"]
mod targets;

/// The harness fixture: the prompt tests these tests run.
const FIXTURE: &str = "harness_fixture";

const SECRET: &str = "sk-fake-0123456789abcdef";

fn scratch_with_fake(name: &str, server: &FakeProvider) -> Scratch {
    scratch_with_fake_and(name, server, "")
}

/// A scratch root whose configuration has the loopback `fake` endpoint, then `more`.
fn scratch_with_fake_and(name: &str, server: &FakeProvider, more: &str) -> Scratch {
    let scratch = Scratch::new("harness", name);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n{more}",
        server.base_url(prompt_tester_testkit::Wire::OpenAi)
    ));
    scratch
}

#[test]
fn record_then_replay_offline_then_detect_a_changed_prompt() {
    // The server echoes the key back: it must not reach the cassette.
    let server = FakeProvider::builder()
        .echo_text(format!("Blue, and your key is {SECRET}"))
        .start();
    let scratch = scratch_with_fake("record", &server);
    let key = [("FAKE_API_KEY", SECRET)];

    let record = scratch.run_example(
        FIXTURE,
        &["fake_recorded", "--exact", "--record", "--nocapture"],
        &key,
    );
    assert_eq!(
        record.code(),
        Some(0),
        "{}\n{}",
        record.stdout(),
        record.stderr()
    );
    assert_eq!(server.request_count(), 2, "one call per run");
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let text = std::fs::read_to_string(&file).expect("cassette written");
    assert!(
        !text.contains(SECRET),
        "the key leaked into the cassette:\n{text}"
    );
    assert!(text.contains("[REDACTED:FAKE_API_KEY]"), "{text}");
    assert!(!text.contains("127.0.0.1"), "no base URL in cassettes");
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let runs: Vec<u64> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["run"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, vec![1, 2], "two distinct recorded samples");
    // The captured request carried the key in its header only.
    let request = &server.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );

    // Replay with the server gone and no key.
    drop(server);
    let replay = scratch.run_example(FIXTURE, &["fake_recorded", "--exact", "--nocapture"], &[]);
    assert_eq!(
        replay.code(),
        Some(0),
        "{}\n{}",
        replay.stdout(),
        replay.stderr()
    );
    replay.assert_stdout_has("replayed=true");
    replay.assert_stderr_has("(2 replayed from cassettes)");

    // A changed input has no recording: under CI it fails without calling (locally with a key it
    // would be made and go pending) and says what changed and how to record it.
    let changed = scratch.run_example(
        FIXTURE,
        &["fake_recorded", "--exact"],
        &[("FIXTURE_THING", "shape"), ("CI", "true")],
    );
    assert_eq!(changed.code(), Some(101), "{}", changed.stdout());
    // What changed is named, with the command that records the new answers as pending.
    changed.assert_stdout_has("fake_recorded.cassette.json has 1 recording(s) of this sample but none for this call \
             (subject call of run 1/2). Changed since it was recorded: prompt: -\"Name a colour.\" +\"Name a shape.\". \
             Record the new answers as pending with: \
             PROMPT_TESTER_CASSETTE=record cargo test --test harness_fixture -- fake_recorded \
             (then review them: cargo prompt-tester review)");

    // Replay-only mode with a missing recording fails too.
    let strict = scratch.run_example(
        FIXTURE,
        &["fake_recorded", "--exact"],
        &[
            ("FIXTURE_THING", "shape"),
            ("PROMPT_TESTER_CASSETTE", "replay"),
        ],
    );
    assert_eq!(strict.code(), Some(101));
}

#[test]
fn without_recording_or_key_the_trial_is_ignored_locally_and_fails_under_ci() {
    // `nested::fake_colour` calls OpenAI at its public URL, which needs OPENAI_API_KEY.
    let scratch = Scratch::new("harness", "nokey");
    let run = scratch.run_example(FIXTURE, &["nested::fake_colour", "--exact"], &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stdout());
    let record = "OPENAI_API_KEY=... PROMPT_TESTER_CASSETTE=record cargo test --test harness_fixture -- nested::fake_colour";
    assert_eq!(
        run.outcome("nested::fake_colour"),
        format!(
            "ignored (no recording in prompt-tests/cassettes/nested.fake_colour.cassette.json and OPENAI_API_KEY \
             is not set; record it with: {record})"
        )
    );

    // Under CI a test nobody recorded fails, with the command that records it.
    let ci = scratch.run_example(
        FIXTURE,
        &["nested::fake_colour", "--exact"],
        &[("CI", "true")],
    );
    assert_eq!(ci.code(), Some(101), "{}", ci.stdout());
    assert_eq!(ci.outcome("nested::fake_colour"), "FAILED");
    ci.assert_stdout_has(
        "no recording for this call in prompt-tests/cassettes/nested.fake_colour.cassette.json (subject call \
             of run 1/1). Under CI, auto mode never calls a provider for a missing recording"
    );
    ci.assert_stdout_has(record);

    // With cassettes off the call is made, and the missing key is a failure, not a silent skip.
    let off = scratch.run_example(
        FIXTURE,
        &["nested::fake_colour", "--exact", "--no-cassette"],
        &[],
    );
    assert_eq!(off.code(), Some(101));
    off.assert_stdout_has("OPENAI_API_KEY is not set");
}

#[test]
fn a_named_endpoint_without_its_key_is_called_without_one() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("optionalkey", &server);
    let run = scratch.run_example(FIXTURE, &["fake_recorded", "--exact"], &[]);
    run.assert_success();
    assert_eq!(run.outcome("fake_recorded"), "ok");
    assert_eq!(
        server.request_count(),
        2,
        "auto mode records: one call per run"
    );
    for request in server.requests() {
        assert_eq!(request.header("authorization"), None, "no key is sent");
    }
    assert!(
        scratch
            .cassettes()
            .join("fake_recorded.cassette.json")
            .exists()
    );
}

#[test]
fn the_value_of_a_key_variable_of_any_name_is_redacted() {
    const PASSPHRASE: &str = "correct-horse-battery-staple";
    let server = FakeProvider::builder()
        .echo_text(format!("Blue, and your key is {PASSPHRASE}"))
        .start();
    let scratch = Scratch::new("harness", "anyname");
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_PASSPHRASE\"\n",
        server.base_url(prompt_tester_testkit::Wire::OpenAi)
    ));
    let report = scratch.0.join("report.json");
    let run = scratch.run_example(
        FIXTURE,
        &[
            "fake_recorded",
            "--exact",
            "--record",
            "--report",
            report.to_str().unwrap(),
        ],
        &[("FAKE_PASSPHRASE", PASSPHRASE)],
    );
    run.assert_success();
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {PASSPHRASE}").as_str())
    );
    let cassette =
        std::fs::read_to_string(scratch.cassettes().join("fake_recorded.cassette.json")).unwrap();
    let report = std::fs::read_to_string(&report).unwrap();
    for (what, text) in [("cassette", &cassette), ("report", &report)] {
        assert!(
            !text.contains(PASSPHRASE),
            "the key leaked into the {what}:\n{text}"
        );
        assert!(
            text.contains("[REDACTED:FAKE_PASSPHRASE]"),
            "{what}: {text}"
        );
    }
}

#[test]
fn live_only_without_a_recording_is_ignored_in_ci_too_and_runs_live() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("liveonly", &server);
    for ci in ["true", "false"] {
        let run = scratch.run_example(
            FIXTURE,
            &["fake_live_only", "--exact"],
            &[("FAKE_API_KEY", SECRET), ("CI", ci)],
        );
        assert_eq!(run.code(), Some(0), "CI={ci}: {}", run.stdout());
        let outcome = run.outcome("fake_live_only");
        assert!(
            outcome.starts_with(
                "ignored (live only, not run: no recording in prompt-tests/cassettes/fake_live_only.cassette.json; \
                 run it live with PROMPT_TESTER_CASSETTE=off"
            ),
            "CI={ci}: {outcome}"
        );
        // The summary lists it apart from the ignored trials.
        let stderr = run.stderr();
        assert!(
            stderr.contains("0 passed, 0 failed, 0 errored, 0 ignored, 1 live only;")
                && stderr.contains("live only, not run: fake_live_only"),
            "CI={ci}: {stderr}"
        );
        assert_eq!(server.request_count(), 0, "CI={ci}: no provider call");
    }

    // A live run calls the provider, in CI too.
    let live = scratch.run_example(
        FIXTURE,
        &["fake_live_only", "--exact", "--no-cassette"],
        &[("CI", "true")],
    );
    assert_eq!(live.code(), Some(0), "{}", live.stdout());
    assert_eq!(live.outcome("fake_live_only"), "ok");
    assert_eq!(server.request_count(), 1);

    // Once recorded, it replays like any other test.
    let record = scratch.run_example(FIXTURE, &["fake_live_only", "--exact", "--record"], &[]);
    assert_eq!(record.code(), Some(0), "{}", record.stdout());
    drop(server);
    let replay = scratch.run_example(FIXTURE, &["fake_live_only", "--exact"], &[("CI", "true")]);
    assert_eq!(replay.outcome("fake_live_only"), "ok");
    replay.assert_stderr_has("(1 replayed from cassettes)");
}

#[test]
fn under_nextest_only_trials_that_would_be_ignored_are_flagged_up_front() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("nextest", &server);
    let ignored = |ci: &str| {
        let run = scratch.run_example(
            FIXTURE,
            &["--list", "--ignored"],
            &[("NEXTEST_RUN_ID", "1"), ("CI", ci)],
        );
        run.stdout()
            .lines()
            .map(|l| l.trim_end_matches(": test").to_string())
            .collect::<Vec<_>>()
    };
    let local = ignored("false");
    assert!(local.contains(&"fake_live_only".to_string()), "{local:?}");
    assert!(
        local.contains(&"nested::fake_colour".to_string()),
        "no key: {local:?}"
    );
    // Under CI an unrecorded test must run (and fail); a live-only one is still ignored.
    let ci = ignored("true");
    assert!(ci.contains(&"fake_live_only".to_string()), "{ci:?}");
    assert!(!ci.contains(&"nested::fake_colour".to_string()), "{ci:?}");
}

#[test]
fn under_ci_auto_mode_fails_a_missing_recording_without_calling_even_with_a_key() {
    let server = FakeProvider::start();
    let scratch = scratch_with_fake("auto", &server);
    let file = scratch.cassettes().join("fake_recorded.cassette.json");
    let ci = scratch.run_example(
        FIXTURE,
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "true")],
    );
    assert_eq!(ci.code(), Some(101), "{}", ci.stdout());
    assert_eq!(ci.outcome("fake_recorded"), "FAILED");
    ci.assert_stdout_has("record it and commit the cassette: PROMPT_TESTER_CASSETTE=record cargo test --test harness_fixture -- \
             fake_recorded");
    assert_eq!(server.request_count(), 0, "no provider call under CI");
    assert!(!file.exists(), "auto mode wrote a cassette under CI");
    let local = scratch.run_example(
        FIXTURE,
        &["fake_recorded", "--exact"],
        &[("FAKE_API_KEY", SECRET), ("CI", "false")],
    );
    assert_eq!(local.code(), Some(0), "{}", local.stdout());
    assert!(file.exists(), "auto mode records when a key is set");
    // Recorded, it replays under CI.
    let replay = scratch.run_example(FIXTURE, &["fake_recorded", "--exact"], &[("CI", "true")]);
    assert_eq!(replay.code(), Some(0), "{}", replay.stdout());
    assert_eq!(server.request_count(), 2);
}

/// Runs only TOML suites (its crate root's): a full run of it can pass, and so prune.
const SUITES_ONLY: &str = "cassette_fixture";

/// Writes the suite `prompt-tests/<name>.evals.toml`: one case per `(case, thing)` pair, each asking
/// the fake provider to "Name a <thing>." `runs` times and checking the echo.
fn suite(scratch: &Scratch, name: &str, runs: u32, cases: &[(&str, &str)]) {
    let mut text = format!(
        "prompt = \"Name a {{thing}}.\"\nprovider = \"fake\"\nmodel = \"fake-model\"\nruns = {runs}\n"
    );
    for (case, thing) in cases {
        text.push_str(&format!(
            "[[cases]]\nname = \"{case}\"\ninputs = {{ thing = \"{thing}\" }}\nassert = [{{ contains = \"echo: Name a\" }}]\n"
        ));
    }
    write_suite(scratch, name, &text);
}

fn write_suite(scratch: &Scratch, name: &str, text: &str) {
    let path = scratch
        .0
        .join("prompt-tests")
        .join(format!("{name}.evals.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The entries of a cassette file; panics (naming the file) when it does not parse.
fn entries(file: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let body: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
    body["entries"].as_array().unwrap().clone()
}

/// The lines of `text` that contain `needle`.
fn lines_with(text: &str, needle: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(needle))
        .map(str::to_string)
        .collect()
}

/// The `test` of every entry, sorted.
fn tests_in(file: &Path) -> Vec<String> {
    let mut tests: Vec<String> = entries(file)
        .iter()
        .map(|e| format!("{}#{}", e["test"].as_str().unwrap(), e["run"]))
        .collect();
    tests.sort();
    tests
}

/// Every file of a directory tree, as relative paths (for a failure message).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(listing) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

/// What `git status` would show in `root` besides the given files: `root` is made a git repository
/// with no global ignore rules, so only the ignore files under `root` count.
fn git_shows(root: &Path, expected: &[&str]) -> Vec<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "core.excludesFile=/dev/null"])
            .args(args)
            .current_dir(root)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .expect("git runs (it is needed by this test)");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    if !root.join(".git").exists() {
        git(&["init", "--quiet"]);
    }
    git(&["status", "--porcelain", "--untracked-files=all"])
        .lines()
        .map(|l| l[3..].to_string())
        .filter(|path| !expected.contains(&path.as_str()))
        .collect()
}

#[test]
fn many_processes_recording_into_one_cassette_keep_every_entry() {
    // As nextest runs it: one process per case, all recording into the suite's one cassette. The
    // latency lines their writes up.
    const CASES: usize = 24;
    let server = FakeProvider::builder()
        .latency(Duration::from_millis(150))
        .start();
    let scratch = scratch_with_fake("stress", &server);
    let names: Vec<(String, String)> = (1..=CASES)
        .map(|i| (format!("c{i:02}"), format!("thing {i}")))
        .collect();
    let cases: Vec<(&str, &str)> = names
        .iter()
        .map(|(c, t)| (c.as_str(), t.as_str()))
        .collect();
    suite(&scratch, "stress", 2, &cases);
    let started = Instant::now();
    let children: Vec<_> = names
        .iter()
        .map(|(case, _)| {
            let trial = format!("stress::{case}");
            scratch
                .command(
                    SUITES_ONLY,
                    &["--exact", &trial, "--record"],
                    &[("FAKE_API_KEY", SECRET)],
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("the fixture starts")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    eprintln!("{CASES} concurrent recorders took {:?}", started.elapsed());
    assert_eq!(server.request_count(), 2 * CASES);
    let file = scratch.cassettes().join("stress.cassette.json");
    let mut expected: Vec<String> = names
        .iter()
        .flat_map(|(case, _)| (1..=2).map(move |run| format!("stress::{case}#{run}")))
        .collect();
    expected.sort();
    assert_eq!(tests_in(&file), expected, "every recording is kept");
}

/// A scratch root with two recorded suites: `a` (two cases, two runs each) and `b` (one case, one run).
fn recorded_suites(name: &str, server: &FakeProvider) -> Scratch {
    let scratch = scratch_with_fake(name, server);
    suite(&scratch, "a", 2, &[("x", "colour"), ("y", "shape")]);
    suite(&scratch, "b", 1, &[("z", "fruit")]);
    let record = scratch.run_example(SUITES_ONLY, &["--record"], &[("FAKE_API_KEY", SECRET)]);
    record.assert_success();
    scratch
}

/// The bytes of every cassette file, to check that nothing changed.
fn snapshot(scratch: &Scratch) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(&scratch.cassettes())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".cassette.json"))
        .map(|p| {
            let bytes = std::fs::read(scratch.cassettes().join(&p)).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn prune_refuses_a_run_that_did_not_replay_every_test_and_keeps_every_file() {
    let server = FakeProvider::start();
    let scratch = recorded_suites("prune-refused", &server);
    let before = snapshot(&scratch);
    assert_eq!(before.len(), 2, "{before:?}");
    let key = ("FAKE_API_KEY", SECRET);
    type Env<'a> = &'a [(&'a str, &'a str)];
    let refusals: [(&[&str], Env, &str); 5] = [
        // The reproduced scenarios: cassettes off (every case ran, live) and `--ignored`.
        (
            &["--prune-cassettes"],
            &[key, ("PROMPT_TESTER_CASSETTE", "off")],
            "cassettes are off",
        ),
        (
            &["--prune-cassettes", "--no-cassette"],
            &[key],
            "cassettes are off",
        ),
        (&["--prune-cassettes", "--ignored"], &[key], "--ignored"),
        (
            &["--prune-cassettes", "--include-ignored"],
            &[key],
            "--include-ignored",
        ),
        (&["--prune-cassettes", "a::x", "--exact"], &[], "no filter"),
    ];
    for (args, env, reason) in refusals {
        let run = scratch.run_example(SUITES_ONLY, args, env);
        let refusal = lines_with(&run.stderr(), "--prune-cassettes refused");
        assert!(
            refusal.len() == 1 && refusal[0].contains(reason),
            "{args:?}: one line saying {reason:?}:\n{}",
            run.stderr()
        );
        assert_ne!(
            run.code(),
            Some(0),
            "{args:?}: a refused prune fails the run"
        );
        assert_eq!(snapshot(&scratch), before, "{args:?} changed a cassette");
    }

    // A trial that fails (here: a suite file broken by a typo) makes the run partial too.
    write_suite(
        &scratch,
        "b",
        "prompt = \"Name a {thing}.\"\n[[cases]]\nname = \"z\"\nassert = [",
    );
    let broken = scratch.run_example(SUITES_ONLY, &["--prune-cassettes"], &[]);
    assert_eq!(broken.outcome("b::suite_file_error"), "FAILED");
    broken.assert_stderr_has(
        "--prune-cassettes refused: 1 trial(s) did not pass (b::suite_file_error: failed)",
    );
    assert_eq!(broken.code(), Some(101));
    assert_eq!(snapshot(&scratch), before, "a failed run pruned");
}

#[test]
fn prune_removes_recordings_no_test_uses_and_keeps_skipped_cases() {
    let server = FakeProvider::start();
    let scratch = recorded_suites("prune", &server);
    let key = ("FAKE_API_KEY", SECRET);
    // Case `a::y` is renamed `a::w`: its first recording goes in beside the old case's, which no
    // test uses any more.
    suite(&scratch, "a", 2, &[("x", "colour"), ("w", "planet")]);
    let again = scratch.run_example(SUITES_ONLY, &["a::w", "--record"], &[key]);
    again.assert_success();
    let a = scratch.cassettes().join("a.cassette.json");
    assert_eq!(entries(&a).len(), 6, "the recordings of a::y and of a::w");
    // `b::z` is skipped for now, and a cassette's suite is gone.
    write_suite(
        &scratch,
        "b",
        "prompt = \"Name a {thing}.\"\nprovider = \"fake\"\nmodel = \"fake-model\"\n[[cases]]\nname = \"z\"\nskip = \"later\"\n",
    );
    let b = scratch.cassettes().join("b.cassette.json");
    let b_before = std::fs::read(&b).unwrap();
    let stray = scratch.cassettes().join("renamed_away.cassette.json");
    std::fs::copy(&a, &stray).unwrap();
    // An image only the stray cassette's test named (no cassette names it now).
    let media = scratch.cassettes().join("media");
    std::fs::create_dir_all(&media).unwrap();
    let image = media.join(format!("{}.png", "3f".repeat(32)));
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n").unwrap();

    let pruned = scratch.run_example(SUITES_ONLY, &["--prune-cassettes"], &[]);
    pruned.assert_success();
    assert!(!stray.exists(), "{}", pruned.stderr());
    assert!(!image.exists(), "{}", pruned.stderr());
    assert_eq!(
        lines_with(&pruned.stderr(), "no cassette names it"),
        [format!(
            "removed prompt-tests/cassettes/media/{}.png (no cassette names it)",
            "3f".repeat(32)
        )]
    );
    assert_eq!(
        lines_with(&pruned.stderr(), "cassette.json"),
        [
            "pruned 2 unused recording(s) from prompt-tests/cassettes/a.cassette.json (4 kept)",
            "removed prompt-tests/cassettes/renamed_away.cassette.json (6 recording(s); no test uses it)",
        ],
        "{}",
        pruned.stderr()
    );
    assert_eq!(
        tests_in(&a),
        ["a::w#1", "a::w#2", "a::x#1", "a::x#2"],
        "the current recordings stay"
    );
    assert_eq!(
        std::fs::read(&b).unwrap(),
        b_before,
        "a skipped case keeps its recordings"
    );
}

/// How often the fixture's run listed the cassette folder and read a cassette file (`FIXTURE_READS`).
fn reads_of(run: &prompt_tester_testkit::child::Run) -> (usize, usize) {
    let stderr = run.stderr();
    let line = lines_with(&stderr, "cassette folder listed");
    let numbers: Vec<usize> = line
        .first()
        .unwrap_or_else(|| panic!("no count of reads:\n{stderr}"))
        .split(' ')
        .filter_map(|word| word.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

#[test]
fn a_run_lists_the_cassette_folder_once_and_reads_each_cassette_once() {
    let server = FakeProvider::start();
    let judge = "[judge]\nprovider = \"fake\"\nmodel = \"fake-judge\"\n";
    let scratch = scratch_with_fake_and("reads", &server, judge);
    suite(&scratch, "a", 2, &[("x", "colour"), ("y", "shape")]);
    suite(&scratch, "b", 1, &[("z", "fruit")]);
    let key = ("FAKE_API_KEY", SECRET);
    scratch
        .run_example(SUITES_ONLY, &["--record"], &[key])
        .assert_success();
    let reads = ("FIXTURE_READS", "1");
    let replay = ("PROMPT_TESTER_CASSETTE", "replay");

    // A filter that selects nothing: the folder once (for the labels and the pending recordings, by
    // the walk of the suite roots that hold it), no cassette.
    let nothing = scratch.run_example(SUITES_ONLY, &["no_such_test"], &[reads, replay]);
    nothing.assert_success();
    assert_eq!(reads_of(&nothing), (1, 0), "{}", nothing.stderr());

    // Every test replayed, every report written, and a prune that reads a file no test opens.
    let a = scratch.cassettes().join("a.cassette.json");
    std::fs::copy(&a, scratch.cassettes().join("stray.cassette.json")).unwrap();
    let out = scratch.0.join("out");
    let report = |name: &str| out.join(name).to_string_lossy().into_owned();
    let (html, junit, json, markdown) = (
        report("r.html"),
        report("junit.xml"),
        report("r.json"),
        report("r.md"),
    );
    let args = [
        "--prune-cassettes",
        "--html",
        &html,
        "--junit",
        &junit,
        "--report",
        &json,
        "--markdown",
        &markdown,
    ];
    let full = scratch.run_example(SUITES_ONLY, &args, &[reads, replay]);
    full.assert_success();
    for path in [&html, &junit, &json, &markdown] {
        assert!(Path::new(path).is_file(), "{path}: {}", full.stderr());
    }
    assert!(
        !scratch.cassettes().join("stray.cassette.json").exists(),
        "{}",
        full.stderr()
    );
    assert_eq!(
        reads_of(&full),
        (1, 3),
        "one listing; a, b and the stray file read once each:\n{}",
        full.stderr()
    );
}

#[test]
fn a_writer_killed_mid_write_leaves_parseable_cassettes_and_nothing_for_git() {
    let server = FakeProvider::builder()
        .latency(Duration::from_millis(50))
        .start();
    // Killed while it merges under the lock...
    let scratch = killable("kill-lock", &server);
    let left = kill_recorder_when(&scratch, named(".lock")).expect("the writer locked");
    assert_recoverable(&scratch, &left);
    // ... and between creating its temporary file and renaming it: a window of a few milliseconds
    // (the fsync), so several tries: on a loaded machine the poll can miss it a few times in a row.
    let (scratch, left) = (1..=20)
        .find_map(|i| {
            let scratch = killable(&format!("kill-tmp{i}"), &server);
            let left = kill_recorder_when(&scratch, named(".tmp"))?;
            Some((scratch, left))
        })
        .expect("no try killed the writer while its temporary file existed");
    assert!(named(".tmp")(&left), "{left:?}");
    assert_recoverable(&scratch, &left);
}

/// Whether a file whose name contains `part` is among `files`.
fn named(part: &'static str) -> impl Fn(&[PathBuf]) -> bool {
    move |files| files.iter().any(|f| f.to_string_lossy().contains(part))
}

/// The files git may show in a [`killable`] root.
const KILLABLE_FILES: [&str; 3] = [
    "prompt-tester.toml",
    "prompt-tests/k.evals.toml",
    "prompt-tests/cassettes/k.cassette.json",
];

/// A root with the suite `k` and a big cassette for it: each write takes a while (read, merge,
/// pretty-print, fsync), so a kill can land in one.
fn killable(name: &str, server: &FakeProvider) -> Scratch {
    let scratch = scratch_with_fake(name, server);
    suite(&scratch, "k", 1, &[("x", "colour")]);
    std::fs::create_dir_all(scratch.cassettes()).unwrap();
    let file = scratch.cassettes().join("k.cassette.json");
    std::fs::write(file, big_cassette(2_000)).unwrap();
    assert_eq!(git_shows(&scratch.0, &KILLABLE_FILES), Vec::<String>::new());
    scratch
}

/// Records in `scratch` and SIGKILLs the writer as soon as the files of the cassette directory satisfy
/// `when`; returns the files it left, or `None` when it ended first.
fn kill_recorder_when(
    scratch: &Scratch,
    when: impl Fn(&[PathBuf]) -> bool,
) -> Option<Vec<PathBuf>> {
    let mut child = scratch
        .command(SUITES_ONLY, &["--record"], &[("FAKE_API_KEY", SECRET)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let files = files_under(&scratch.cassettes());
        if when(&files) {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(
            Instant::now() < deadline,
            "nothing happened in 60 s: {files:?}"
        );
        std::thread::yield_now();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    Some(files_under(&scratch.cassettes()))
}

/// After a killed writer: every cassette parses, git shows nothing new, and the next run is not
/// blocked by the leftovers, records, and leaves nothing for git either.
fn assert_recoverable(scratch: &Scratch, left: &[PathBuf]) {
    for path in left {
        if path.to_string_lossy().ends_with(".cassette.json") {
            entries(&scratch.cassettes().join(path));
        }
    }
    assert_eq!(
        git_shows(&scratch.0, &KILLABLE_FILES),
        Vec::<String>::new(),
        "git would show leftovers of the killed writer; the files: {left:?}"
    );
    let next = scratch.run_example(SUITES_ONLY, &["--record"], &[("FAKE_API_KEY", SECRET)]);
    next.assert_success();
    assert_eq!(
        entries(&scratch.cassettes().join("k.cassette.json")).len(),
        2_001
    );
    assert_eq!(git_shows(&scratch.0, &KILLABLE_FILES), Vec::<String>::new());
}

/// A cassette of `n` recordings of a test that no longer exists (it makes writes slow).
fn big_cassette(n: usize) -> String {
    let entries: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "key": format!("{i:024x}"),
                "test": "old::case",
                "run": 1,
                "role": "subject",
                "provider": "fake",
                "model": "fake-model",
                "request": prompt_tester::CompletionRequest::new("fake-model", format!("Old prompt {i}"), 64),
                "response": prompt_tester::CompletionResult::new(format!("Old answer {i}, a few words long."), 10, 8),
                "latency_ms": 5,
                "recorded_at": "2026-01-01T00:00:00Z",
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "version": prompt_tester::testing::cassette::FORMAT_VERSION, "entries": entries })).unwrap()
}
