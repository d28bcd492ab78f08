//! Prices, the JSON report and JUnit, and how runs and the pass threshold make trials.

use prompt_tester::{CompletionRequest, CompletionResult};
use serde_json::json;

use super::assertions::{KINDS, Kind, kinds_suite};
use super::*;

/// On a `free = true` endpoint every model costs $0, even one the price table does not know:
/// `max_cost` is checked without a warning, and neither the summary nor the report says "unpriced".
#[test]
fn a_free_endpoint_prices_every_model_at_zero() {
    let mut f = Fixture::new("free");
    f.file(
        "prompt-tester.toml",
        &format!(
            "[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"self-hosted-model\"\nmax_tokens = {MAX_TOKENS}\n\n\
             [providers.{PROVIDER}]\nbase_url = \"http://127.0.0.1:9/v1\"\nfree = true\n"
        ),
    );
    f.file(
        "prompt-tests/free.evals.toml",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"hi\"\nassert = [{ max_cost = 0.0 }]\n",
    );
    let request = CompletionRequest::new("self-hosted-model", "Say hi", MAX_TOKENS);
    f.answer_with("free", request, 1, CompletionResult::new("hi", 10, 20), 100);
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[("free::hi", "ok")]);
    child::assert_lacks(&out.stderr(), "unpriced");
    child::assert_lacks(&out.stderr(), "warning");
    let stderr = out.stderr();
    let row = stderr
        .lines()
        .find(|l| l.starts_with("free::hi "))
        .unwrap_or_else(|| panic!("no summary row: {}", out.context()));
    assert!(row.contains("$0.00000"), "{row}");
    let report = out.report.as_ref().expect("a JSON report");
    let usage = &report["suites"][0]["usage"];
    assert_eq!(usage["subject"]["cost_usd"], json!(0.0), "{usage}");
    assert_eq!(usage["unpriced"], json!([]), "{usage}");
}

#[test]
fn reports_hold_suites_categories_failures_and_junit_properties() {
    let mut f = Fixture::new("reports");
    kinds_suite(&mut f);
    // A second suite whose answer quotes a secret: the reports must not.
    f.recorded_suite(
        "leak",
        "prompt = \"Repeat the key\"\n[[cases]]\nname = \"quote\"\nassert = [{ contains = \"nothing\" }]\n",
        &[("Repeat the key", &format!("the key is {SECRET}"))],
    );
    let out = f.run(&[]);
    let report = out
        .report
        .as_ref()
        .unwrap_or_else(|| panic!("no report\n{}", out.context()));
    let raw = serde_json::to_string(report).unwrap();
    assert!(!raw.contains(SECRET), "the JSON report leaks the key");
    assert!(raw.contains("[REDACTED:PT_FAKE_API_KEY]"), "{raw}");

    let kinds = out.suite("kinds");
    let passed = KINDS.iter().filter(|k| k.pass).count();
    assert_eq!(kinds["prompt_id"], "qa");
    assert_eq!(kinds["prompt_version"], "v2");
    assert_eq!(kinds["dataset_version"], "7");
    assert_eq!(kinds["file"], "prompt-tests/kinds.evals.toml");
    assert_eq!(kinds["passed"], passed);
    assert_eq!(kinds["total"], KINDS.len());
    assert_eq!(kinds["skipped"], 1);
    let rate = kinds["pass_rate"].as_f64().unwrap();
    assert!((rate - passed as f64 / KINDS.len() as f64).abs() < 1e-9);
    assert!(kinds["timestamp"].as_str().unwrap().ends_with('Z'));
    for category in ["text", "json", "limits", "custom", "judge", "score"] {
        let of: Vec<&Kind> = KINDS.iter().filter(|k| k.category == category).collect();
        let entry = &kinds["by_category"][category];
        assert_eq!(entry["count"], of.len(), "{category}");
        let want = of.iter().filter(|k| k.pass).count() as f64 / of.len() as f64;
        assert!(
            (entry["pass_rate"].as_f64().unwrap() - want).abs() < 1e-9,
            "{category}: {entry}"
        );
    }
    let failures = kinds["failures"].as_array().unwrap();
    assert_eq!(failures.len(), KINDS.iter().filter(|k| !k.pass).count());
    let words = failures
        .iter()
        .find(|f| f["case_id"] == "words_fail")
        .unwrap();
    assert_eq!(words["category"], "limits");
    assert_eq!(words["output_preview"], "one two three");
    assert_eq!(kinds["usage"]["subject"]["calls"], KINDS.len());
    assert_eq!(kinds["usage"]["subject"]["replayed"], KINDS.len());
    assert_eq!(
        report["tests"].as_array().unwrap().len(),
        0,
        "no #[prompt_test] in this binary"
    );
    assert_eq!(report["totals"]["ignored"], 1);
    assert_eq!(report["totals"]["passed"], passed);

    let xml = out.junit.as_deref().expect("a JUnit report was written");
    assert!(!xml.contains(SECRET), "the JUnit report leaks the key");
    let junit = quick_junit::Report::deserialize_from_str(xml).expect("valid JUnit XML");
    let suite = junit
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "kinds")
        .expect("a kinds testsuite");
    assert_eq!(suite.test_cases.len(), KINDS.len() + 1);
    let case = |name: &str| {
        suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap()
    };
    let prop = |c: &quick_junit::TestCase, name: &str| {
        c.properties
            .iter()
            .find(|p| p.name.as_str() == name)
            .map(|p| p.value.as_str().to_string())
    };
    let cost = case("kinds::cost_pass");
    assert!(matches!(
        cost.status,
        quick_junit::TestCaseStatus::Success { .. }
    ));
    assert_eq!(prop(cost, "runs").as_deref(), Some("1"));
    assert_eq!(prop(cost, "pass_rate").as_deref(), Some("1.0000"));
    assert_eq!(prop(cost, "subject_input_tokens").as_deref(), Some("10"));
    assert_eq!(prop(cost, "subject_output_tokens").as_deref(), Some("20"));
    assert_eq!(prop(cost, "subject_cost_usd").as_deref(), Some("0.000050"));
    assert_eq!(prop(cost, "category").as_deref(), Some("limits"));
    // An unpriced model's cost is unknown: absent, never 0.000000.
    let unpriced = case("kinds::cost_unpriced");
    assert_eq!(prop(unpriced, "subject_cost_usd"), None);
    assert_eq!(
        prop(unpriced, "unpriced_models").as_deref(),
        Some("fake/unpriced-model")
    );
    assert_eq!(prop(unpriced, "subject_calls").as_deref(), Some("1"));
    match &case("kinds::regex_fail").status {
        quick_junit::TestCaseStatus::NonSuccess {
            kind, description, ..
        } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
            assert!(
                description
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .contains("regex: expected a match")
            );
        }
        other => panic!("regex_fail is {other:?}"),
    }
    match &case("kinds::later").status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => {
            assert_eq!(
                message.as_ref().unwrap().as_str(),
                "waiting on the new policy"
            )
        }
        other => panic!("later is {other:?}"),
    }
    assert!(junit.test_suites.iter().any(|s| s.name.as_str() == "leak"));
}

#[test]
fn runs_and_pass_threshold_make_one_trial_with_single_run_trials() {
    let mut f = Fixture::new("runs");
    f.suite("runs");
    for (run, output) in [(1, "yes"), (2, "no"), (3, "yes")] {
        f.answer("runs", "Say yes: 1", run, output);
    }
    for (run, output) in [(1, "no"), (2, "nope"), (3, "yes")] {
        f.answer("runs", "Say yes: 2", run, output);
    }
    f.answer("runs", "Say yes: 3", 1, "yes");

    let list = f.run(&["--list"]);
    for trial in [
        "runs::mostly: test",
        "runs::mostly::run_1: test",
        "runs::mostly::run_3: test",
        "runs::once: test",
    ] {
        assert!(
            list.stdout().lines().any(|l| l == trial),
            "{trial} not listed\n{}",
            list.context()
        );
    }
    child::assert_lacks(&list.stdout(), "runs::once::run_1");

    let out = f.run(&[]);
    out.assert_statuses(&[
        ("runs::mostly", "ok"),
        ("runs::once", "ok"),
        ("runs::rarely", "FAILED"),
    ]);
    assert!(out.outcome("runs::mostly::run_2").starts_with("ignored"));
    out.assert_failure_has(
        "runs",
        "rarely",
        &[
            "[run 1/3] FAILED: 1 of 1 assertion failed:",
            "[run 2/3] FAILED",
            "1/3 samples passed (33%, 95% CI 6–79%; need 2, pass threshold 60%)",
        ],
    );

    // A single run named exactly runs alone, and only that trial is built.
    let one = f.run(&["--exact", "runs::rarely::run_3"]);
    one.assert_code(0);
    assert_eq!(one.outcome("runs::rarely::run_3"), "ok");
    one.assert_stdout_has("1 passed; 0 failed");
    let two = f.run(&["--exact", "runs::rarely::run_2"]);
    two.assert_code(101);
}
