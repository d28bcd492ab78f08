//! Unit tests of suite parsing and scoring (the harness-level ones are in tests/suites/).

use std::path::Path;

use super::assert::{Check, check_sync, evaluate, similar_verdict};
use super::parse::{Suite, parse, report};
use crate::checks::SampleStatus;
use crate::outcome::SampleOutcome;
use crate::run::PromptRun;
use crate::test_support::{Scratch, answered, assert_contains, scope};

const FILE: &str = "prompt-tests/s.evals.toml";

fn parsed(text: &str, dir: &Path) -> Result<Suite, String> {
    parse("s", FILE, dir, text).map_err(|p| report(FILE, text, &p))
}

fn problems(text: &str) -> String {
    parsed(text, Path::new("/nonexistent")).expect_err("the suite has problems")
}

fn run(output: &str) -> PromptRun {
    answered(&scope("s::a", "s"), "p", output, None)
}

#[test]
fn settings_cascade_and_suite_assertions_come_first() {
    let dir = Scratch::new("suite-unit");
    dir.file("reply.md", "Reply to {message}");
    let suite = parsed(
        r#"
prompt = "reply.md"
provider = "anthropic"
model = "claude-haiku-4-5"
max_tokens = 100
runs = 3
pass_threshold = 0.6
assert = [{ max_words = 50 }]

[[cases]]
name = "a"
category = "billing"
inputs = { message = "hi", extra = 2 }
model = "other"
runs = 1
threshold = 0.5
assert = [{ contains = "x", weight = 2.5 }]

[[cases]]
name = "later"
skip = "not yet"
"#,
        dir.path(),
    )
    .unwrap();
    assert_eq!(suite.prompt, "Reply to {message}");
    assert_eq!(suite.info.prompt_id, "reply", "the prompt file's stem");
    let a = &suite.cases[0];
    assert_eq!(
        a.settings.request.call.provider.as_deref(),
        Some("anthropic")
    );
    assert_eq!(a.settings.request.call.model.as_deref(), Some("other"));
    assert_eq!(
        (
            a.settings.request.call.max_tokens,
            a.settings.sampling.runs,
            a.settings.sampling.pass_threshold
        ),
        (Some(100), Some(1), Some(0.6))
    );
    assert_eq!(a.settings.min_score, Some(0.5));
    let kinds: Vec<&str> = a.asserts.iter().map(|x| x.check.kind()).collect();
    assert_eq!(kinds, ["max_words", "contains"]);
    assert_eq!(a.asserts[1].weight, 2.5);
    assert_eq!(a.asserts[1].at, format!("{FILE}:17"));
    assert_eq!(
        a.inputs,
        [
            ("extra".to_string(), "2".to_string()),
            ("message".to_string(), "hi".to_string())
        ]
    );
    assert_eq!(a.unused_inputs, ["extra"]);
    // A skipped case may lack inputs for its placeholders.
    assert_eq!(suite.cases[1].skip.as_deref(), Some("not yet"));
}

#[test]
fn every_problem_is_located_with_its_key_and_fix() {
    let text = "prompt = \"Say {x}\"\nthreshold = 1.5\n\n[[cases]]\nname = \"a\"\ninputs = { x = [1] }\n\
                assert = [{ contains = \"a\", equals = \"b\" }, { contains = \"c\", weight = -1 }, \"oops\"]\n\
                skip = 3\n\n[[cases]]\nname = \"a\"\ninputs = { x = \"1\" }\n";
    let report = problems(text);
    assert_contains(
        &report,
        &[
            "prompt-tests/s.evals.toml has 6 problems; no case of this suite ran:",
            "prompt-tests/s.evals.toml:2:13: `threshold`: 1.5 is out of range",
            "fix: use a score from 0 to 1",
            "prompt-tests/s.evals.toml:6:16: `cases[0].inputs.x`: expected a string, found an array",
            "prompt-tests/s.evals.toml:7:29: `cases[0].assert[0]`: one table holds several assertions (contains, equals)",
            "prompt-tests/s.evals.toml:7:72: `cases[0].assert[1].weight`: -1 is out of range",
            "prompt-tests/s.evals.toml:7:78: `cases[0].assert[2]`: expected an assertion table, found a string",
            "prompt-tests/s.evals.toml:8:8: `cases[0].skip`: expected the reason as a string, found an integer",
        ],
    );
    let asert = "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nasert = []\n";
    // One file each: its text, and what its report says.
    for (text, expected) in [
        // The first case has problems, so the duplicate name is not reported against it.
        (
            "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\n[[cases]]\nname = \"a\"\n",
            ":5:8: `cases[1].name`: a case named `a` already exists in this suite",
        ),
        ("prompt = \"Hi\"\n", ":1:1: `cases`: the suite has no cases"),
        (
            "[[cases]]\nname = \"a\"\n",
            ":1:1: `prompt`: the suite has no `prompt`",
        ),
        (
            "prompt = \"Hi\"\n[[cases]]\ncategory = \"x\"\n",
            ":2:1: `cases[0].name`: the case has no name",
        ),
        (
            "prompt = \"Hi\"\n[[cases]]\nname = \"a::b\"\n",
            "\"a::b\" is not a usable case name",
        ),
        (asert, ":4:1: `cases[0].asert`: unknown key `asert`\n"),
        (asert, "fix: did you mean `assert`?"),
        (
            "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ json_schema = \"none.json\" }]\n",
            if cfg!(feature = "json-schema") {
                ":4:27: `cases[0].assert[0].json_schema`: schema file `none.json` not found"
            } else {
                ":4:27: `cases[0].assert[0].json_schema`: the `json_schema` assertion needs the \
                 `json-schema` feature of prompt-tester"
            },
        ),
        // The source line is quoted with a caret under the column.
        (
            "prompt = \"Hi\"\nruns = 0\n[[cases]]\nname = \"a\"\n",
            "2 | runs = 0\n  |        ^\n  fix: use a whole number from 1 to 10000",
        ),
    ] {
        let report = problems(text);
        assert!(report.contains(expected), "{expected:?} not in\n{report}");
    }
}

#[test]
fn not_contains_shows_where_the_text_was_found() {
    let output = format!("{} forbidden {}", "a".repeat(60), "b".repeat(60));
    let verdict = check_sync(&Check::NotContains(vec!["forbidden".into()]), &run(&output));
    let detail = verdict.detail.unwrap();
    assert!(!verdict.passed);
    assert!(
        detail.contains("\"forbidden\" at character 62: \"…aaaa"),
        "{detail}"
    );
    assert!(detail.contains("forbidden bbbb"), "{detail}");
    assert!(detail.ends_with("b…\""), "{detail}");
}

#[test]
fn max_cost_passes_and_says_so_when_the_price_is_unknown() {
    let verdict = check_sync(&Check::MaxCost(0.0), &run("x"));
    assert!(verdict.passed);
    assert!(
        verdict
            .detail
            .unwrap()
            .contains("the price of m is unknown")
    );
}

fn assertion(check: Check, weight: f64) -> super::assert::Assertion {
    super::assert::Assertion {
        check,
        weight,
        turn: None,
        at: format!("{FILE}:1"),
    }
}

#[test]
fn the_score_weighs_passing_assertions() {
    let asserts = [
        assertion(Check::Contains(vec!["yes".into()]), 1.0),
        assertion(Check::MaxWords(1), 3.0),
        assertion(Check::StartsWith("no".into()), 1.0),
    ];
    let engine = crate::engine::Engine::for_unit_tests();
    // "yes" passes contains and max_words (4 of 5), fails starts_with.
    assert_eq!(
        engine.block_on(evaluate(&asserts, Some(0.8), &run("yes"))),
        SampleOutcome::PASSED
    );
    let failed = |outcome: SampleOutcome| match (outcome.status(), outcome.message()) {
        (SampleStatus::Failed, Some(message)) => message.to_string(),
        _ => panic!("a failure expected, got {outcome:?}"),
    };
    let err = failed(engine.block_on(evaluate(&asserts, Some(0.9), &run("yes"))));
    assert!(
        err.starts_with("score 0.80 is below the score threshold 0.9"),
        "{err}"
    );
    let err = failed(engine.block_on(evaluate(&asserts, None, &run("yes"))));
    assert!(
        err.starts_with("1 of 3 assertions failed:\n- prompt-tests/s.evals.toml:1: starts_with"),
        "{err}"
    );
    // No assertions: the score is 1.
    assert_eq!(
        engine.block_on(evaluate(&[], Some(1.0), &run("x"))),
        SampleOutcome::PASSED
    );
}

/// A run whose sample made one model call per tool call, each requesting it.
pub(super) fn run_with_calls(calls: &[(&str, serde_json::Value)]) -> PromptRun {
    use crate::trajectory::NotedCall;
    let mut run = run("");
    run.tool_calls = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| crate::completion::ToolCall {
            id: format!("call_{i}"),
            name: name.to_string(),
            arguments: arguments.clone(),
            thought_signature: None,
        })
        .collect();
    for (i, call) in run.tool_calls.iter().enumerate() {
        let mut result = crate::completion::CompletionResult::new("", 5, 7);
        result.tool_calls = vec![call.clone()];
        let request = crate::completion::CompletionRequest {
            messages: (0..=i)
                .map(|n| crate::completion::Message::user(n.to_string()))
                .collect(),
            ..crate::completion::CompletionRequest::new("m", "p", 10)
        };
        let noted = NotedCall::of_request("fake", &request, &result, Default::default(), true);
        run.scope.state().note_model_call(noted);
    }
    run
}

#[test]
fn tools_are_declared_and_tool_calls_asserted() {
    let suite = parsed(
        r#"
prompt = "Weather in {city}?"
tools = [{ name = "get_weather", description = "The weather in a city", input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] } }]
assert = [{ not_tool_called = ["delete_account", "send_email"] }]

[[cases]]
name = "paris"
inputs = { city = "Paris" }
assert = [{ tool_called = { name = "get_weather", arguments = { city = "Paris" } } }]

[[cases]]
name = "any"
inputs = { city = "Oslo" }
tools = [{ name = "search" }]
assert = [{ tool_called = "search" }]
"#,
        Path::new("/nonexistent"),
    )
    .unwrap();
    let paris = &suite.cases[0];
    let tools = paris.settings.request.tools.as_ref().unwrap();
    assert_eq!(
        (tools[0].name.as_str(), tools[0].description.as_str()),
        ("get_weather", "The weather in a city")
    );
    assert_eq!(
        tools[0].input_schema["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(
        tools[0].input_schema["required"],
        serde_json::json!(["city"])
    );
    // A case's tools replace the suite's; a tool without a schema takes no arguments.
    let any = suite.cases[1].settings.request.tools.as_ref().unwrap();
    assert_eq!(any[0].name, "search");
    assert_eq!(
        any[0].input_schema,
        serde_json::json!({"type": "object", "properties": {}})
    );

    let (not_called, called) = (&paris.asserts[0].check, &paris.asserts[1].check);
    assert_eq!(
        (not_called.kind(), called.kind()),
        ("not_tool_called", "tool_called")
    );
    let good = run_with_calls(&[(
        "get_weather",
        serde_json::json!({"city": "Paris", "units": "metric"}),
    )]);
    assert!(check_sync(called, &good).passed);
    assert!(check_sync(not_called, &good).passed);

    let wrong = run_with_calls(&[
        ("search", serde_json::json!({"q": "Paris"})),
        ("get_weather", serde_json::json!({"city": "London"})),
    ]);
    let detail = check_sync(called, &wrong).detail.unwrap();
    assert_eq!(
        detail,
        "tool_called: the model requested `get_weather` with arguments containing {\"city\":\"Paris\"} 0 \
         time(s), expected at least 1 ($.city is \"London\", expected \"Paris\")\n\
         the sample's trajectory:\n  \
         1. fake/m requested search({\"q\":\"Paris\"})\n  \
         2. fake/m requested get_weather({\"city\":\"London\"})"
    );
    let none = run_with_calls(&[]);
    let detail = check_sync(called, &none).detail.unwrap();
    assert!(
        detail.ends_with("the sample's trajectory:\n  (no model call)"),
        "{detail}"
    );
    let bad = run_with_calls(&[("send_email", serde_json::json!({"to": "x"}))]);
    let detail = check_sync(not_called, &bad).detail.unwrap();
    assert_eq!(
        detail,
        "not_tool_called: the model requested `send_email` 1 time(s), expected never\n\
         the sample's trajectory:\n  1. fake/m requested send_email({\"to\":\"x\"})"
    );
    assert!(
        check_sync(&suite.cases[1].asserts[1].check, &bad)
            .detail
            .is_some()
    );
}

#[test]
fn tool_mistakes_are_located() {
    let report = problems(
        "prompt = \"Hi\"\ntools = [{ nme = \"x\" }, { name = 3 }, \"get_weather\"]\n[[cases]]\nname = \"a\"\n\
         assert = [{ tool_called = { name = \"x\", args = {} } }, { tool_called = 3 }, { not_tool_called = [] }]\n",
    );
    assert_contains(
        &report,
        &[
            ":2:12: `tools[0].nme`: unknown key `nme`",
            "fix: did you mean `name`?",
            ":2:10: `tools[0].name`: the tool has no name",
            ":2:34: `tools[1].name`: expected a string, found an integer",
            ":2:39: `tools[2]`: expected a tool table, found a string",
            "5:41: `cases[0].assert[0].tool_called.args`: unknown key `args`",
            "fix: the keys are `name`, `arguments`, `min` and `max`",
            "`cases[0].assert[1].tool_called`: expected a tool name or a table, found an integer",
            "`cases[0].assert[2].not_tool_called`: the list is empty",
        ],
    );
}

#[test]
fn similar_reads_its_reference_and_required_threshold() {
    let suite = parsed(
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ similar = \"Paris\", threshold = 0.8, weight = 2 }]\n",
        Path::new("/nonexistent"),
    )
    .unwrap();
    let a = &suite.cases[0].asserts[0];
    match &a.check {
        Check::Similar {
            reference,
            threshold,
        } => assert_eq!((reference.as_str(), threshold), ("Paris", &0.8)),
        other => panic!("{other:?}"),
    }
    assert_eq!(a.weight, 2.0);
    for (assert, expected) in [
        (
            "[{ similar = \"Paris\" }]",
            ":4:11: `cases[0].assert[0]`: `similar` has no `threshold`",
        ),
        (
            "[{ similar = \"Paris\", threshold = 1.5 }]",
            ":4:44: `cases[0].assert[0].threshold`: 1.5 is out of range",
        ),
        (
            "[{ similar = \" \", threshold = 0.5 }]",
            ":4:23: `cases[0].assert[0].similar`: the reference text is empty",
        ),
        (
            "[{ contains = \"a\", threshold = 0.5 }]",
            ":4:41: `cases[0].assert[0].threshold`: `threshold` belongs to `similar`, not to `contains`",
        ),
        (
            "[{ similar = 3, threshold = 0.5 }]",
            "`cases[0].assert[0].similar`: expected a string, found an integer",
        ),
    ] {
        let report = problems(&format!(
            "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = {assert}\n"
        ));
        assert!(report.contains(expected), "{expected:?} not in\n{report}");
    }
}

#[test]
fn a_failing_similar_shows_score_threshold_and_both_texts() {
    assert!(similar_verdict(0.8, 0.8, "a", "b").passed);
    let long = format!("The answer is Paris. {}", "x".repeat(300));
    let verdict = similar_verdict(0.6234, 0.8, "Paris is the capital of France.", &long);
    assert!(!verdict.passed);
    let detail = verdict.detail.unwrap();
    assert!(
        detail.starts_with(
            "similar: expected a cosine similarity of at least 0.8 to the reference \"Paris is the capital of France.\"; \
             saw 0.623 for the output \"The answer is Paris. xxx"
        ),
        "{detail}"
    );
    // Both texts are shortened.
    assert!(detail.chars().count() < 300, "{detail}");
}

#[test]
fn similar_is_not_compared_when_the_case_fails_anyway() {
    let asserts = [
        assertion(Check::Contains(vec!["absent".into()]), 1.0),
        assertion(
            Check::Similar {
                reference: "r".into(),
                threshold: 0.5,
            },
            1.0,
        ),
    ];
    // Comparing would call the embeddings server of this crate's [embeddings] (none listens during unit
    // tests) and error the sample instead of failing it.
    let outcome =
        crate::engine::Engine::for_unit_tests().block_on(evaluate(&asserts, None, &run("yes")));
    let (SampleStatus::Failed, Some(message)) = (outcome.status(), outcome.message()) else {
        panic!("a failure expected, got {outcome:?}");
    };
    assert!(message.starts_with("2 of 2 assertions failed"), "{message}");
    assert!(
        message.contains("similar: not compared, the case fails anyway"),
        "{message}"
    );
}

#[test]
fn expected_and_inputs_fill_assertion_values_per_case() {
    let suite = parsed(
        r#"
prompt = "Capital of {country}?"
assert = [{ equals = "{expected}" }, { regex = '^{expected}\.?$' }, { contains = "{unknown} {}" }]

[[cases]]
name = "a"
expected = "St. Louis (MO)"
inputs = { country = "France", city = "Paris" }
assert = [{ judge = "It names {city}, the capital of {country}." }]
"#,
        Path::new("/nonexistent"),
    )
    .unwrap();
    let case = &suite.cases[0];
    let checks: Vec<String> = case
        .asserts
        .iter()
        .map(|a| match &a.check {
            Check::Equals(s) | Check::Judge(s) => s.clone(),
            Check::Contains(v) => v.join("|"),
            Check::Regex(r) => r[0].as_str().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        checks,
        [
            "St. Louis (MO)",
            r"^St\. Louis \(MO\)\.?$",
            "{unknown} {}",
            "It names Paris, the capital of France."
        ]
    );
    // Where each is written, as without placeholders.
    let at: Vec<&str> = case.asserts.iter().map(|a| a.at.as_str()).collect();
    assert_eq!(
        at,
        [
            format!("{FILE}:3"),
            format!("{FILE}:3"),
            format!("{FILE}:3"),
            format!("{FILE}:9")
        ]
    );
    // `city` is used by an assertion: not an unused input.
    assert!(case.unused_inputs.is_empty(), "{:?}", case.unused_inputs);
    assert!(check_sync(&case.asserts[1].check, &run("St. Louis (MO).")).passed);
}

#[test]
fn a_placeholder_assertion_is_checked_in_the_suite_and_per_case() {
    // A kind typo in an assertion with placeholders is the suite file's problem, located as usual.
    let report = problems(
        "prompt = \"Hi {x}\"\nassert = [{ containz = \"{expected}\" }]\n[[cases]]\nname = \"a\"\nexpected = \"b\"\ninputs = { x = \"1\" }\n",
    );
    assert!(
        report.contains(
            "prompt-tests/s.evals.toml:2:11: `assert[0].containz`: unknown assertion `containz`"
        ),
        "{report}"
    );
    // {expected} in a case that sets none.
    let report = problems(
        "prompt = \"Hi\"\nassert = [{ equals = \"{expected}\" }]\n[[cases]]\nname = \"a\"\n",
    );
    assert!(
        report.contains(
            "prompt-tests/s.evals.toml:4:8: `cases[0]`: `assert[0]`: the assertion at prompt-tests/s.evals.toml:2 uses \
             {expected}, but the case has no `expected` value"
        ),
        "{report}"
    );
    assert!(
        report.contains("fix: give the case `expected = \"...\"`"),
        "{report}"
    );
}

/// A suite with `cases_file` in a directory of its own: the suite, then each row's case or message.
fn rows_of(
    name: &str,
    suite: &str,
    file: &str,
    data: &str,
) -> Vec<Result<super::parse::Case, super::InvalidRow>> {
    let dir = Scratch::new(&format!("rows-{name}"));
    dir.file(file, data);
    let suite = parsed(suite, dir.path()).unwrap();
    let rows = suite.rows.as_ref().expect("the suite has rows");
    rows.dataset.rows.iter().map(|row| rows.case(row)).collect()
}

#[test]
fn a_row_with_problems_is_its_own_failure_located_by_line() {
    let suite =
        "prompt = \"Q {q}\"\ncases_file = \"d.jsonl\"\nassert = [{ equals = \"{expected}\" }]\n";
    let data = "{\"id\": \"ok\", \"q\": \"1\", \"expected\": \"a\", \"assert\": [{\"contains\": \"{q}\"}]}\n\
                {\"id\": \"obj\", \"q\": {\"x\": 1}, \"expected\": \"a\"}\n\
                {\"id\": \"bad_assert\", \"q\": \"1\", \"expected\": \"a\", \"assert\": \"contains\"}\n\
                {\"id\": \"null\", \"q\": \"1\", \"expected\": \"a\", \"assert\": [{\"contains\": null}]}\n\
                {\"id\": \"no_expected\", \"q\": \"1\"}\n\
                {\"id\": \"both\", \"name\": \"x\", \"q\": \"1\"}\n\
                {\"id\": \"weight\", \"q\": \"1\", \"expected\": \"a\", \"assert\": [{\"max_words\": 3, \"weight\": -1}]}\n";
    let rows = rows_of("problems", suite, "d.jsonl", data);
    let ok = rows[0].as_ref().unwrap();
    let kinds: Vec<String> = ok
        .asserts
        .iter()
        .map(|a| format!("{:?}@{}", a.check, a.at))
        .collect();
    assert_eq!(
        kinds,
        [
            format!("equals@{FILE}:3"),
            "contains@prompt-tests/d.jsonl:1".to_string()
        ]
    );
    assert!(check_sync(&ok.asserts[1].check, &run("Q1 1")).passed);
    let error = rows[1].as_ref().expect_err("a problem");
    assert_eq!((error.line, error.problems.len()), (2, 1), "{error:?}");
    assert_eq!(error.problems[0].place, "`q`");
    let message = |i: usize| rows[i].as_ref().expect_err("a problem").to_string();
    for (i, expected) in [
        (
            1,
            "prompt-tests/d.jsonl:2: `q`: expected a string, found an object\n  fix: write the value as text",
        ),
        (
            2,
            "prompt-tests/d.jsonl:3: `assert`: expected an array of assertions, found a string",
        ),
        (
            3,
            "prompt-tests/d.jsonl:4: `assert[0].contains`: null is not a value an assertion takes",
        ),
        (
            4,
            "prompt-tests/d.jsonl:5: `assert[0]`: the assertion at prompt-tests/s.evals.toml:3 uses {expected}, but \
             the case has no `expected` value",
        ),
        (
            5,
            "row `line_6` of prompt-tests/d.jsonl (line 6) has 1 problem; it did not run:\nprompt-tests/d.jsonl:6: `id`: the row has both `name` and `id`",
        ),
        (
            6,
            "prompt-tests/d.jsonl:7: `assert[0].weight`: -1 is out of range",
        ),
    ] {
        assert!(
            message(i).contains(expected),
            "{expected:?} not in\n{}",
            message(i)
        );
    }
}

#[test]
fn a_scored_case_whose_assertions_all_weigh_0_is_a_located_error() {
    let zero = "[{ contains = \"a\", weight = 0 }, { max_words = 9, weight = 0.0 }]";
    let own =
        format!("prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nthreshold = 0.5\nassert = {zero}\n");
    let report = problems(&own);
    assert_contains(
        &report,
        &[
            "prompt-tests/s.evals.toml:4:13: `cases[0].threshold`: every assertion weighs 0, so the score is always 1 \
             and the case passes `threshold = 0.5` whatever the output",
            "fix: give the assertions that count a weight above 0 (1 by default), or remove `threshold`",
        ],
    );
    // The suite's threshold: the case's assertions are named.
    let report = problems(&format!(
        "prompt = \"Hi\"\nthreshold = 0.5\n[[cases]]\nname = \"a\"\nassert = {zero}\n"
    ));
    assert!(
        report.contains(
            "prompt-tests/s.evals.toml:5:10: `cases[0].assert`: every assertion weighs 0"
        ),
        "{report}"
    );
    let fine = |extra: &str, assert: &str| {
        let text = format!("prompt = \"Hi\"\n{extra}[[cases]]\nname = \"a\"\nassert = {assert}\n");
        parsed(&text, Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"));
    };
    fine(
        "threshold = 0.5\n",
        "[{ contains = \"a\", weight = 0 }, { max_words = 9 }]",
    );
    fine("", zero);
    fine("threshold = 0\n", zero);
    // A dataset row too.
    let suite = "prompt = \"Q {q}\"\ncases_file = \"d.jsonl\"\nthreshold = 0.8\nassert = [{ contains = \"Q\", weight = 0 }]\n";
    let data = "{\"id\": \"zero\", \"q\": \"1\"}\n{\"id\": \"one\", \"q\": \"1\", \"assert\": [{\"contains\": \"1\"}]}\n";
    let rows = rows_of("unweighted", suite, "d.jsonl", data);
    let message = rows[0].as_ref().expect_err("a problem").to_string();
    assert!(
        message.contains("prompt-tests/d.jsonl:1: `assert`: every assertion weighs 0"),
        "{message}"
    );
    assert!(rows[1].is_ok());
}

#[test]
fn a_dataset_without_rows_or_a_name_column_is_the_suites_problem() {
    let dir = Scratch::new("rows-empty");
    dir.file("d.jsonl", "{\"dataset_version\": \"1\"}\n\n");
    let report = parsed("prompt = \"Hi\"\ncases_file = \"d.jsonl\"\n", dir.path()).unwrap_err();
    assert!(
        report.contains(
            "prompt-tests/s.evals.toml:2:14: `cases_file`: prompt-tests/d.jsonl has no rows"
        ),
        "{report}"
    );
    // Beside inline cases, an empty file is fine.
    let suite = parsed(
        "prompt = \"Hi\"\ncases_file = \"d.jsonl\"\n[[cases]]\nname = \"a\"\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(suite.info.dataset_version.as_deref(), Some("1"));
}
