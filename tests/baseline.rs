//! `--baseline`: a run compared with a previous JSON report, in child processes. The harness fixture
//! against baselines written here, and the example prompt tests against the committed
//! `prompt-tests/baseline.json`.

use prompt_tester_testkit::child::{self, Child, Run, Scratch};

const FIXTURE: &str = "harness_fixture";

/// A baseline in which `mostly_passes` passed 20 of 20 samples (now 12 of 20: p = 0.0033) and
/// `tolerant` 3 of 3 (now 2 of 3: p = 1, not significant); only the counts a comparison reads.
const BASELINE: &str = r#"{
  "suites": [],
  "tests": [
    { "name": "mostly_passes", "status": "passed", "runs_passed": 20, "runs_total": 20 },
    { "name": "tolerant", "status": "passed", "runs_passed": 3, "runs_total": 3 },
    { "name": "summary_passes", "status": "passed", "runs_passed": 1, "runs_total": 1 },
    { "name": "removed_since", "status": "passed", "runs_passed": 1, "runs_total": 1 }
  ]
}"#;

const PASSING: [&str; 3] = ["mostly_passes", "tolerant", "summary_passes"];

/// Runs the three passing fixture tests (and nothing else) with `args`.
fn run(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut argv: Vec<&str> = args.to_vec();
    // libtest takes one filter; everything else is skipped by name.
    argv.extend(child::skipping(&[
        "fake_",
        "needs_judge",
        "many",
        "bad_",
        "flaky",
        "panics",
        "placeholder",
        "executor_",
        "sampling::",
    ]));
    // Built here: `cargo test --test baseline` alone does not rebuild the examples.
    let fixture =
        child::fresh_example_binary(FIXTURE, std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    scratch.child(fixture).args(&argv).envs(env).run()
}

fn line_with<'a>(run: &'a str, text: &str) -> &'a str {
    run.lines()
        .find(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} in:\n{run}"))
}

#[test]
fn a_significant_regression_is_listed_first_and_fails_the_run_only_when_asked() {
    let scratch = Scratch::new("baseline", "regression");
    scratch.file("base.json", BASELINE);

    let plain = run(&scratch, &["--baseline", "base.json"], &[]);
    plain.assert_success();
    for test in PASSING {
        assert_eq!(plain.outcome(test), "ok", "{}", plain.context());
    }
    let stderr = plain.stderr();
    let head = line_with(&stderr, "baseline base.json:");
    assert_eq!(
        head,
        "baseline base.json: 1 significant regression, 0 significant improvements (Fisher's exact test, \
         two-sided, significant at p ≤ 0.05; no multiple-comparison correction)"
    );
    let lines: Vec<&str> = stderr.lines().skip_while(|l| *l != head).skip(1).collect();
    assert_eq!(
        lines[..3],
        [
            "  REGRESSION   test mostly_passes: 20/20 (100%) then, 12/20 (60%) now, p = 0.0033",
            "  not signif.  test tolerant: 3/3 (100%) then, 2/3 (67%) now, p = 1.0000",
            "  3 compared: 2 changed, 1 unchanged; not compared: 1 in the baseline only, 0 new",
        ],
        "{stderr}"
    );
    // The summary lists the flaky ones apart.
    line_with(
        &stderr,
        "flaky (some samples passed, some failed): mostly_passes 12/20, tolerant 2/3",
    );

    let strict = run(
        &scratch,
        &["--baseline", "base.json", "--fail-on-regression"],
        &[],
    );
    strict.assert_code(101);
    strict.assert_stdout_has("test result: ok. 3 passed; 0 failed");
    strict.assert_stderr_has(
        "error: --fail-on-regression: 1 significant regression since the baseline (test mostly_passes)",
    );

    // At alpha 0.001 the drop could be chance: nothing fails. The variables work as the flags do.
    let lenient = run(
        &scratch,
        &[],
        &[
            ("PROMPT_TESTER_BASELINE", "base.json"),
            ("PROMPT_TESTER_BASELINE_ALPHA", "0.001"),
            ("PROMPT_TESTER_FAIL_ON_REGRESSION", "1"),
        ],
    );
    lenient.assert_success();
    lenient.assert_stderr_has(
        "  not signif.  test mostly_passes: 20/20 (100%) then, 12/20 (60%) now, p = 0.0033",
    );
    lenient.assert_stderr_has("baseline base.json: 0 significant regressions");
}

#[test]
fn a_missing_baseline_or_a_bad_value_is_an_error_before_any_trial_runs() {
    let scratch = Scratch::new("baseline", "errors");
    scratch.file("not-a-report.json", "{\"totals\": {}}");
    // (arguments, variables, the error printed)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 5] = [
        (
            &["--baseline", "nowhere.json"],
            &[],
            "error: cannot read the baseline nowhere.json: ",
        ),
        (
            &["--baseline", "not-a-report.json"],
            &[],
            "error: the baseline not-a-report.json is not a prompt-tester JSON report (missing field `suites`",
        ),
        (
            &["--baseline", "not-a-report.json", "--baseline-alpha", "5%"],
            &[],
            "error: --baseline-alpha is \"5%\"; it must be a number between 0 and 1",
        ),
        (
            &["--fail-on-regression"],
            &[],
            "error: --fail-on-regression needs a baseline: add --baseline PATH",
        ),
        (
            &[],
            &[
                ("PROMPT_TESTER_BASELINE", "b.json"),
                ("PROMPT_TESTER_FAIL_ON_REGRESSION", "often"),
            ],
            "error: PROMPT_TESTER_FAIL_ON_REGRESSION is \"often\"; use 1 or true, 0 or false",
        ),
    ];
    for (args, env, error) in cases {
        let run = run(&scratch, args, env);
        run.assert_code(2);
        run.assert_stderr_has(error);
        // No trial runs.
        child::assert_lacks(&run.stdout(), "test result");
    }
}

/// The guide's command (Statistics): the example prompt tests, offline from their cassettes, against the report
/// they wrote (`prompt-tests/baseline.json`). Nothing changed, so nothing is significant.
#[test]
fn the_examples_against_their_committed_baseline_show_no_significant_change() {
    let root = child::examples_root();
    // `cargo test --test baseline` alone does not build the `prompts` target: an old build would test
    // old code.
    let built = child::cargo()
        .args([
            "test",
            "--quiet",
            "--no-run",
            "--test",
            "prompts",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo test --no-run --test prompts failed");
    let run = Child::new(child::test_binary("prompts"))
        .root(&root)
        .args(["--baseline", "baseline.json", "--fail-on-regression"])
        .env("PROMPT_TESTER_CASSETTE", "replay")
        .run();
    run.assert_success();
    let stderr = run.stderr();
    line_with(
        &stderr,
        "baseline baseline.json: 0 significant regressions, 0 significant improvements",
    );
    let tally = line_with(&stderr, " compared: ");
    assert!(
        tally.contains(" compared: 0 changed, ") && tally.ends_with("in the baseline only, 0 new"),
        "{stderr}"
    );
    let compared: usize = tally.trim().split(' ').next().unwrap().parse().unwrap();
    assert!(
        compared >= 5,
        "tests, cases and categories are compared: {tally}"
    );
}
