//! The harness under a real `cargo nextest run`: nextest lists the trials (`--list --format terse`, and
//! again with `--ignored`), then runs each in its own process (`--exact NAME`) and reads its exit
//! status. A trial that does not run must never look like a pass there: what is known before the run is
//! listed ignored (nextest shows SKIP), what is found only while running fails (FAIL).
//!
//! nextest runs the test targets of a crate: the scratch crate's one target, `prompts`, is a few lines
//! that run the `cassette_fixture` harness (built with the tests) with nextest's arguments, so only
//! that small crate is compiled here.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use prompt_tester_testkit::child::{self, Scratch};
use prompt_tester_testkit::{FakeProvider, Wire};
use serde_json::Value;

#[path = "nextest/index.rs"]
mod index;

const KEY: &str = "sk-fake-subject-key";

/// The scratch crate: its `prompts` target runs the harness binary named by `PT_HARNESS`.
fn wrapper_crate(scratch: &Scratch) {
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"pt-nextest\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[workspace]\n\n\
         [[test]]\nname = \"prompts\"\npath = \"prompts.rs\"\nharness = false\n",
    );
    scratch.file(
        "prompts.rs",
        "fn main() {\n    if let (Some(dir), Some(run)) = (std::env::var_os(\"PT_CORRUPT_LEDGER\"), \
         std::env::var_os(\"NEXTEST_RUN_ID\")) {\n        \
         let path = std::path::Path::new(&dir).join(format!(\"{}.json\", run.to_string_lossy()));\n        \
         if !path.exists() {\n            std::fs::create_dir_all(&dir).unwrap();\n            \
         std::fs::write(&path, \"{\\\"nextest_run\\\": \\\"garbage\").unwrap();\n        }\n    }\n    \
         let harness = std::env::var_os(\"PT_HARNESS\").expect(\"PT_HARNESS\");\n    \
         let status = std::process::Command::new(harness)\n        .args(std::env::args_os().skip(1))\n        \
         .status()\n        .expect(\"the harness runs\");\n    std::process::exit(status.code().unwrap_or(101));\n}\n",
    );
}

/// `cargo prompt-tester report` with `args` in the scratch crate (the binary built once per process).
fn report_command(scratch: &Scratch, args: &[&str]) -> child::Run {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let binary = BUILT.get_or_init(|| {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        child::built_binary("cargo-prompt-tester", &workspace)
    });
    child::Child::new(binary)
        .root(scratch.path())
        .args(["prompt-tester", "report"])
        .args(args)
        .run()
}

/// `cargo nextest run` with `args` on the scratch crate, in a clean environment with `env`; `None`
/// (after saying so) when cargo-nextest is not installed outside CI.
fn nextest(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Option<child::Run> {
    let mut cargo = child::cargo();
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if child::CLEARED.contains(&key.as_ref())
            || child::CLEARED_PREFIXES.iter().any(|p| key.starts_with(p))
        {
            cargo.env_remove(key.as_ref());
        }
    }
    cargo
        .args(["nextest", "run", "--no-fail-fast", "--color", "never"])
        .args(["--status-level", "all", "--final-status-level", "none"])
        .args(args)
        .arg("--manifest-path")
        .arg(scratch.path().join("Cargo.toml"))
        .current_dir(scratch.path())
        .env("CARGO_TARGET_DIR", scratch.path().join("target"))
        .env("PT_HARNESS", child::example_binary("cassette_fixture"))
        .env("NO_COLOR", "1");
    for (key, value) in env {
        cargo.env(key, value);
    }
    let run = child::Run(cargo.output().expect("cargo runs"));
    if !run.success() && run.stderr().contains("no such command") {
        let message = "cargo-nextest is not installed: `cargo install --locked cargo-nextest`";
        assert!(
            !prompt_tester::config::is_ci(),
            "{message} (required under CI)"
        );
        eprintln!("SKIPPED: {message}");
        return None;
    }
    Some(run)
}

/// The status nextest printed for `trial` (`PASS`, `FAIL`, `SKIP`, ...): its line ends with the test.
fn status(run: &child::Run, trial: &str) -> String {
    let out = format!("{}\n{}", run.stdout(), run.stderr());
    out.lines()
        .find(|l| l.ends_with(&format!(" pt-nextest::prompts {trial}")))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no status line for {trial}:\n{}", run.context()))
        .to_string()
}

/// The suite `mixed`: a recorded case, a `live_only` one never recorded, and a `live_only` one whose
/// recording no longer matches (its input is `changed`).
fn mixed_suite(scratch: &Scratch, changed: &str) {
    let case = |name: &str, thing: &str, live_only: bool| {
        format!(
            "[[cases]]\nname = \"{name}\"\nlive_only = {live_only}\ninputs = {{ thing = \"{thing}\" }}\n\
             assert = [{{ contains = \"echo: Name a\" }}]\n"
        )
    };
    scratch.file(
        "prompt-tests/mixed.evals.toml",
        &format!(
            "prompt = \"Name a {{thing}}.\"\nprovider = \"fake\"\nmodel = \"fake-model\"\n{}{}{}",
            case("recorded", "colour", false),
            case("live", "shape", true),
            case("changed", changed, true),
        ),
    );
}

/// A crate whose subject is the fake provider (a named endpoint: no key needed) and whose judge is
/// Anthropic at its public URL, whose key is never set; with the suites `mixed` (after recording,
/// `mixed::changed`'s input changes) and `judged` (a `judge` assertion, nothing recorded).
fn recorded(group: &str) -> (FakeProvider, Scratch) {
    let fake = FakeProvider::start();
    let scratch = Scratch::new("nextest", group);
    wrapper_crate(&scratch);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"FAKE_API_KEY\"\n\n\
         [judge]\nprovider = \"anthropic\"\nmodel = \"claude-haiku-4-5\"\n",
        fake.base_url(Wire::OpenAi),
    ));
    mixed_suite(&scratch, "square");
    scratch.file(
        "prompt-tests/judged.evals.toml",
        "prompt = \"Name a tree.\"\nprovider = \"fake\"\nmodel = \"fake-model\"\n\
         [[cases]]\nname = \"tree\"\nassert = [{ judge = \"It names a tree.\" }]\n",
    );
    let record = scratch.run_example(
        "cassette_fixture",
        &["mixed::", "--skip", "mixed::live"],
        &[("FAKE_API_KEY", KEY), ("PROMPT_TESTER_CASSETTE", "record")],
    );
    record.assert_success();
    assert_eq!(fake.request_count(), 2, "{}", record.context());
    mixed_suite(&scratch, "circle");
    (fake, scratch)
}

#[test]
fn a_trial_that_does_not_run_is_skipped_or_failed_under_nextest_never_passed() {
    let (fake, scratch) = recorded("unrun");
    // The subject's key is set, the judge's is not.
    let key = [("FAKE_API_KEY", KEY)];
    let Some(run) = nextest(&scratch, &[], &key) else {
        return;
    };
    assert_eq!(status(&run, "mixed::recorded"), "PASS", "{}", run.context());
    // Known before the run: a live-only case beside recorded ones, a judge without its key.
    assert_eq!(status(&run, "mixed::live"), "SKIP", "{}", run.context());
    assert_eq!(status(&run, "judged::tree"), "SKIP", "{}", run.context());
    // Found only while running: its own recording no longer matches.
    assert_eq!(status(&run, "mixed::changed"), "FAIL", "{}", run.context());
    // nextest shows the failing trial's output (on its stderr).
    child::assert_contains(
        &run.stderr(),
        &[
            "not run: live only, not run: no recording in prompt-tests/cassettes/mixed.cassette.json",
        ],
    );
    assert_eq!(run.code(), Some(100), "{}", run.context());
    assert_eq!(fake.request_count(), 2, "a skipped trial makes no call");

    // Asked to run the ignored ones, those that cannot run fail rather than pass.
    let ignored = nextest(&scratch, &["--run-ignored", "only"], &key).expect("nextest ran above");
    for trial in ["mixed::live", "judged::tree"] {
        assert_eq!(status(&ignored, trial), "FAIL", "{}", ignored.context());
    }
    child::assert_contains(&ignored.stderr(), &["not run: live only, not run"]);
}

#[test]
fn plain_cargo_test_still_reports_those_trials_ignored() {
    let (_fake, scratch) = recorded("plain");
    let run = scratch.run_example("cassette_fixture", &[], &[("FAKE_API_KEY", KEY)]);
    run.assert_success();
    assert_eq!(run.outcome("mixed::recorded"), "ok");
    for trial in ["mixed::live", "mixed::changed", "judged::tree"] {
        assert!(
            run.outcome(trial).starts_with("ignored"),
            "{trial}: {}",
            run.context()
        );
    }
    // libtest runs them to say why: none is listed ignored up front.
    let listed = scratch.run_example("cassette_fixture", &["--list", "--ignored"], &[]);
    assert!(listed.listed().is_empty(), "{}", listed.context());
}

/// A provider billing each call 25 input and 64 output tokens, and a wrapper crate in scratch root
/// `name` that calls it as `fake`, `fake-model` priced at $1 / $2 a million tokens.
fn priced_fake(name: &str) -> (FakeProvider, Scratch) {
    let fake = FakeProvider::builder()
        .usage(prompt_tester_testkit::Usage::new(25, 64))
        .start();
    let scratch = Scratch::new("nextest", name);
    wrapper_crate(&scratch);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n\n[prices.\"fake-model\"]\ninput_mtok = 1.0\n\
         output_mtok = 2.0\n",
        fake.base_url(Wire::OpenAi),
    ));
    (fake, scratch)
}

/// Under nextest every trial is its own process: the budget is one for the whole run, kept in the
/// crate's ledger under a lock. Five cases, a budget of three calls' worst cases: three calls reach
/// the server, two cases fail naming the budget.
#[test]
fn a_budget_holds_across_the_processes_of_a_nextest_run() {
    // "Q n": 1 token, a message (8) and the request (16); 64 output tokens at $1 / $2 a million: the
    // fake bills each call exactly that.
    let worst = (25.0 + 2.0 * 64.0) / 1e6;
    let (fake, scratch) = priced_fake("budget");
    let cases: String = (1..=5)
        .map(|i| format!("[[cases]]\nname = \"c{i}\"\ninputs = {{ q = \"{i}\" }}\n"))
        .collect();
    scratch.file(
        "prompt-tests/five.evals.toml",
        &format!(
            "prompt = \"Q {{q}}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_tokens = 64\n\
             assert = [{{ not_contains = \"zzz\" }}]\n{cases}"
        ),
    );
    let budget = format!("{:.6}", 3.0 * worst + worst / 3.0);
    let report = scratch.path().join("report.json");
    let report_path = report.display().to_string();
    // The JSON report asked of the run is written by `cargo prompt-tester report`, from every process's
    // results.
    let env = [
        ("PROMPT_TESTER_BUDGET", budget.as_str()),
        ("PROMPT_TESTER_CASSETTE", "off"),
        ("PROMPT_TESTER_REPORT", report_path.as_str()),
    ];
    let Some(run) = nextest(&scratch, &[], &env) else {
        return;
    };
    assert_eq!(fake.request_count(), 3, "{}", run.context());
    let statuses: Vec<String> = (1..=5)
        .map(|i| status(&run, &format!("five::c{i}")))
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| *s == "PASS").count(),
        3,
        "{statuses:?}\n{}",
        run.context()
    );
    assert_eq!(statuses.iter().filter(|s| *s == "FAIL").count(), 2);
    child::assert_contains(
        &run.stderr(),
        &[&format!(
            "budget of ${:.5} reached after $",
            3.0 * worst + worst / 3.0
        )],
    );
    assert!(
        !report.exists(),
        "under nextest no process writes the merged report"
    );
    report_command(&scratch, &[]).assert_success();
    // The JSON report, merged from every process, holds the whole run's spend and refusals.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let budget = &json["budget"];
    assert_eq!(budget["whole_nextest_run"], true, "{json}");
    assert_eq!(budget["refused_calls"], 2, "{budget}");
    let spent = budget["spent_usd"].as_f64().unwrap();
    assert!((spent - 3.0 * worst).abs() < 1e-12, "{budget}");
}

#[test]
fn nextest_runs_the_gates_of_a_dataset_one_process_each_and_never_its_rows() {
    let fake = FakeProvider::start();
    let scratch = Scratch::new("nextest", "gates");
    wrapper_crate(&scratch);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        fake.base_url(Wire::OpenAi),
    ));
    // The echo answers "echo: Q n": every row passes but b1, whose expected answer is not in it.
    let row = |id: &str, category: &str, q: &str, expected: &str| {
        format!(
            "{{\"id\": \"{id}\", \"category\": \"{category}\", \"q\": \"{q}\", \"expected\": \"{expected}\"}}\n"
        )
    };
    scratch.file(
        "prompt-tests/rows.jsonl",
        &[
            row("a1", "a", "1", "Q 1"),
            row("a2", "a", "2", "Q 2"),
            row("b1", "b", "3", "nope"),
            row("b2", "b", "4", "Q 4"),
        ]
        .concat(),
    );
    scratch.file(
        "prompt-tests/ds.evals.toml",
        "prompt = \"Q {q}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\ncases_file = \"rows.jsonl\"\n\
         assert = [{ contains = \"{expected}\" }]\n\n[gate]\npass_threshold = 0.75\n\n\
         [gate.categories]\na = 1.0\nb = 1.0\n",
    );
    let Some(run) = nextest(&scratch, &[], &[("PROMPT_TESTER_CASSETTE", "off")]) else {
        return;
    };
    assert_eq!(status(&run, "ds::gate"), "PASS", "{}", run.context());
    assert_eq!(status(&run, "ds::gate::a"), "PASS", "{}", run.context());
    assert_eq!(status(&run, "ds::gate::b"), "FAIL", "{}", run.context());
    // The rows are the gates' samples, not trials: nextest neither runs nor skips them.
    let out = format!("{}\n{}", run.stdout(), run.stderr());
    for row in ["a1", "a2", "b1", "b2"] {
        assert!(
            !out.lines()
                .any(|l| l.ends_with(&format!(" pt-nextest::prompts ds::{row}"))),
            "ds::{row} is listed:\n{out}"
        );
    }
    // Each gate's process runs the rows it counts: 4 + 2 + 2.
    assert_eq!(fake.request_count(), 8, "{}", run.context());
    child::assert_contains(&out, &["[row b1] FAILED: 1 of 1 assertion failed"]);
    // The estimate says so: 4 calls in one process, the 8 above under nextest.
    let estimate = child::Child::new(child::example_binary("cassette_fixture"))
        .root(scratch.path())
        .args(["--estimate"])
        .run();
    assert!(estimate.success(), "{}", estimate.context());
    child::assert_contains(
        &estimate.stderr(),
        &[
            "under nextest (a process per gate, each running the rows it counts): 8 model calls",
            "estimate (approximated figures are upper bounds; unknown calls are not counted): 4 model calls",
        ],
    );
    assert_eq!(fake.request_count(), 8, "the estimate calls nothing");
}

/// A crate of suite `mixed`: four cases against the echo, one failing its assertion, one of three
/// samples; recorded once, so every later run replays the same answers.
fn replayed(group: &str) -> (FakeProvider, Scratch) {
    let fake = FakeProvider::builder()
        .usage(prompt_tester_testkit::Usage::new(25, 7))
        .start();
    let scratch = Scratch::new("nextest", group);
    wrapper_crate(&scratch);
    scratch.config(&format!(
        "[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\n\n[prices.\"fake-model\"]\ninput_mtok = 1.0\n\
         output_mtok = 2.0\n",
        fake.base_url(Wire::OpenAi),
    ));
    scratch.file(
        "prompt-tests/mixed.evals.toml",
        "prompt = \"Say {word}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\n\
         assert = [{ contains = \"echo\" }]\n\
         [[cases]]\nname = \"one\"\ninputs = { word = \"one\" }\n\
         [[cases]]\nname = \"two\"\ninputs = { word = \"two\" }\n\
         [[cases]]\nname = \"sampled\"\nruns = 3\ninputs = { word = \"thrice\" }\n\
         [[cases]]\nname = \"wrong\"\ninputs = { word = \"nope\" }\nassert = [{ contains = \"absent\" }]\n",
    );
    let record = scratch.run_example(
        "cassette_fixture",
        &[],
        &[("PROMPT_TESTER_CASSETTE", "record")],
    );
    assert_eq!(
        record.code(),
        Some(101),
        "`wrong` fails: {}",
        record.context()
    );
    (fake, scratch)
}

/// The HTML report's records at `path`, by name: status, samples passed and taken, usage, and each
/// sample's status and output.
fn trials(path: &Path) -> std::collections::BTreeMap<String, Value> {
    let html = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data = prompt_tester::testing::read_html_data(&html).expect("the page's data");
    data["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            let samples: Vec<Value> = r["samples"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| serde_json::json!([s["run"], s["status"], s["output"], s["replayed"]]))
                .collect();
            let name = r["name"].as_str().expect("a name").to_string();
            let kept = serde_json::json!({
                "status": r["status"],
                "runs_passed": r["runs_passed"],
                "runs_total": r["runs_total"],
                "usage": r["usage"],
                "samples": samples,
            });
            (name, kept)
        })
        .collect()
}

#[test]
fn the_merged_reports_of_a_nextest_run_equal_what_cargo_test_writes() {
    let (fake, scratch) = replayed("equal");
    let dir = scratch.path();
    let [cargo_html, cargo_json, cargo_junit] =
        ["cargo.html", "cargo.json", "cargo.xml"].map(|f| dir.join(f).display().to_string());
    let cargo = scratch.run_example(
        "cassette_fixture",
        &[
            "--html",
            &cargo_html,
            "--report",
            &cargo_json,
            "--junit",
            &cargo_junit,
        ],
        &[],
    );
    assert_eq!(cargo.code(), Some(101), "{}", cargo.context());
    let Some(run) = nextest(&scratch, &[], &[]) else {
        return;
    };
    assert_eq!(status(&run, "mixed::wrong"), "FAIL", "{}", run.context());
    assert_eq!(status(&run, "mixed::one"), "PASS", "{}", run.context());
    assert_eq!(
        fake.request_count(),
        6,
        "the runs replay: {}",
        run.context()
    );
    let [html, json, junit] =
        ["nextest.html", "nextest.json", "nextest.xml"].map(|f| dir.join(f).display().to_string());
    let report = report_command(
        &scratch,
        &["--html", &html, "--report", &json, "--junit", &junit],
    );
    report.assert_success();
    child::assert_contains(&report.stderr(), &["report: 4 trials from "]);
    // Trial for trial: statuses, samples, costs.
    let cargo_trials = trials(Path::new(&cargo_html));
    assert_eq!(cargo_trials.len(), 4, "{cargo_trials:#?}");
    assert_eq!(trials(Path::new(&html)), cargo_trials);
    let read =
        |p: &str| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap();
    let (mut a, mut b) = (read(&cargo_json), read(&json));
    for v in [&mut a, &mut b] {
        v["timestamp"] = Value::Null;
        for suite in v["suites"].as_array_mut().unwrap() {
            suite["timestamp"] = Value::Null;
        }
    }
    assert_eq!(a["suites"], b["suites"]);
    assert_eq!(a["totals"], b["totals"]);
    let cases = |p: &str| {
        let xml = std::fs::read_to_string(p).unwrap();
        let mut names: Vec<String> = xml
            .split("<testcase name=\"")
            .skip(1)
            .map(|c| c[..c.find('"').unwrap()].to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(cases(&junit), cases(&cargo_junit));
}

#[test]
fn partitions_written_to_two_results_folders_merge_into_one_set_of_reports() {
    let (_fake, scratch) = replayed("partitions");
    let dir = scratch.path();
    let mut listed = Vec::new();
    for (k, folder) in [(1, "part-1"), (2, "part-2")] {
        let results = dir.join(folder).display().to_string();
        let partition = format!("hash:{k}/2");
        let Some(run) = nextest(
            &scratch,
            &["--partition", &partition],
            &[("PROMPT_TESTER_RESULTS", results.as_str())],
        ) else {
            return;
        };
        let out = format!("{}\n{}", run.stdout(), run.stderr());
        listed.extend(
            out.lines()
                .map(str::trim_start)
                .filter(|l| l.starts_with("PASS") || l.starts_with("FAIL"))
                .filter_map(|l| l.split(" pt-nextest::prompts ").nth(1))
                .map(str::to_string),
        );
    }
    listed.sort();
    assert_eq!(
        listed,
        ["mixed::one", "mixed::sampled", "mixed::two", "mixed::wrong"]
    );
    let [html, json, junit, markdown] = ["merged.html", "merged.json", "merged.xml", "merged.md"]
        .map(|f| dir.join(f).display().to_string());
    let report = report_command(
        &scratch,
        &[
            "--from",
            "part-1",
            "--from",
            "part-2",
            "--html",
            &html,
            "--report",
            &json,
            "--junit",
            &junit,
            "--markdown",
            &markdown,
        ],
    );
    report.assert_success();
    // The summary for the pull request is the whole run's: both partitions' counts, its one failure
    // listed once.
    let summary = std::fs::read_to_string(&markdown).unwrap();
    child::assert_contains(&summary, &["| 3 | 1 | 0 | 0 | 0 | 5/6 83% |"]);
    assert_eq!(
        summary.matches("| mixed::wrong | failed |").count(),
        1,
        "{summary}"
    );
    // Every trial once in each merged report.
    let from_html: Vec<String> = trials(Path::new(&html)).into_keys().collect();
    assert_eq!(from_html, listed);
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut from_json: Vec<String> = json["suites"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("mixed::{}", c["case_id"].as_str().unwrap()))
        .collect();
    from_json.sort();
    assert_eq!(from_json, listed, "{json:#}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    for trial in &listed {
        let cases = xml.matches(&format!("<testcase name=\"{trial}\"")).count();
        assert_eq!(cases, 1, "{trial} in {xml}");
    }
    // The same partition twice is not one run: the trial is named with both folders.
    let twice = report_command(
        &scratch,
        &["--from", "part-1", "--from", "part-1", "--report", "x.json"],
    );
    assert!(!twice.success(), "{}", twice.context());
    child::assert_contains(&twice.stderr(), &["is in two partitions", "part-1"]);
}

#[test]
fn a_panicking_attribute_value_fails_its_test_alone_under_nextest() {
    let scratch = Scratch::new("nextest", "panicking-attribute");
    wrapper_crate(&scratch);
    let harness = child::example_binary("panic_fixture");
    let harness = harness.display().to_string();
    // The key makes `fine` expected to run (its `run_fn` calls nothing, but the listing cannot know).
    let env = [("PT_HARNESS", harness.as_str()), ("OPENAI_API_KEY", KEY)];
    let Some(run) = nextest(&scratch, &[], &env) else {
        return;
    };
    // nextest built its list: the other test ran and passed.
    assert_eq!(status(&run, "fine"), "PASS", "{}", run.context());
    assert_eq!(status(&run, "broken_vars"), "FAIL", "{}", run.context());
    child::assert_contains(
        &format!("{}\n{}", run.stdout(), run.stderr()),
        &[
            "a value of its #[prompt_test] attribute panicked at",
            "the memo file is missing",
        ],
    );
}

#[test]
fn a_corrupt_budget_ledger_refuses_the_runs_calls_and_never_blocks_the_next_run() {
    let (fake, scratch) = priced_fake("corrupt-ledger");
    scratch.file(
        "prompt-tests/two.evals.toml",
        "prompt = \"Q {q}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_tokens = 64\n\
         assert = [{ not_contains = \"zzz\" }]\n\
         [[cases]]\nname = \"c1\"\ninputs = { q = \"1\" }\n[[cases]]\nname = \"c2\"\ninputs = { q = \"2\" }\n",
    );
    // The wrapper writes garbage where the run's ledger goes, before the run's first process.
    let ledgers = scratch.path().join(".prompt-tester/budget");
    let corrupt = ledgers.display().to_string();
    let env = [
        ("PROMPT_TESTER_BUDGET", "1.0"),
        ("PROMPT_TESTER_CASSETTE", "off"),
    ];
    let corrupting = [env[0], env[1], ("PT_CORRUPT_LEDGER", corrupt.as_str())];
    let Some(run) = nextest(&scratch, &[], &corrupting) else {
        return;
    };
    // Its spend unknown, the run makes no call: each trial fails, naming the file and the fix.
    assert_eq!(fake.request_count(), 0, "{}", run.context());
    for trial in ["two::c1", "two::c2"] {
        assert_eq!(status(&run, trial), "FAIL", "{}", run.context());
    }
    child::assert_contains(
        &format!("{}\n{}", run.stdout(), run.stderr()),
        &[
            &format!("the budget ledger {}", ledgers.display()),
            ".json: corrupt (",
            "delete the file to clear it (a later nextest run starts a new ledger)",
        ],
    );
    // The next run, another NEXTEST_RUN_ID, is not blocked.
    let Some(next) = nextest(&scratch, &[], &env) else {
        return;
    };
    assert_eq!(status(&next, "two::c1"), "PASS", "{}", next.context());
    assert_eq!(status(&next, "two::c2"), "PASS", "{}", next.context());
    assert_eq!(fake.request_count(), 2, "{}", next.context());
}

/// Two nextest runs at once on one crate (two terminals, a watcher, two partitions on one machine):
/// their processes, real ones as nextest starts them (`--exact`, `NEXTEST_RUN_ID`), alternate, and
/// each run holds to its own budget of two calls: neither reads the other's spend as nothing.
#[test]
fn two_nextest_runs_at_once_each_hold_to_their_budget() {
    let worst = (25.0 + 2.0 * 64.0) / 1e6;
    let (fake, scratch) = priced_fake("two-runs");
    let cases: String = (1..=3)
        .map(|i| format!("[[cases]]\nname = \"c{i}\"\ninputs = {{ q = \"{i}\" }}\n"))
        .collect();
    scratch.file(
        "prompt-tests/three.evals.toml",
        &format!(
            "prompt = \"Q {{q}}\"\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_tokens = 64\n\
             assert = [{{ not_contains = \"zzz\" }}]\n{cases}"
        ),
    );
    let budget = format!("{:.6}", 2.0 * worst + worst / 3.0);
    let process = |run: &str, case: u32| {
        scratch
            .example("cassette_fixture")
            .args(["--exact", &format!("three::c{case}")])
            .envs(&[
                ("PROMPT_TESTER_BUDGET", budget.as_str()),
                ("PROMPT_TESTER_CASSETTE", "off"),
                ("NEXTEST", "1"),
                ("NEXTEST_RUN_ID", run),
            ])
            .run()
    };
    for case in 1..=2 {
        for run in ["run-a", "run-b"] {
            process(run, case).assert_success();
        }
    }
    for run in ["run-a", "run-b"] {
        let third = process(run, 3);
        assert!(!third.success(), "{run}: {}", third.context());
        child::assert_contains(&third.stdout(), &["reached after $"]);
    }
    assert_eq!(fake.request_count(), 4, "two calls a run");
}

/// `app_env` under nextest: each trial's process starts itself again with the base-URL variables set,
/// and every sample of the two `app_env` tests, recorded by `cargo test`, replays offline under CI,
/// each in its own process.
#[test]
fn app_env_tests_replay_under_nextest_one_process_per_trial() {
    let fake = FakeProvider::start();
    let scratch = Scratch::new("nextest", "app-env");
    wrapper_crate(&scratch);
    let record = scratch
        .child(child::example_binary("app_calls_fixture"))
        .args(["app_env_lyon", "app_env_oslo"])
        .base_urls(&fake)
        .env("OPENAI_API_KEY", KEY)
        .run();
    record.assert_success();
    assert_eq!(fake.request_count(), 6, "{}", record.context());
    drop(fake);
    let harness = child::example_binary("app_calls_fixture");
    let harness = harness.to_string_lossy();
    let env = [("CI", "1"), ("PT_HARNESS", harness.as_ref())];
    let Some(run) = nextest(&scratch, &["-E", "test(/^app_env_(lyon|oslo)/)"], &env) else {
        return;
    };
    run.assert_success();
    for test in ["app_env_lyon", "app_env_oslo"] {
        assert_eq!(status(&run, test), "PASS", "{}", run.context());
    }
}
