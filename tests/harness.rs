//! End-to-end tests of the harness: run the `harness_fixture` example binary with arguments and check
//! libtest's output, exit codes, listing, filters, thresholds, per-run failure lines and single runs.

use prompt_tester_testkit::child::{self, Run, Scratch};

/// The harness fixture: the prompt tests these tests run.
const FIXTURE: &str = "harness_fixture";

#[test]
fn list_prints_only_name_test_lines_including_numbered_runs() {
    let scratch = Scratch::new("harness", "list");
    let run = scratch.run_example(FIXTURE, &["--list"], &[]);
    run.assert_success();
    let stdout = run.stdout();
    for line in stdout.lines() {
        assert!(line.ends_with(": test"), "unexpected --list line {line:?}");
    }
    let names: Vec<&str> = stdout
        .lines()
        .map(|l| l.trim_end_matches(": test"))
        .collect();
    for expected in [
        "summary_passes",
        "flaky",
        "flaky::run_1",
        "flaky::run_5",
        "tolerant::run_3",
        "nested::fake_colour",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(
        !names.contains(&"summary_passes::run_1"),
        "single-run tests list no numbered runs"
    );

    // nextest asks for the ignored ones separately: exactly the numbered runs.
    let ignored = scratch.run_example(FIXTURE, &["--list", "--format", "terse", "--ignored"], &[]);
    let ignored: Vec<String> = ignored
        .stdout()
        .lines()
        .map(|l| l.trim_end_matches(": test").to_string())
        .collect();
    // 32, `matrix::`'s 4, `mostly_passes`' 20, and `sampling::`'s: 5 early-stop runs, 40 adaptive ones (`max_runs`), 3 x 3 seeded ones.
    assert_eq!(ignored.len(), 32 + 4 + 20 + 5 + 40 + 9, "{ignored:?}");
    assert!(ignored.contains(&"sampling::adaptive_fails_fast::run_40".to_string()));
    assert!(!ignored.contains(&"sampling::adaptive_fails_fast::run_41".to_string()));
    assert!(ignored.iter().all(|n| n.contains("::run_")), "{ignored:?}");
}

#[test]
fn threshold_failure_lists_each_failed_run_and_the_count() {
    let scratch = Scratch::new("harness", "flaky");
    let run = scratch.run_example(FIXTURE, &["flaky", "--exact"], &[]);
    run.assert_code(101);
    assert_eq!(run.outcome("flaky"), "FAILED");
    for line in [
        "[run 3/5] FAILED: run 3 said \"SAY HI\"",
        "[run 5/5] FAILED: run 5 said \"SAY HI\"",
        "3/5 samples passed (60%, 95% CI 23–88%; need 4, pass threshold 80%)",
        "test result: FAILED. 0 passed; 1 failed; 0 ignored",
    ] {
        run.assert_stdout_has(line);
    }
    child::assert_lacks(&run.stdout(), "[run 1/5]");
    // The summary on stderr counts the five calls.
    run.assert_stderr_has("prompt-tester summary");
}

#[test]
fn a_met_threshold_passes_despite_a_panicking_run() {
    let scratch = Scratch::new("harness", "tolerant");
    let run = scratch.run_example(FIXTURE, &["tolerant", "--exact"], &[]);
    run.assert_success();
    assert_eq!(run.outcome("tolerant"), "ok");
}

#[test]
fn a_filter_naming_one_run_runs_it_strictly() {
    let scratch = Scratch::new("harness", "single");
    let bad = scratch.run_example(FIXTURE, &["flaky::run_3"], &[]);
    bad.assert_code(101);
    assert_eq!(bad.outcome("flaky::run_3"), "FAILED");
    bad.assert_stdout_has("1 failed; 0 ignored");
    bad.assert_stdout_has("run 3 said");

    let good = scratch.run_example(FIXTURE, &["--exact", "flaky::run_2"], &[]);
    good.assert_success();
    assert_eq!(good.outcome("flaky::run_2"), "ok");

    // A filter matching the whole test runs the trial once; numbered runs stay ignored (N calls, not 2N).
    let whole = scratch.run_example(FIXTURE, &["tolerant"], &[]);
    whole.assert_stdout_has("1 passed; 0 failed; 3 ignored");
}

#[test]
fn several_name_filters_run_and_list_what_any_of_them_matches() {
    let scratch = Scratch::new("harness", "filters");
    let filters = ["tolerant", "summary_passes"];
    let run = scratch.run_example(FIXTURE, &filters, &[]);
    run.assert_success();
    run.assert_outcomes(&filters, "ok");
    // The numbered runs of `tolerant` are listed ignored; nothing else is listed.
    run.assert_stdout_has("test result: ok. 2 passed; 0 failed; 3 ignored");
    let stdout = run.stdout();
    let mut ran: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .map(|(name, _)| name.trim())
        .collect();
    ran.sort();
    assert_eq!(
        ran,
        [
            "summary_passes",
            "tolerant",
            "tolerant::run_1",
            "tolerant::run_2",
            "tolerant::run_3"
        ],
        "{}",
        run.context()
    );

    // With `--exact`, each name runs its one trial (and only those are built).
    let exact = ["--exact", "flaky::run_1", "summary_passes"];
    let exact = scratch.run_example(FIXTURE, &exact, &[]);
    exact.assert_success();
    exact.assert_outcomes(&["flaky::run_1", "summary_passes"], "ok");
    exact.assert_stdout_has("test result: ok. 2 passed; 0 failed; 0 ignored");

    let listed = scratch.run_example(
        FIXTURE,
        &["--list", "--", "tolerant", "summary_passes"],
        &[],
    );
    listed.assert_success();
    let mut lines: Vec<String> = listed.stdout().lines().map(String::from).collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "summary_passes: test",
            "tolerant: test",
            "tolerant::run_1: test",
            "tolerant::run_2: test",
            "tolerant::run_3: test"
        ],
        "{}",
        listed.context()
    );
}

#[test]
fn a_panic_fails_its_trial_with_the_message_and_others_still_run() {
    let scratch = Scratch::new("harness", "panic");
    // `many` prints from its samples, which may land inside a result line this test reads.
    let skips = child::skipping(&["fake_", "needs_judge", "many", "sampling::"]);
    let run = scratch.run_example(FIXTURE, &skips, &[]);
    assert_eq!(run.code(), Some(101));
    assert_eq!(run.outcome("panics"), "FAILED");
    assert_eq!(run.outcome("summary_passes"), "ok");
    assert_eq!(run.outcome("placeholder_missing"), "FAILED");
    let stdout = run.stdout();
    assert!(stdout.contains("boom from the body"), "{stdout}");
    assert!(
        stdout.contains("harness_fixture.rs:"),
        "panic location shown: {stdout}"
    );
    // A placeholder without a value fails its test once, before any sample or call.
    let said = "test `placeholder_missing` (tests/fixtures/harness_fixture.rs:73): placeholder {missing} of \
                the prompt has no value in target_prompt_vars; add `target_prompt_vars(missing = ...)`";
    assert_eq!(stdout.matches(said).count(), 1, "{stdout}");
    assert!(!stdout.contains("no sample runs"), "{stdout}");
}

#[test]
fn the_judge_without_configuration_says_how_to_configure_it() {
    let scratch = Scratch::new("harness", "judge");
    let run = scratch.run_example(FIXTURE, &["needs_judge"], &[]);
    assert_eq!(run.code(), Some(101));
    let stdout = run.stdout();
    assert!(stdout.contains("no judge model is configured"), "{stdout}");
    assert!(stdout.contains("[judge]"), "{stdout}");
}

#[test]
fn terse_and_json_formats() {
    let scratch = Scratch::new("harness", "formats");
    let terse = scratch.run_example(FIXTURE, &["--format", "terse", "summary_passes"], &[]);
    terse.assert_stdout_has("running 1 test\n.");
    let json = scratch.run_example(
        FIXTURE,
        &["--format", "json", "--exact", "flaky::run_3"],
        &[],
    );
    json.assert_stdout_has(r#""name": "flaky::run_3", "event": "failed""#);
}

#[test]
fn bad_environment_values_are_errors_that_list_the_valid_ones() {
    let scratch = Scratch::new("harness", "badenv");
    let run = scratch.run_example(
        FIXTURE,
        &["summary_passes"],
        &[("PROMPT_TESTER_CASSETTE", "sometimes")],
    );
    assert_eq!(run.code(), Some(2));
    run.assert_stderr_has("use one of auto, replay, record, off");
    // Values accepted silently before the settings were read in one place: each is now an error
    // naming its variable.
    for (var, value, says) in [
        (
            "RUST_TEST_THREADS",
            "0",
            "RUST_TEST_THREADS=\"0\" is not a whole number of at least 1",
        ),
        (
            "PROMPT_TESTER_CONFIG",
            "missing.toml",
            "PROMPT_TESTER_CONFIG",
        ),
    ] {
        let run = scratch.run_example(FIXTURE, &["summary_passes"], &[(var, value)]);
        assert_eq!(run.code(), Some(2), "{var}={value}");
        run.assert_stderr_has(says);
    }
}

/// Runs the fixture's trials that `filter` selects without cassettes, every provider pointed at an
/// echoing fake.
fn run_at_echo(name: &str, filter: &str) -> (prompt_tester_testkit::FakeProvider, Run) {
    let server = prompt_tester_testkit::FakeProvider::start();
    let scratch = Scratch::new("harness", name);
    let run = scratch
        .example(FIXTURE)
        .args([filter, "--no-cassette"])
        .base_urls(&server)
        .run();
    run.assert_success();
    (server, run)
}

#[test]
fn base_url_variables_point_every_provider_at_any_compatible_server() {
    let (server, run) = run_at_echo("baseurl", "nested::fake_");
    run.assert_outcomes(
        &[
            "nested::fake_colour",
            "nested::fake_priced[anthropic/claude-haiku-4-5]",
            "nested::fake_priced[google/gemini-2.5-flash]",
        ],
        "ok",
    );
    let mut paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/v1/chat/completions",
            "/v1/messages",
            "/v1beta/models/gemini-2.5-flash:generateContent"
        ]
    );
    // The summary prices the two hosted models and names the unpriced one.
    run.assert_stderr_has("unpriced models");
    run.assert_stderr_has("openai/fake-model");
}

/// A suite case with three samples and an input no placeholder uses (a warning), answered by an echo
/// server through the `openai` endpoint. Returns the server, to count its calls.
fn three_run_suite(scratch: &Scratch) -> prompt_tester_testkit::FakeProvider {
    let dir = scratch.0.join("prompt-tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("warned.evals.toml"),
        "prompt = \"Say {word}\"\nprovider = \"openai\"\nmodel = \"echo-model\"\nruns = 3\n\n\
         [[cases]]\nname = \"case\"\ninputs = { word = \"hi\", unused = \"x\" }\nassert = [{ contains = \"hi\" }]\n",
    )
    .unwrap();
    prompt_tester_testkit::FakeProvider::start()
}

/// Runs the fixture with stdout and stderr into one file, as a terminal shows them.
fn run_interleaved(
    scratch: &Scratch,
    server: &prompt_tester_testkit::FakeProvider,
    args: &[&str],
) -> String {
    use prompt_tester_testkit::Wire;
    let base = server.base_url(Wire::OpenAi);
    let env = [("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")];
    let path = scratch.0.join("console.txt");
    let console = std::fs::File::create(&path).unwrap();
    let status = scratch
        .command("harness_fixture", args, &env)
        .stdout(console.try_clone().unwrap())
        .stderr(console)
        .status()
        .expect("the fixture runs");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(status.code(), Some(0), "{text}");
    text
}

#[test]
fn warnings_are_printed_once_after_the_result_lines() {
    let scratch = Scratch::new("harness", "warnings");
    let server = three_run_suite(&scratch);
    // `--ignored` runs the three numbered trials, one at a time: each has the case's warning.
    let args = [
        "warned",
        "--ignored",
        "--no-cassette",
        "--test-threads",
        "1",
    ];
    let console = run_interleaved(&scratch, &server, &args);
    assert_eq!(server.request_count(), 3, "{console}");
    let results = console.lines().filter(|l| l.starts_with("test warned::"));
    assert_eq!(results.clone().count(), 3, "{console}");
    for line in results {
        assert!(
            line.ends_with(" ... ok"),
            "a result line was interrupted: {line:?}\n{console}"
        );
    }
    let warning = "warning: case `warned::case`: input(s) `unused` match no placeholder";
    assert_eq!(console.matches(warning).count(), 1, "{console}");
    let printed_at = console.find(warning).unwrap();
    let results_end = console.find("test result: ok.").expect("libtest's result");
    assert!(printed_at > results_end, "{console}");
}

#[test]
fn include_ignored_runs_the_aggregate_and_reports_its_numbered_runs_covered() {
    let scratch = Scratch::new("harness", "include-ignored");
    let server = three_run_suite(&scratch);
    let console = run_interleaved(
        &scratch,
        &server,
        &["warned", "--include-ignored", "--no-cassette"],
    );
    // N calls, not 2N.
    assert_eq!(server.request_count(), 3, "{console}");
    let outcome = |trial: &str| {
        console
            .lines()
            .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
            .find(|(name, _)| name.trim_end() == trial)
            .map(|(_, outcome)| outcome.to_string())
            .unwrap_or_else(|| panic!("no result for {trial}: {console}"))
    };
    assert_eq!(outcome("warned::case"), "ok");
    for i in 1..=3 {
        let run = outcome(&format!("warned::case::run_{i}"));
        assert!(
            run.starts_with("ignored") && run.contains("covered by the aggregate trial"),
            "{run}"
        );
    }
    // A numbered run selected without its aggregate still runs, with or without the flag.
    let one = run_interleaved(
        &scratch,
        &server,
        &[
            "--exact",
            "warned::case::run_2",
            "--include-ignored",
            "--no-cassette",
        ],
    );
    assert_eq!(server.request_count(), 4, "{one}");
    assert!(one.contains("1 passed; 0 failed; 0 ignored"), "{one}");
}

#[test]
fn a_filter_naming_one_sample_selects_that_sample_only() {
    let scratch = Scratch::new("harness", "sample");
    let run = scratch.run_example(FIXTURE, &["many::run_1", "--nocapture"], &[]);
    run.assert_success();
    let stdout = run.stdout();
    assert_eq!(run.outcome("many::run_1"), "ok");
    for other in ["many::run_10", "many::run_11", "many::run_12"] {
        assert!(!stdout.contains(other), "{other} selected:\n{stdout}");
    }
    assert!(stdout.contains("1 passed; 0 failed; 0 ignored"), "{stdout}");
    assert_eq!(stdout.matches("many ran sample").count(), 1, "{stdout}");
    // `--list` agrees, and a two-digit sample is named as precisely.
    let list = scratch.run_example(FIXTURE, &["--list", "many::run_1"], &[]);
    assert_eq!(list.stdout().trim(), "many::run_1: test");
    let ten = scratch.run_example(FIXTURE, &["many::run_10"], &[]);
    assert_eq!(ten.outcome("many::run_10"), "ok");
    ten.assert_stdout_has("1 passed; 0 failed; 0 ignored");
}

#[test]
fn runs_and_thresholds_computed_out_of_range_fail_their_test_clearly() {
    let scratch = Scratch::new("harness", "badvalues");
    let run = scratch.run_example(FIXTURE, &["bad_"], &[]);
    let stdout = run.stdout();
    assert_eq!(run.code(), Some(101), "{stdout}\n{}", run.stderr());
    assert_eq!(run.outcome("bad_runs"), "FAILED");
    assert_eq!(run.outcome("bad_threshold"), "FAILED");
    assert!(
        stdout.contains("test `bad_runs` (tests/fixtures/harness_fixture.rs:")
            && stdout.contains("`runs` is 0; it must be at least 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("test `bad_threshold` (tests/fixtures/harness_fixture.rs:")
            && stdout.contains("`pass_threshold` is NaN; it must be in (0, 1]"),
        "{stdout}"
    );
    child::assert_lacks(&run.stderr(), "panicked");
}

/// Reads the JSON report and the JUnit XML a fixture run wrote in the scratch root.
fn reports(scratch: &Scratch) -> (serde_json::Value, quick_junit::Report) {
    let json = std::fs::read_to_string(scratch.0.join("report.json")).expect("a JSON report");
    let xml = std::fs::read_to_string(scratch.0.join("junit.xml")).expect("a JUnit report");
    (
        serde_json::from_str(&json).expect("the report is JSON"),
        quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit XML"),
    )
}

/// Runs the fixture's trial `name` alone against `server` (OpenAI wire), cassettes off, writing both
/// reports; returns the run and its output for messages.
fn run_fake(
    scratch: &Scratch,
    name: &str,
    server: &prompt_tester_testkit::FakeProvider,
) -> (Run, String) {
    let url = server.base_url(prompt_tester_testkit::Wire::OpenAi);
    let run = scratch.run_example(
        FIXTURE,
        &[
            "--exact",
            name,
            "--no-cassette",
            "--report",
            "report.json",
            "--junit",
            "junit.xml",
        ],
        &[("OPENAI_BASE_URL", &url)],
    );
    let context = run.context();
    (run, context)
}

/// The `tests` entry of `name` in a JSON report.
fn test_entry<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    child::entry(&report["tests"], "name", name)
}

fn junit_kind(junit: &quick_junit::Report, name: &str) -> Option<quick_junit::NonSuccessKind> {
    let case = junit
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .find(|c| c.name.as_str() == name)
        .unwrap_or_else(|| panic!("no testcase {name}"));
    match &case.status {
        quick_junit::TestCaseStatus::NonSuccess { kind, .. } => Some(*kind),
        _ => None,
    }
}

/// The issue's outage: 1 of 5 calls gets a 5xx through every retry. 4/5 meets `pass_threshold = 0.8`,
/// but an errored run is not a failed assertion: the trial fails and says so.
#[test]
fn an_outage_in_one_of_five_runs_fails_the_trial_as_an_error() {
    use prompt_tester_testkit::{FakeProvider, Reply, Wire};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let seen = AtomicUsize::new(0);
    // The first sample runs alone (judge_prompt_cache): both of its attempts get a 503.
    let server = FakeProvider::builder()
        .respond_with(move |request| {
            if seen.fetch_add(1, Ordering::SeqCst) < 2 {
                Reply::server_error(Wire::OpenAi, 503)
            } else {
                Reply::answer(request, "Blue.")
            }
        })
        .start();
    let scratch = Scratch::new("harness", "outage");
    scratch.config("[retry]\nmax_attempts = 2\ninitial_backoff_ms = 1\nmax_backoff_ms = 5\n");
    let (run, context) = run_fake(&scratch, "fake_outage", &server);
    assert_eq!(run.code(), Some(101), "{context}");
    assert_eq!(run.outcome("fake_outage"), "FAILED");
    assert_eq!(server.request_count(), 6, "2 attempts, then 4 answers");
    let stdout = run.stdout();
    assert!(
        stdout.contains("[run 1/5] ERROR: model call failed: "),
        "{context}"
    );
    assert!(stdout.contains("503"), "{context}");
    assert!(
        !stdout.contains("FAILED: "),
        "no run failed an assertion: {context}"
    );
    assert!(
        stdout.contains(
            "4/5 samples passed, 1 errored (80%, 95% CI 38–96%; need 4, pass threshold 80%)"
        ),
        "{context}"
    );
    assert!(
        run.stderr()
            .contains("0 passed, 0 failed, 1 errored, 0 ignored"),
        "{context}"
    );
    let (report, junit) = reports(&scratch);
    let entry = test_entry(&report, "fake_outage");
    assert_eq!(entry["status"], "errored", "{entry:#}");
    assert_eq!(entry["runs_passed"], 4);
    assert_eq!(entry["runs_errored"], 1);
    assert_eq!(report["totals"]["errors"], 1, "{report:#}");
    assert_eq!(report["totals"]["failed"], 0);
    assert_eq!(report["totals"]["passed"], 0);
    assert_eq!(
        junit_kind(&junit, "fake_outage"),
        Some(quick_junit::NonSuccessKind::Error)
    );
}

/// `ensure!` and a panic in the body fail a test; a judge that cannot answer, a missing judge and a
/// panic outside the body error it. A missing verdict is asked again, then is an error, never a "no".
#[test]
fn failures_and_errors_are_told_apart() {
    let scratch = Scratch::new("harness", "kinds");
    // Out-of-range values (`bad_`) fail their tests too; they are checked on their own.
    let mut args = child::skipping(&["fake_", "bad_", "sampling::"]);
    args.extend(["--report", "report.json", "--junit", "junit.xml"]);
    let run = scratch.run_example(FIXTURE, &args, &[]);
    let context = run.context();
    assert_eq!(run.code(), Some(101), "{context}");
    let (report, junit) = reports(&scratch);
    use quick_junit::NonSuccessKind::{Error, Failure};
    for (name, status, kind) in [
        ("summary_passes", "passed", None),
        ("flaky", "failed", Some(Failure)),
        ("panics", "failed", Some(Failure)),
        ("needs_judge", "errored", Some(Error)),
        ("executor_panics", "errored", Some(Error)),
        ("placeholder_missing", "failed", Some(Failure)),
    ] {
        assert_eq!(
            test_entry(&report, name)["status"],
            status,
            "{name}: {context}"
        );
        assert_eq!(junit_kind(&junit, name), kind, "{name}");
    }
    assert!(
        test_entry(&report, "executor_panics")["message"]
            .as_str()
            .unwrap()
            .contains("the executor broke"),
        "{context}"
    );
    assert_eq!(report["totals"]["errors"], 2, "{report:#}");
    assert_eq!(report["totals"]["failed"], 3, "{report:#}");
    assert!(
        run.stderr().contains(", 3 failed, 2 errored, "),
        "{context}"
    );

    // The judge answers only the first of two questions, also when asked again for the second.
    use prompt_tester_testkit::{FakeProvider, Reply, Usage, Wire};
    let judge = FakeProvider::builder()
        .respond_with(|request| {
            let asked_loud = request.last_user_text().unwrap_or_default().contains("Is it loud?");
            let verdicts = serde_json::json!({"verdicts": if asked_loud { vec![
                serde_json::json!({"index": 1, "question_type": "tone_style", "reasoning": "It shouts.", "snippet": null, "answer": "yes"})
            ] } else { vec![] }});
            Reply::text(Wire::OpenAi, "judge-model", &verdicts.to_string(), Usage::new(50, 9))
        })
        .start();
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"judge-model\"\n");
    let (run, context) = run_fake(&scratch, "fake_judge_skips_a_question", &judge);
    assert_eq!(run.code(), Some(101), "{context}");
    assert!(
        run.stdout()
            .contains("judge returned no verdict for question 2 \"Does it whisper?\""),
        "{context}"
    );
    let requests = judge.requests();
    assert_eq!(
        requests.len(),
        2,
        "the first call, then one for the missing question"
    );
    let again = requests[1].last_user_text().unwrap();
    assert!(again.contains("1. Does it whisper?"), "{again}");
    assert!(!again.contains("Is it loud?"), "{again}");
    let (report, _) = reports(&scratch);
    assert_eq!(
        test_entry(&report, "fake_judge_skips_a_question")["status"],
        "errored"
    );
}

/// `#[prompt_test(judge_samples = 3)]` with a judge answering yes, no, yes: the question is asked three
/// times, each call recorded under its own key, the majority passes the sample, and the JSON report
/// gives the agreement, 2 of 3.
#[test]
fn the_attribute_s_judge_samples_asks_three_times_and_the_majority_decides() {
    let scratch = Scratch::new("harness", "judge_samples");
    let cycling = prompt_tester_testkit::judge_cycling(&["yes", "no", "yes"]);
    let judge = prompt_tester_testkit::FakeProvider::builder()
        .respond_with(move |request| cycling(request))
        .start();
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"judge-model\"\n");
    let url = judge.base_url(prompt_tester_testkit::Wire::OpenAi);
    let run = scratch.run_example(
        FIXTURE,
        &[
            "--exact",
            "fake_judge_samples",
            "--record",
            "--report",
            "report.json",
        ],
        &[("OPENAI_BASE_URL", &url)],
    );
    let context = run.context();
    assert_eq!(run.code(), Some(0), "{context}");
    assert_eq!(judge.requests().len(), 3, "{context}");
    let cassette: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.cassettes().join("fake_judge_samples.cassette.json"))
            .expect("the cassette"),
    )
    .unwrap();
    let keys: std::collections::BTreeSet<&str> = cassette["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["model"] == "judge-model")
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys.len(),
        3,
        "three judge calls, each its own recording: {cassette:#}"
    );
    let json = std::fs::read_to_string(scratch.0.join("report.json")).expect("a JSON report");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entry = test_entry(&report, "fake_judge_samples");
    assert_eq!(entry["status"], "passed", "{entry:#}");
    let answer = &entry["samples"][0]["judge"][0];
    assert_eq!(answer["answer"], "yes", "{entry:#}");
    assert_eq!(
        answer["votes"],
        serde_json::json!({"agreeing": 2, "asked": 3}),
        "{entry:#}"
    );
}

/// `fake-a` (and any other model) knows the capital of France, `fake-b` does not.
fn two_model_server() -> prompt_tester_testkit::FakeProvider {
    prompt_tester_testkit::FakeProvider::builder()
        .answer_model("fake-b", "Lyon.")
        .echo_text("Paris.")
        .start()
}

/// The models each request of `server` named, sorted.
fn models_called(server: &prompt_tester_testkit::FakeProvider) -> Vec<String> {
    let mut models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.model().unwrap_or_default())
        .collect();
    models.sort();
    models
}

#[test]
fn subject_models_make_a_trial_per_model_with_its_runs_and_filters_pick_one() {
    let scratch = Scratch::new("harness", "matrix");
    let list = scratch.run_example(FIXTURE, &["--list", "matrix::"], &[]);
    let stdout = list.stdout();
    let mut names: Vec<&str> = stdout
        .lines()
        .map(|l| l.trim_end_matches(": test"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "matrix::bad_subjects",
            "matrix::fake_capital[openai/fake-a]",
            "matrix::fake_capital[openai/fake-a]::run_1",
            "matrix::fake_capital[openai/fake-a]::run_2",
            "matrix::fake_capital[openai/fake-b]",
            "matrix::fake_capital[openai/fake-b]::run_1",
            "matrix::fake_capital[openai/fake-b]::run_2",
        ]
    );

    let server = two_model_server();
    let url = server.base_url(prompt_tester_testkit::Wire::OpenAi);
    let env = [("OPENAI_BASE_URL", url.as_str())];
    let run = scratch.run_example(
        FIXTURE,
        &["matrix::fake_", "--no-cassette", "--report", "report.json"],
        &env,
    );
    run.assert_code(101);
    assert_eq!(run.outcome("matrix::fake_capital[openai/fake-a]"), "ok");
    assert_eq!(run.outcome("matrix::fake_capital[openai/fake-b]"), "FAILED");
    run.assert_stdout_has("fake-b said \"Lyon.\"");
    assert_eq!(
        models_called(&server),
        ["fake-a", "fake-a", "fake-b", "fake-b"]
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.0.join("report.json")).unwrap())
            .unwrap();
    let matrix = &json["matrix"];
    assert_eq!(matrix["rows"][0]["name"], "matrix::fake_capital");
    let cells = &matrix["rows"][0]["cells"];
    assert_eq!(
        (
            &cells["openai/fake-a"]["runs_passed"],
            &cells["openai/fake-b"]["runs_passed"]
        ),
        (&serde_json::json!(2), &serde_json::json!(0))
    );
    assert_eq!(matrix["columns"][1]["total"]["runs_total"], 2);
    run.assert_stderr_has("prompt-tester matrix");

    // A filter on the column runs that model only; a numbered run of one column runs one sample.
    let only_a = scratch.run_example(FIXTURE, &["[openai/fake-a", "--no-cassette"], &env);
    only_a.assert_success();
    let one = scratch.run_example(
        FIXTURE,
        &[
            "--exact",
            "matrix::fake_capital[openai/fake-b]::run_2",
            "--no-cassette",
        ],
        &env,
    );
    assert_eq!(
        one.outcome("matrix::fake_capital[openai/fake-b]::run_2"),
        "FAILED"
    );
    assert_eq!(
        models_called(&server),
        [
            "fake-a", "fake-a", "fake-a", "fake-a", "fake-b", "fake-b", "fake-b"
        ]
    );
}

#[test]
fn subject_models_that_are_not_provider_model_fail_their_test_with_the_fix() {
    let scratch = Scratch::new("harness", "matrix-bad");
    let run = scratch.run_example(FIXTURE, &["--exact", "matrix::bad_subjects"], &[]);
    assert_eq!(run.outcome("matrix::bad_subjects"), "FAILED");
    let stdout = run.stdout();
    assert!(
        stdout.contains("test `matrix::bad_subjects` (tests/fixtures/harness_fixture.rs:")
            && stdout.contains(
                "`subject_models[1]`: \"fake-b\" is not `provider/model`: there is no `/` between the \
                 provider and the model"
            )
            && stdout.contains("fix `subject_models` in its #[prompt_test]"),
        "{stdout}"
    );
}

#[test]
fn subject_retargets_a_model_matrix_and_single_model_tests_at_one_model() {
    let scratch = Scratch::new("harness", "matrix-subject");
    let server = two_model_server();
    let url = server.base_url(prompt_tester_testkit::Wire::OpenAi);
    let run = scratch.run_example(
        FIXTURE,
        &[
            // Selects `matrix::fake_capital` and `nested::fake_colour`, a single-model test.
            "fake_c",
            "--no-cassette",
            "--subject",
            "openai/fake-c",
        ],
        &[("OPENAI_BASE_URL", url.as_str())],
    );
    // The model axis collapses: one trial, named as the test, against the one model.
    run.assert_success();
    assert_eq!(run.outcome("matrix::fake_capital"), "ok");
    assert_eq!(run.outcome("nested::fake_colour"), "ok");
    assert_eq!(models_called(&server), ["fake-c", "fake-c", "fake-c"]);
    child::assert_lacks(&run.stderr(), "prompt-tester matrix");
}

/// The progress line goes to stderr only when it is a terminal (here a pty made by `script`) and
/// stdout is not; libtest's lines on stdout stay as they were, and a piped stderr gets none of it.
#[test]
fn the_progress_line_reaches_a_terminal_stderr_only() {
    let scratch = Scratch::new("harness", "progress");
    let piped = scratch.run_example(FIXTURE, &["summary_passes"], &[]);
    piped.assert_success();
    assert!(
        !piped.stderr().contains("in flight") && !piped.stderr().contains('\u{1b}'),
        "a piped stderr got the progress line:\n{}",
        piped.stderr()
    );
    if !std::path::Path::new("/usr/bin/script").exists() {
        eprintln!("SKIPPED the pty half: `script` (util-linux) is not installed");
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs `script` (util-linux)"
        );
        return;
    }
    let inner = scratch.command(FIXTURE, &["summary_passes"], &[]);
    let stdout = scratch.path().join("stdout.txt");
    let mut outer = std::process::Command::new("/usr/bin/script");
    outer
        .arg("-qec")
        .arg(format!(
            "'{}' summary_passes > '{}'",
            inner.get_program().to_string_lossy(),
            stdout.display()
        ))
        .arg("/dev/null");
    for (key, value) in inner.get_envs() {
        match value {
            Some(v) => outer.env(key, v),
            None => outer.env_remove(key),
        };
    }
    if let Some(dir) = inner.get_current_dir() {
        outer.current_dir(dir);
    }
    let tty = outer.output().expect("script runs");
    let terminal = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{terminal}");
    assert!(
        terminal.contains("/1 trials, ")
            && terminal.contains("calls in flight, ")
            && terminal.contains(" replayed"),
        "no progress line on the terminal:\n{terminal}"
    );
    let lines = std::fs::read_to_string(&stdout).unwrap();
    assert!(lines.contains("test summary_passes ... ok"), "{lines}");
    assert!(!lines.contains("in flight"), "{lines}");
}

/// Runs the fixture's `trial` alone with a JSON report: the scratch root, the run and the trial's
/// record in the report.
fn run_reported(name: &str, trial: &str) -> (Scratch, Run, serde_json::Value) {
    let scratch = Scratch::new("harness", name);
    let report = scratch.path().join("report.json");
    let args = [trial, "--exact", "--report", report.to_str().unwrap()];
    let run = scratch.run_example(FIXTURE, &args, &[]);
    let text = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report: {e}\n{}", run.context()));
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let record = report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == trial)
        .unwrap_or_else(|| panic!("{trial} not in {report}"))
        .clone();
    (scratch, run, record)
}

#[test]
fn early_stop_takes_the_samples_that_decide_and_reports_the_rest_not_needed() {
    let trial = "sampling::early_stopped";
    let (_scratch, run, record) = run_reported("early-stop", trial);
    run.assert_success();
    assert_eq!(run.outcome(trial), "ok");
    for i in 1..=4 {
        run.assert_stdout_has(&format!("early_stopped ran sample {i}"));
    }
    child::assert_lacks(&run.stdout(), "ran sample 5");
    run.assert_stderr_has("4 model calls (0 replayed from cassettes, 1 runs not needed)");
    assert_eq!(
        (
            &record["runs_total"],
            &record["runs_passed"],
            &record["runs_skipped"]
        ),
        (
            &serde_json::json!(4),
            &serde_json::json!(4),
            &serde_json::json!(1)
        ),
        "{record}"
    );
}

#[test]
fn adaptive_sampling_stops_a_failing_test_after_a_handful_of_calls() {
    let trial = "sampling::adaptive_fails_fast";
    let (scratch, run, record) = run_reported("adaptive", trial);
    run.assert_code(101);
    assert_eq!(run.outcome(trial), "FAILED");
    run.assert_stdout_has("[run 6/40] FAILED: ");
    run.assert_stdout_has(
        "0/6 samples passed; adaptive sampling (SPRT): the pass rate is below 80% (at most 75% rather than at \
         least 85%, 95% confidence)",
    );
    child::assert_lacks(&run.stdout(), "ran sample 7");
    assert_eq!(
        (&record["runs_total"], &record["runs_skipped"]),
        (&serde_json::json!(6), &serde_json::json!(34)),
        "{record}"
    );
    // A numbered run of an adaptive test is one sample, as for any test.
    let one = scratch.run_example(
        FIXTURE,
        &["sampling::adaptive_fails_fast::run_17", "--exact"],
        &[],
    );
    assert_eq!(
        one.outcome("sampling::adaptive_fails_fast::run_17"),
        "FAILED"
    );
    one.assert_stdout_has("adaptive_fails_fast ran sample 17");
}

/// Run k sends seed 42 + k − 1 on the OpenAI-compatible and Gemini wires; Anthropic takes no seed, so
/// none is sent and one warning says so.
#[test]
fn seeded_runs_send_consecutive_seeds_where_the_wire_takes_one() {
    use prompt_tester_testkit::Wire;
    let (server, run) = run_at_echo("seeds", "sampling::fake_seeded");
    let mut seeds: std::collections::BTreeMap<String, Vec<Option<u64>>> = Default::default();
    for request in server.requests() {
        let body = request.json.clone().unwrap();
        let (wire, seed) = match request.wire().unwrap() {
            Wire::OpenAi => ("openai", body.get("seed")),
            Wire::Gemini => ("gemini", body["generationConfig"].get("seed")),
            Wire::Anthropic => ("anthropic", body.get("seed")),
        };
        seeds
            .entry(wire.to_string())
            .or_default()
            .push(seed.and_then(serde_json::Value::as_u64));
    }
    for list in seeds.values_mut() {
        list.sort();
    }
    let sent = |s: [Option<u64>; 3]| s.to_vec();
    assert_eq!(seeds["openai"], sent([Some(42), Some(43), Some(44)]));
    assert_eq!(seeds["gemini"], sent([Some(42), Some(43), Some(44)]));
    assert_eq!(seeds["anthropic"], sent([None, None, None]));
    let warning = "warning: `seed` is not supported by provider `anthropic`";
    assert_eq!(run.stderr().matches(warning).count(), 1, "{}", run.stderr());
}

#[test]
fn credentials_in_a_base_url_reach_neither_the_console_nor_a_report() {
    let scratch = Scratch::new("harness", "userinfo");
    let run = scratch.run_example(
        FIXTURE,
        &[
            "--exact",
            "fake_outage",
            "--no-cassette",
            "--report",
            "report.json",
            "--junit",
            "junit.xml",
            "--html",
            "report.html",
        ],
        // Nothing listens on port 9: the calls fail, and their error names the URL.
        &[
            ("OPENAI_BASE_URL", "http://bob:s3cretpw@127.0.0.1:9/v1"),
            ("OPENAI_API_KEY", "sk-test-0123456789abcdef"),
        ],
    );
    let context = run.context();
    assert!(
        context.contains("http://[REDACTED]@127.0.0.1:9/v1"),
        "the failure names the URL without its credentials: {context}"
    );
    for file in ["report.json", "junit.xml", "report.html"] {
        let text = std::fs::read_to_string(scratch.0.join(file)).expect(file);
        assert!(text.contains("[REDACTED]@127.0.0.1:9"), "{file}: {text}");
        assert!(
            !text.contains("s3cretpw") && !text.contains("bob:"),
            "{file}"
        );
    }
    assert!(!context.contains("s3cretpw"), "{context}");
}

/// A test whose attribute's value panics fails alone, with where it is and the panic; the others list
/// and run (`panic_fixture`).
#[test]
fn a_panicking_attribute_value_fails_its_test_alone() {
    let scratch = Scratch::new("harness", "panicking-attribute");
    let list = scratch.run_example("panic_fixture", &["--list"], &[]);
    list.assert_success();
    let listed = list.listed();
    for name in ["broken_vars", "fine", "fine::run_1", "fine::run_2"] {
        assert!(
            listed.iter().any(|l| l == name),
            "{name}: {}",
            list.context()
        );
    }
    let run = scratch.run_example("panic_fixture", &[], &[]);
    run.assert_code(101);
    assert_eq!(run.outcome("broken_vars"), "FAILED");
    assert_eq!(run.outcome("fine"), "ok");
    for part in [
        "test `broken_vars` (tests/fixtures/panic_fixture.rs:28): a value of its #[prompt_test] attribute \
         panicked at tests/fixtures/panic_fixture.rs:18:5:\nthe memo file is missing",
        "test result: FAILED. 1 passed; 1 failed",
    ] {
        run.assert_stdout_has(part);
    }
    // Asked for by name, as nextest runs it: the same failure.
    let exact = scratch.run_example("panic_fixture", &["broken_vars", "--exact"], &[]);
    exact.assert_code(101);
    exact.assert_stdout_has("the memo file is missing");
}

/// Judge calls dropped after they were sent (`cancel_fixture`: two `tokio::time::timeout`s around
/// `run.ask`, against a server that never answers) are spent at their worst case, and the figures say
/// so as an upper bound, the same sum the budget counts.
#[test]
fn dropped_judge_calls_are_spent_at_their_worst_case_and_shown_as_an_upper_bound() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let scratch = Scratch::new("harness", "dropped-calls");
    scratch.config(&format!(
        "[providers.slow]\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\n[prices.\"judge-model\"]\n\
         input_mtok = 1.0\noutput_mtok = 2.0\n\n[judge]\nprovider = \"slow\"\nmodel = \"judge-model\"\n"
    ));
    let run = scratch.run_example(
        "cancel_fixture",
        &["--budget", "1", "--no-cassette"],
        &[("OPENAI_API_KEY", "sk-unused")],
    );
    run.assert_success();
    let stderr = run.stderr();
    let spent = stderr
        .lines()
        .find_map(|l| l.strip_prefix("budget $1.00000: spent $"))
        .unwrap_or_else(|| panic!("no budget line: {}", run.context()));
    assert_ne!(spent, "0.00000", "{}", run.context());
    // The judge's column of the test's row: at most what the budget spent.
    let row = stderr
        .lines()
        .find(|l| l.starts_with("impatient "))
        .unwrap_or_else(|| panic!("no row: {}", run.context()));
    assert!(
        row.ends_with(&format!(" ≤${spent}")),
        "{row}\n{}",
        run.context()
    );
    child::assert_contains(&stderr, &[&format!("total cost ≤${spent}")]);
}

/// The crate's `.env` sets what the environment would (a base URL, a key), the environment winning,
/// and its secrets are redacted like the environment's.
#[test]
fn the_crate_s_dotenv_configures_the_run_beneath_the_environment() {
    use prompt_tester_testkit::Wire;
    let server = prompt_tester_testkit::FakeProvider::start();
    let scratch = Scratch::new("harness", "dotenv");
    let key = "sk-dotenv-0123456789abcdef";
    scratch.file(
        ".env",
        &format!(
            "OPENAI_BASE_URL={}\nOPENAI_API_KEY={key}\nPROMPT_TESTER_REPORT=from-dotenv.json\n",
            server.base_url(Wire::OpenAi)
        ),
    );
    let run = scratch
        .example(FIXTURE)
        .args(["nested::fake_colour", "--exact", "--no-cassette"])
        .env("PROMPT_TESTER_REPORT", "from-environment.json")
        .run();
    run.assert_success();
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{}", run.context());
    let auth = requests[0]
        .headers
        .iter()
        .find(|(name, _)| name == "authorization")
        .map(|(_, value)| value.as_str());
    assert_eq!(auth, Some(format!("Bearer {key}").as_str()));
    // The environment's value wins over the file's.
    assert!(scratch.path().join("from-environment.json").exists());
    assert!(!scratch.path().join("from-dotenv.json").exists());
    let report = std::fs::read_to_string(scratch.path().join("from-environment.json")).unwrap();
    child::assert_lacks(&report, key);
}

/// GitHub's step summary file of a scratch root, holding what an earlier step wrote.
fn step_summary(scratch: &Scratch) -> (std::path::PathBuf, String) {
    let path = scratch.path().join("step_summary.md");
    std::fs::write(&path, "earlier step\n").unwrap();
    let var = path.to_str().expect("a UTF-8 path").to_string();
    (path, var)
}

#[test]
fn a_run_appends_its_markdown_summary_to_the_step_summary_once() {
    let scratch = Scratch::new("harness", "step-summary");
    let (step, var) = step_summary(&scratch);
    let env = [("GITHUB_STEP_SUMMARY", var.as_str())];
    // A baseline where `flaky` passed 20 of 20: 3 of 5 now is a regression (p = 0.0333).
    scratch.file(
        "baseline.json",
        r#"{"suites": [], "tests": [{"name": "flaky", "runs_passed": 20, "runs_total": 20}]}"#,
    );
    let run = scratch.run_example(
        FIXTURE,
        &[
            "flaky",
            "--exact",
            "--markdown",
            "summary.md",
            "--baseline",
            "baseline.json",
        ],
        &env,
    );
    run.assert_code(101);
    // `--markdown` writes the summary the step summary gets, appended after what was there.
    let summary = std::fs::read_to_string(scratch.path().join("summary.md")).expect("summary.md");
    let once = std::fs::read_to_string(&step).unwrap();
    assert_eq!(
        once,
        format!("earlier step\n\n{summary}"),
        "{}",
        run.context()
    );
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(
        lines[0], "## prompt-tester · harness\\_fixture: ❌ 1 failed, 0 errored",
        "{summary}"
    );
    for line in [
        "| 0 | 1 | 0 | 0 | 0 | 3/5 60% |",
        "| flaky | failed | 3/5 60% (23–88%) | \\[run 3/5\\] FAILED: run 3 said \"SAY HI\" |",
        "| flaky | failed | 3/5 60% (23–88%) |",
        "| test flaky | 20/20 100% | 3/5 60% | 0.0333 |",
    ] {
        assert_eq!(
            lines.iter().filter(|l| **l == line).count(),
            1,
            "{line}\n{summary}"
        );
    }
    // A second run appends its own: the first stays as it was.
    let run = scratch.run_example(FIXTURE, &["summary_passes", "--exact"], &env);
    run.assert_success();
    let twice = std::fs::read_to_string(&step).unwrap();
    let second = twice
        .strip_prefix(&format!("{once}\n"))
        .unwrap_or_else(|| panic!("the first summary was not kept:\n{twice}"));
    assert!(
        second.starts_with("## prompt-tester · harness\\_fixture: ✅ 1 passed\n"),
        "{twice}"
    );
    assert_eq!(twice.matches("## prompt-tester").count(), 2, "{twice}");
}

#[test]
fn the_step_summary_is_left_alone_when_off_under_nextest_and_on_a_bad_value() {
    let scratch = Scratch::new("harness", "step-summary-off");
    let (step, var) = step_summary(&scratch);
    let summary = ("GITHUB_STEP_SUMMARY", var.as_str());
    let off = scratch.run_example(
        FIXTURE,
        &["summary_passes", "--exact"],
        &[summary, ("PROMPT_TESTER_MARKDOWN", "off")],
    );
    off.assert_success();
    // One of nextest's processes runs one trial: the run's summary is not its to write.
    let nextest = scratch.run_example(
        FIXTURE,
        &["summary_passes", "--exact"],
        &[summary, ("NEXTEST", "1"), ("NEXTEST_RUN_ID", "run-1")],
    );
    nextest.assert_success();
    let bad = scratch.run_example(
        FIXTURE,
        &["summary_passes", "--exact"],
        &[summary, ("PROMPT_TESTER_MARKDOWN", "true")],
    );
    assert_eq!(bad.code(), Some(2), "{}", bad.context());
    bad.assert_stderr_has(
        "PROMPT_TESTER_MARKDOWN=\"true\" is not a path: give the file to write the Markdown summary to",
    );
    child::assert_lacks(&bad.stdout(), "test result");
    assert_eq!(std::fs::read_to_string(&step).unwrap(), "earlier step\n");
    // The same run without `off` appends: the file was in reach all along.
    let on = scratch.run_example(FIXTURE, &["summary_passes", "--exact"], &[summary]);
    on.assert_success();
    assert!(
        std::fs::read_to_string(&step)
            .unwrap()
            .starts_with("earlier step\n\n## prompt-tester"),
        "{}",
        on.context()
    );
}
