//! How far a verdict is trusted, end to end: a calibration result applies only to the judge it
//! measured (provider, model, instructions, temperature, `max_tokens`), each verdict carries the
//! measurement on its question type or is advisory, and `[judge] advisory` decides what a failing
//! advisory verdict does.

use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::json;

use super::*;

/// Ten factual-presence items the judge below gets right (five about Alice, labelled yes; five about
/// Bob, labelled no): 10/10, whose 95% lower end (72%) clears the default `min_accuracy` of 70%.
fn facts() -> String {
    let mut set = String::new();
    for i in 0..5 {
        set.push_str(&format!(
            "[[items]]\nname = \"alice_{i}\"\ntype = \"factual_presence\"\nresponse = \"Alice leads, {i}.\"\n\
             question = \"Is Alice mentioned ({i})?\"\nexpected = \"yes\"\n\n\
             [[items]]\nname = \"bob_{i}\"\ntype = \"factual_presence\"\nresponse = \"Alice leads, {i}.\"\n\
             question = \"Is Bob mentioned ({i})?\"\nexpected = \"no\"\n\n"
        ));
    }
    set
}

/// A suite of two cases: one asks a factual-presence question (measured by [`facts`]), the other an
/// avoidance question the judge answers "no" (nothing measures avoidance).
const SUITE: &str = r#"prompt = "Serve tea"

[[cases]]
name = "names_alice"
assert = [{ judge = "Is Alice mentioned?" }]

[[cases]]
name = "avoids_prices"
assert = [{ judge = "Does it avoid prices?" }]
"#;

/// The judge (any model whose name holds `judge`): "no" to Bob and to prices, "yes" otherwise, typing
/// questions about avoiding as avoidance. The subject serves tea, naming Alice and a price.
fn judge() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| {
            let model = request.model().unwrap_or_default();
            if !model.contains("judge") {
                return Reply::answer(request, "Alice serves your tea: $3.");
            }
            let user = request.last_user_text().unwrap_or_default();
            let question = user.rsplit("QUESTION").next().unwrap_or_default();
            let avoidance = question.contains("avoid");
            let answer = if question.contains("Bob") || avoidance {
                "no"
            } else {
                "yes"
            };
            let kind = if avoidance {
                "avoidance"
            } else {
                "factual_presence"
            };
            let mut one = json!({"question_type": kind, "reasoning": "Looked.", "snippet": null, "answer": answer});
            let text = if user.contains("QUESTIONS (") {
                one["index"] = json!(1);
                json!({ "verdicts": [one] }).to_string()
            } else {
                one.to_string()
            };
            Reply::text(
                Wire::OpenAi,
                &model,
                &text,
                prompt_tester_testkit::Usage::new(100, 10),
            )
        })
        .start()
}

/// The first judge answer of the one sample of case `case` in `suite`.
fn answer(out: &Outcome, case: &str) -> Value {
    child::entry(&out.suite("tea")["cases"], "case_id", case)["samples"][0]["judge"][0].clone()
}

#[test]
fn verdicts_carry_their_measurement_and_a_changed_judge_stops_a_result_from_applying() {
    let fake = judge();
    let mut f = Fixture::calling("trust", &fake, "record");
    f.file("prompt-tests/facts.calibration.toml", &facts());
    f.file("prompt-tests/tea.evals.toml", SUITE);
    // Measure the judge first (its verdicts in this run have no measurement yet).
    let measured = f.run(&["calibration::facts"]);
    measured.assert_code(0);
    let result_path = f.root.join("prompt-tests/facts.calibration.result.json");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&result_path).unwrap()).unwrap();
    let settings = &result["judges"][0]["judge_settings"];
    assert_eq!(settings["max_tokens"], 1024, "{result}");
    assert_eq!(settings["temperature"], 0.0, "{result}");
    assert_eq!(
        settings["instructions_sha256"].as_str().map(str::len),
        Some(64)
    );

    // The suite: the factual-presence verdict carries the measurement; the avoidance one is advisory
    // and every report says so: its failure (marked, `[judge] advisory = "fail"` by default),
    // the JSON and HTML reports, the Markdown summary and the recorded verdict the review screen shows.
    let (markdown, html) = (
        f.root.join("out/summary.md"),
        f.root.join("out/report.html"),
    );
    let out = f.run(&[
        "tea",
        "--markdown",
        &markdown.display().to_string(),
        "--html",
        &html.display().to_string(),
    ]);
    out.assert_statuses(&[("tea::names_alice", "ok"), ("tea::avoids_prices", "FAILED")]);
    let alice = answer(&out, "names_alice");
    assert_eq!(alice["question_type"], "factual_presence");
    assert!(alice.get("advisory").is_none(), "{alice}");
    let m = &alice["measurement"];
    assert_eq!(m["question_type"], "factual_presence");
    assert_eq!(
        (&m["accuracy"]["successes"], &m["accuracy"]["trials"]),
        (&json!(10), &json!(10))
    );
    assert!((m["accuracy"]["ci_low"].as_f64().unwrap() - 0.7225).abs() < 5e-4);
    assert_eq!(m["tpr"]["trials"], 5);
    assert_eq!(m["tnr"]["successes"], 5);
    let prices = answer(&out, "avoids_prices");
    assert_eq!(
        prices["advisory"],
        json!({"reason": "unmeasured", "question_type": "avoidance"})
    );
    assert!(prices.get("measurement").is_none(), "{prices}");
    out.assert_failure_has(
        "tea",
        "avoids_prices",
        &["; advisory: this judge is not measured on avoidance questions"],
    );
    out.assert_stderr_has(
        "warning: 1 failed sample(s) had an advisory judge verdict (its judge is not measured well enough on \
         that type of question): tea::avoids_prices; measure the judge",
    );
    let summary = std::fs::read_to_string(&markdown).unwrap();
    child::assert_contains(
        &summary,
        &[
            "| tea::avoids\\_prices | failed (advisory verdict) | 0/1 0% ",
            "### Advisory judge verdicts (1 test(s))",
            "| tea::avoids\\_prices | failed | 1/1 | this judge is not measured on avoidance questions |",
        ],
    );
    child::assert_lacks(&summary, "| tea::names\\_alice | passed |");
    // The page carries the answer's advisory mark, which its script shows as "advisory: ..." (the
    // browser test in html.rs checks the text shown).
    let page = std::fs::read_to_string(&html).unwrap();
    child::assert_contains(
        &page,
        &[
            r#""advisory":{"reason":"unmeasured","question_type":"avoidance"}"#,
            "advisory: this judge is not measured on ",
        ],
    );
    let cassette: Value = serde_json::from_str(
        &std::fs::read_to_string(f.root.join("prompt-tests/cassettes/tea.cassette.json")).unwrap(),
    )
    .unwrap();
    let recorded = |case: &str| {
        cassette["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["test"] == format!("tea::{case}"))
            .and_then(|v| {
                let checks = v["checks"].as_array()?;
                checks
                    .iter()
                    .find(|c| {
                        c["check"]
                            .as_str()
                            .is_some_and(|c| c.starts_with("judge: "))
                    })
                    .cloned()
            })
            .unwrap_or_else(|| panic!("no verdict of {case}: {cassette}"))
    };
    assert_eq!(recorded("avoids_prices")["advisory"], true);
    assert!(recorded("names_alice").get("advisory").is_none());

    // The judge model changes: the result is not applied, and the summary and the report say why and
    // how to measure again.
    f.env.push(("PROMPT_TESTER_JUDGE_MODEL", "judge-model-2"));
    let changed = f.run(&["tea"]);
    let said = "calibration::facts was measured with another judge (model judge-model → judge-model-2): its \
                result is not applied; measure this judge with: PROMPT_TESTER_CASSETTE=record cargo test --test \
                suites -- --exact calibration::facts";
    changed.assert_stderr_has(said);
    let report = changed.report.as_ref().unwrap();
    let judge_changed = &report["calibration"]["judge_changed"][0];
    assert_eq!(judge_changed["set"], "facts");
    assert_eq!(
        judge_changed["differences"],
        json!(["model judge-model → judge-model-2"])
    );
    assert_eq!(report["calibration"]["sets"][0]["applies"], false);
    assert_eq!(report["calibration"]["sets"][0]["stale"], false);
    assert_eq!(
        answer(&changed, "names_alice")["advisory"],
        json!({"reason": "unmeasured", "question_type": "factual_presence"})
    );
    f.env.clear();

    // The judge's instructions differ from the ones measured (a result written by another version).
    let original = std::fs::read_to_string(&result_path).unwrap();
    let sha = settings["instructions_sha256"].as_str().unwrap();
    f.file(
        "prompt-tests/facts.calibration.result.json",
        &original.replace(sha, &"0".repeat(64)),
    );
    f.mode = "replay";
    let edited = f.run(&["tea"]);
    edited.assert_stderr_has(
        "calibration::facts was measured with another judge (judge instructions changed): its result is not \
         applied",
    );
    let report = edited.report.as_ref().unwrap();
    assert_eq!(
        report["calibration"]["judge_changed"][0]["differences"],
        json!(["judge instructions changed"])
    );
    assert!(answer(&edited, "names_alice")["advisory"].is_object());

    // A result written before judge settings were recorded: applied, and said once.
    let mut old: Value = serde_json::from_str(&original).unwrap();
    old["judges"][0]
        .as_object_mut()
        .unwrap()
        .remove("judge_settings");
    f.file(
        "prompt-tests/facts.calibration.result.json",
        &serde_json::to_string_pretty(&old).unwrap(),
    );
    let unknown = f.run(&["tea"]);
    let note = "note: the calibration result of calibration::facts was written before judge settings were recorded";
    assert_eq!(
        unknown.stderr().matches(note).count(),
        1,
        "{}",
        unknown.context()
    );
    assert!(answer(&unknown, "names_alice").get("advisory").is_none());
    let report = unknown.report.as_ref().unwrap();
    assert_eq!(report["calibration"]["unknown_settings"], json!(["facts"]));
    assert!(report["calibration"].get("judge_changed").is_none());
}

/// `[judge] advisory`, each word end to end on the case whose judge says an unmeasured "no": `"fail"`
/// (the default) fails the sample, marked advisory; `"warn"` passes it and every report shows the "no";
/// `"error"` errors it and still records its assertions.
#[test]
fn each_advisory_policy_decides_a_failing_advisory_verdict_its_own_way() {
    let fake = judge();
    let f = Fixture::calling("trust-policy", &fake, "record");
    f.file("prompt-tests/tea.evals.toml", SUITE);
    let config = std::fs::read_to_string(f.root.join("prompt-tester.toml")).unwrap();
    let with = |policy: &str| {
        config.replace(
            &format!("model = \"{JUDGE_MODEL}\"\n"),
            &format!("model = \"{JUDGE_MODEL}\"\nadvisory = \"{policy}\"\n"),
        )
    };
    let (markdown, html) = (
        f.root.join("out/summary.md"),
        f.root.join("out/report.html"),
    );
    let (markdown_arg, html_arg) = (markdown.display().to_string(), html.display().to_string());
    let args = [
        "tea::avoids_prices",
        "--markdown",
        &markdown_arg,
        "--html",
        &html_arg,
    ];
    let sample = |out: &Outcome| {
        child::entry(&out.suite("tea")["cases"], "case_id", "avoids_prices")["samples"][0].clone()
    };
    let unmeasured = "advisory: this judge is not measured on avoidance questions";

    // No word: "fail", as written.
    for written in [None, Some("fail")] {
        if let Some(word) = written {
            f.file("prompt-tester.toml", &with(word));
        }
        let failed = f.run(&args);
        failed.assert_code(101);
        failed.assert_statuses(&[("tea::avoids_prices", "FAILED")]);
        assert_eq!(sample(&failed)["status"], "failed", "{written:?}");
        let reason = failed.failure("tea", "avoids_prices");
        assert!(
            reason.contains(&format!("; {unmeasured}")) && !reason.contains("warning:"),
            "{reason}"
        );
        failed.assert_stderr_has(
            "warning: 1 failed sample(s) had an advisory judge verdict (its judge is not measured well \
             enough on that type of question): tea::avoids_prices; measure the judge on such questions with a \
             calibration set, or set [judge] advisory = \"warn\"",
        );
    }

    // "warn": the sample passes, and the "no" is in the summary and every report.
    f.file("prompt-tester.toml", &with("warn"));
    let warned = f.run(&args);
    warned.assert_code(0);
    warned.assert_statuses(&[("tea::avoids_prices", "ok")]);
    let passed = sample(&warned);
    assert_eq!(passed["status"], "passed", "{passed}");
    let no = &passed["judge"][0];
    assert_eq!(
        (&no["answer"], &no["passed"]),
        (&json!("no"), &json!(false))
    );
    assert_eq!(
        no["advisory"],
        json!({"reason": "unmeasured", "question_type": "avoidance"})
    );
    let note = &passed["assertions"][0];
    assert_eq!(note["passed"], true, "{note}");
    child::assert_contains(
        note["message"].as_str().unwrap_or_default(),
        &[
            "the judge to confirm \"Does it avoid prices?\"; saw \"no\"",
            unmeasured,
            "not counted ([judge] advisory = \"warn\")",
        ],
    );
    warned.assert_stderr_has(
        "warning: 1 sample(s) passed with an advisory judge \"no\" (its judge is not measured well enough on \
         that type of question): tea::avoids_prices; measure the judge",
    );
    let junit = warned.junit.as_deref().unwrap_or_default();
    child::assert_contains(
        junit,
        &[
            r#"<property name="advisory_noes_not_counted" value="1"/>"#,
            "<system-err>warning: the judge answered",
            "Does it avoid prices?",
        ],
    );
    child::assert_contains(
        &std::fs::read_to_string(&markdown).unwrap(),
        &[
            "| tea::avoids\\_prices | passed (1 \"no\" not counted) | 1/1 | this judge is not measured on avoidance questions |",
        ],
    );
    child::assert_contains(
        &std::fs::read_to_string(&html).unwrap(),
        &[
            r#""answer":"no","passed":false"#,
            r#""advisory":{"reason":"unmeasured","question_type":"avoidance"}"#,
            "not counted ([judge] advisory = ",
        ],
    );

    // "error": the sample errors, its assertion recorded.
    f.file("prompt-tester.toml", &with("error"));
    let errored = f.run(&args);
    errored.assert_code(101);
    child::assert_contains(
        &errored.stdout(),
        &["the judge is not measured on this kind of question ([judge] advisory = \"error\")"],
    );
    let sample = sample(&errored);
    assert_eq!(sample["status"], "errored", "{sample}");
    let assertions = sample["assertions"].as_array().cloned().unwrap_or_default();
    assert_eq!(assertions.len(), 1, "{sample}");
    assert_eq!(
        (&assertions[0]["kind"], &assertions[0]["passed"]),
        (&json!("judge"), &json!(false))
    );
    child::assert_contains(
        assertions[0]["message"].as_str().unwrap_or_default(),
        &[unmeasured],
    );

    // A passing advisory verdict passes under every policy.
    let alice = f.run(&["tea::names_alice"]);
    alice.assert_statuses(&[("tea::names_alice", "ok")]);
    // An unknown policy is refused, naming the file and the key.
    f.file("prompt-tester.toml", &with("ignore"));
    let refused = f.run(&["tea::names_alice"]);
    assert_ne!(refused.code(), Some(0));
    child::assert_contains(&refused.stderr(), &["prompt-tester.toml", "advisory"]);
}

/// `[judge] judge_samples = 3` with a judge that answers yes, no, yes in turn: each question is asked
/// three times, each call recorded under its own key, the majority decides, and the agreement (2/3) is
/// in the verdict; replayed, the same; `--estimate` counts the three calls.
#[test]
fn judge_samples_asks_k_times_and_the_majority_decides() {
    let fake = FakeProvider::builder()
        .respond_with({
            let judge = prompt_tester_testkit::judge_cycling(&["yes", "no", "yes"]);
            move |request| {
                if request.model().as_deref() == Some(JUDGE_MODEL) {
                    judge(request)
                } else {
                    Reply::answer(request, "Alice serves your tea.")
                }
            }
        })
        .start();
    let mut f = Fixture::calling("trust-samples", &fake, "record");
    let config = std::fs::read_to_string(f.root.join("prompt-tester.toml")).unwrap();
    f.file(
        "prompt-tester.toml",
        &config.replace(
            &format!("model = \"{JUDGE_MODEL}\"\n"),
            &format!("model = \"{JUDGE_MODEL}\"\njudge_samples = 3\n"),
        ),
    );
    f.file(
        "prompt-tests/tea.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"names_alice\"\nassert = [{ judge = \"Is Alice mentioned?\" }]\n\
         [[cases]]\nname = \"once\"\njudge_samples = 1\nassert = [{ judge = \"Is it tea?\" }]\n",
    );
    let out = f.run(&["tea::names_alice"]);
    out.assert_statuses(&[("tea::names_alice", "ok")]);
    let answer = answer(&out, "names_alice");
    assert_eq!(answer["answer"], "yes", "{answer}");
    assert_eq!(answer["votes"], json!({"agreeing": 2, "asked": 3}));
    // At the judge's default temperature, 0, the answers of a real judge would agree: said.
    out.assert_stderr_has("[judge] judge_samples = 3 asks each question 3 times at temperature 0");
    let judged = |fake: &FakeProvider| {
        fake.requests()
            .iter()
            .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
            .count()
    };
    assert_eq!(judged(&fake), 3);
    // Three judge recordings, each under its own key.
    let cassette: Value = serde_json::from_str(
        &std::fs::read_to_string(f.root.join("prompt-tests/cassettes/tea.cassette.json")).unwrap(),
    )
    .unwrap();
    let keys: std::collections::BTreeSet<&str> = cassette["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["model"] == JUDGE_MODEL)
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 3, "{cassette}");

    // A case's own `judge_samples = 1` asks once (the fourth answer of the cycle: yes), without votes.
    let once = f.run(&["tea::once"]);
    once.assert_statuses(&[("tea::once", "ok")]);
    assert_eq!(judged(&fake), 4);
    assert!(super::trust::answer(&once, "once").get("votes").is_none());

    // Replayed: no call, the same verdict and votes.
    f.mode = "replay";
    let again = f.run(&["tea::names_alice"]);
    again.assert_statuses(&[("tea::names_alice", "ok")]);
    assert_eq!(
        super::trust::answer(&again, "names_alice")["votes"],
        json!({"agreeing": 2, "asked": 3})
    );
    assert_eq!(judged(&fake), 4);
    // The estimate counts the three judge calls.
    let estimate = f.run(&["tea::names_alice", "--estimate"]);
    let json = &estimate.report.as_ref().expect("the estimate as JSON")["estimate"];
    assert_eq!(json["judge"]["calls"], 3.0, "{json}");
}

#[test]
fn an_even_judge_samples_is_refused_at_its_line() {
    let out = run_with_file(
        "trust-even",
        "tea.evals.toml",
        "prompt = \"Serve tea\"\njudge_samples = 2\n[[cases]]\nname = \"polite\"\nassert = [{ judge = \"Is it polite?\" }]\n",
    );
    out.assert_code(101);
    child::assert_contains(
        &out.stdout(),
        &[
            "prompt-tests/tea.evals.toml:2:17: `judge_samples`: is 2, an even number: the answers could split evenly",
            "write an odd number, e.g. `judge_samples = 3`",
        ],
    );
}
