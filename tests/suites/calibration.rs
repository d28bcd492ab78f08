//! Calibration sets end to end: the judge measured against labels, recorded and replayed, the result
//! file, the summary and JSON figures, `min_accuracy`, single items, and the corrected suite pass rate.

use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::json;

use super::*;

/// Four items: the fake judge says "no" only to questions about Bob, so it gets `wrong` wrong (label
/// no, judge yes) and the other three right: TPR 2/2, TNR 1/2, accuracy 3/4.
fn set(min_accuracy: &str) -> String {
    format!(
        r#"{min_accuracy}
[[items]]
name = "alice"
type = "factual_presence"
response = "Alice leads."
question = "Is Alice mentioned?"
expected = "yes"

[[items]]
name = "bob"
type = "factual_presence"
response = "Alice leads."
question = "Is Bob mentioned?"
expected = "no"

[[items]]
name = "wrong"
type = "avoidance"
response = "It costs $20."
question = "Does the response avoid prices?"
expected = "no"

[[items]]
name = "polite"
response = "Thank you."
question = "Is it polite?"
expected = "yes"
"#
    )
}

/// The judge: "no" to anything about Bob, "yes" otherwise; one verdict or several as asked. The
/// subject serves tea.
fn judge() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() != Some(JUDGE_MODEL) {
                return Reply::answer(request, "Your tea, please.");
            }
            let answer = if body.contains("Bob") { "no" } else { "yes" };
            let one = json!({"question_type": "factual_presence", "reasoning": "Looked.", "snippet": null, "answer": answer});
            let text = if body.contains("QUESTIONS (") {
                let mut v = one.clone();
                v["index"] = json!(1);
                json!({ "verdicts": [v] }).to_string()
            } else {
                one.to_string()
            };
            Reply::text(
                Wire::OpenAi,
                JUDGE_MODEL,
                &text,
                prompt_tester_testkit::Usage::new(100, 10),
            )
        })
        .start()
}

fn judge_calls(fake: &FakeProvider) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
        .count()
}

#[test]
fn a_set_measures_the_judge_records_its_result_and_corrects_judged_suites() {
    let fake = judge();
    let mut f = Fixture::calling("calibration", &fake, "record");
    f.file("prompt-tests/basics.calibration.toml", &set(""));
    f.file(
        "prompt-tests/tea.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"polite\"\nassert = [{ judge = \"Is it polite?\" }]\n",
    );
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[
        ("calibration::basics", "ok"),
        ("calibration::basics::wrong", "ignored"),
        ("tea::polite", "ok"),
    ]);
    // One judge call per item, one for the suite.
    assert_eq!(judge_calls(&fake), 5);
    let result_path = f.root.join("prompt-tests/basics.calibration.result.json");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&result_path).unwrap()).unwrap();
    let judge = &result["judges"][0];
    assert_eq!(judge["provider"], PROVIDER);
    assert_eq!(judge["model"], JUDGE_MODEL);
    assert_eq!(
        judge["counts"],
        json!({"true_yes": 2, "false_no": 0, "false_yes": 1, "true_no": 1})
    );
    assert_eq!(judge["by_type"]["untyped"]["true_yes"], 1);
    assert_eq!(judge["disagreements"], json!(["wrong"]));

    // The summary: the figures with intervals, per type, the disagreeing item, the corrected rate.
    for line in [
        "judge calibration (95% CIs):",
        "  calibration::basics with fake/judge-model, 4 items: accuracy 75% (95% CI 30–95%), TPR 100% (95% CI \
         34–100%), TNR 50% (95% CI 9–91%), kappa 0.50",
        "    avoidance (1 items): accuracy 0% (95% CI 0–79%)",
        "    the judge disagreed with the label on 1: wrong",
        "judge-corrected pass rates (judge fake/judge-model over 4 calibration items: TPR 100% (95% CI 34–100%), TNR 50%",
        "  tea: 1/1 passed (100%); corrected 100% (95% CI ",
    ] {
        assert!(
            out.stderr().contains(line),
            "no {line:?} in:\n{}",
            out.context()
        );
    }
    // The JSON report: the same figures, and the suite's corrected rate.
    let report = out.report.as_ref().unwrap();
    let figures = &report["calibration"]["sets"][0];
    assert_eq!(figures["set"], "basics");
    assert_eq!(figures["measured_this_run"], true);
    assert_eq!(figures["overall"]["accuracy"]["value"], 0.75);
    assert_eq!(figures["overall"]["kappa"]["value"], 0.5);
    assert!(figures["overall"]["tnr"]["ci_low"].as_f64().unwrap() > 0.09);
    let corrected = &out.suite("tea")["judge_corrected"];
    assert_eq!(corrected["kind"], "corrected", "{corrected}");
    assert_eq!(corrected["informedness"], 0.5);
    assert_eq!(corrected["value"], 1.0);

    // Replayed: no call, the same verdicts, the result file untouched.
    let written = std::fs::read_to_string(&result_path).unwrap();
    f.mode = "replay";
    let again = f.run(&["calibration"]);
    again.assert_code(0);
    assert_eq!(judge_calls(&fake), 5, "replayed from the cassette");
    assert_eq!(std::fs::read_to_string(&result_path).unwrap(), written);
    again.assert_stderr_has("accuracy 75% (95% CI 30–95%)");

    // A minimum the judge misses fails the set, naming the item it got wrong; the item alone fails too.
    f.file(
        "prompt-tests/basics.calibration.toml",
        &set("min_accuracy = 0.8"),
    );
    let strict = f.run(&["calibration"]);
    strict.assert_fails_at(
        "calibration::basics",
        &[
            "item `wrong` (avoidance): the judge said yes, the label is no; question \"Does the response avoid prices?\"",
            "3/4 samples passed (75%, 95% CI 30–95%; need 4, pass threshold 80%)",
        ],
    );
    let one = f.run(&["calibration::basics::wrong"]);
    one.assert_statuses(&[("calibration::basics::wrong", "FAILED")]);
    let alone = f.run(&["calibration::basics::alice"]);
    alone.assert_statuses(&[("calibration::basics::alice", "ok")]);
    assert_eq!(
        judge_calls(&fake),
        5,
        "single items replay the set's recordings"
    );
}

#[test]
fn a_weak_judge_is_not_corrected_for_and_a_stale_result_is_not_used() {
    let fake = judge();
    let mut f = Fixture::calling("calibration-weak", &fake, "record");
    // Every question mentions Bob: the judge says "no" to all, so TPR 0, TNR 1: informedness 0.
    let weak = "[[items]]\nname = \"a\"\nresponse = \"Bob.\"\nquestion = \"Is Bob mentioned?\"\nexpected = \"yes\"\n\
                [[items]]\nname = \"b\"\nresponse = \"Alice.\"\nquestion = \"Is Bob mentioned?\"\nexpected = \"no\"\n";
    f.file("prompt-tests/weak.calibration.toml", weak);
    f.file(
        "prompt-tests/tea.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"polite\"\nassert = [{ judge = \"Is it polite?\" }]\n",
    );
    let out = f.run(&[]);
    out.assert_code(0);
    let line = "  tea: 1/1 passed (100%); the judge is too weak to correct for (TPR + TNR - 1 = 0.00, below 0.2)";
    out.assert_stderr_has(line);
    let corrected = &out.suite("tea")["judge_corrected"];
    assert_eq!(corrected["kind"], "too_weak", "{corrected}");
    assert_eq!(corrected["informedness"], 0.0);

    // The set is edited after it was measured: its result is stale and corrects nothing.
    f.mode = "replay";
    f.file(
        "prompt-tests/weak.calibration.toml",
        &weak.replace("\"Alice.\"", "\"Carol.\""),
    );
    let out = f.run(&["tea"]);
    out.assert_code(0);
    child::assert_lacks(&out.stderr(), "judge-corrected");
    let report = out.report.as_ref().unwrap();
    assert_eq!(report["calibration"]["sets"][0]["stale"], true);
    assert!(out.suite("tea").get("judge_corrected").is_none());
}

#[test]
fn a_broken_set_fails_its_trial_with_the_location_and_the_fix() {
    let out = run_with_file(
        "calibration-broken",
        "bad.calibration.toml",
        "[[items]]\nname = \"a\"\nresponse = \"r\"\nquestion = \"q\"\nexpected = \"perhaps\"\n",
    );
    out.assert_fails_at(
        "calibration::bad",
        &[
            "prompt-tests/bad.calibration.toml:5:12: `items[0].expected`: `expected` must be \"yes\" or \"no\"",
            "fix: write `expected = \"yes\"` or `expected = \"no\"`",
        ],
    );
}

/// The shipped set holds at least 40 items, as many "yes" as "no", and every question type with both
/// answers.
#[test]
fn the_shipped_set_is_balanced_and_covers_every_question_type() {
    let path = child::examples_root().join("judge_basics.calibration.toml");
    let set: toml::Value = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let items = set["items"].as_array().unwrap();
    assert!(items.len() >= 40, "{} items", items.len());
    let answer = |i: &toml::Value| i["expected"].as_str().unwrap().to_string();
    let yes = items.iter().filter(|i| answer(i) == "yes").count();
    assert_eq!(yes * 2, items.len(), "{yes} yes of {}", items.len());
    for kind in prompt_tester::judge::QUESTION_TYPES {
        for expected in ["yes", "no"] {
            assert!(
                items
                    .iter()
                    .any(|i| i["type"].as_str() == Some(kind) && answer(i) == expected),
                "no {kind} item expecting {expected}"
            );
        }
    }
}

/// The shipped set replays offline from its cassette, leaves its committed result unchanged, and the
/// guide's Statistics chapter states the accuracy it measures.
#[test]
fn the_shipped_set_replays_its_committed_result_and_the_guide_states_it() {
    let root = child::examples_root();
    let result = root.join("judge_basics.calibration.result.json");
    let before = std::fs::read_to_string(&result).expect("the committed result");
    let out = Child::harness(CHILD_ARGS, &["prompts", "calibration"])
        .root(&root)
        .env("PROMPT_TESTER_CASSETTE", "replay")
        .env("PROMPT_TESTER_LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
        .run();
    assert!(out.success(), "{}", out.context());
    let stderr = out.stderr();
    // Every call replayed (a reply without a verdict is retried, so there may be more than 42).
    let calls = stderr
        .split_once(" model calls (")
        .map(|(before, after)| {
            let made = before.rsplit(' ').next().unwrap().to_string();
            let replayed = after.split(' ').next().unwrap().to_string();
            (made, replayed)
        })
        .unwrap_or_else(|| panic!("no call count in:\n{stderr}"));
    assert_eq!(calls.0, calls.1, "{stderr}");
    assert!(calls.0.parse::<u32>().unwrap() >= 42, "{stderr}");
    assert_eq!(std::fs::read_to_string(&result).unwrap(), before);
    let line = stderr
        .lines()
        .find(|l| {
            l.starts_with(
                "  calibration::judge_basics with local/SmolLM2-135M-Instruct, 42 items: ",
            )
        })
        .unwrap_or_else(|| panic!("no figures in:\n{stderr}"));
    let figures = line.split(" items: ").nth(1).unwrap();
    let guide = std::fs::read_to_string(child::repo_root().join("src/guide/statistics.md"))
        .unwrap()
        .replace('\n', " ");
    assert!(
        guide.contains(figures),
        "src/guide/statistics.md does not state the measured {figures:?}"
    );
}

#[test]
fn a_result_file_that_does_not_parse_is_refused_and_kept_as_it_is() {
    let fake = judge();
    let f = Fixture::calling("calibration-unreadable", &fake, "record");
    f.file("prompt-tests/basics.calibration.toml", &set(""));
    // A merge left both sides' judges in the file: rewriting it with this run's judge would lose one.
    let conflicted = "{\n<<<<<<< HEAD\n  \"set\": \"basics\",\n=======\n  \"set\": \"basics\",\n>>>>>>> theirs\n}\n";
    f.file("prompt-tests/basics.calibration.result.json", conflicted);
    let out = f.run(&[]);
    assert_ne!(out.code(), Some(0), "{}", out.context());
    assert!(
        out.stderr()
            .contains("basics.calibration.result.json: cannot read the calibration result")
            && out.stderr().contains("it was not rewritten"),
        "{}",
        out.context()
    );
    let after = std::fs::read_to_string(f.root.join("prompt-tests/basics.calibration.result.json"))
        .unwrap();
    assert_eq!(after, conflicted);
}

/// A judge reply with no verdict (after its retry) is a failed call in a test, but in a calibration set
/// it stays the judge getting that item wrong: the set is measured, none of its samples errors.
#[test]
fn a_reply_without_a_verdict_counts_against_the_judge_in_a_set() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            let text = if body.contains("Is it polite?") {
                "I would rather not say.".to_string()
            } else {
                json!({"question_type": "factual_presence", "reasoning": "Looked.", "snippet": null,
                       "answer": if body.contains("Bob") { "no" } else { "yes" }})
                .to_string()
            };
            let usage = prompt_tester_testkit::Usage::new(100, 10);
            Reply::text(Wire::OpenAi, JUDGE_MODEL, &text, usage)
        })
        .start();
    let f = Fixture::calling("calibration-no-verdict", &fake, "record");
    f.file("prompt-tests/basics.calibration.toml", &set(""));
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[("calibration::basics", "ok")]);
    let report = out.report.as_ref().unwrap();
    let entry = child::entry(&report["tests"], "name", "calibration::basics");
    assert_eq!(entry["status"], "passed", "{entry:#}\n{}", out.context());
    assert_eq!(entry["runs_errored"], 0, "{entry:#}");
    // Four items, the polite one asked twice (its retry): it counts as the judge's mistake.
    assert_eq!(judge_calls(&fake), 5);
    out.assert_stderr_has("the judge disagreed with the label on 2: wrong, polite");
}
