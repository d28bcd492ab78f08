//! Unit tests of the suite assertions on a sample's trajectory (`tool_called` with `min`/`max`,
//! `tool_sequence`, `max_model_calls`, `max_repeats`, `judge_trajectory`): reading, each bad form
//! located, and checking with the trajectory printed.

use std::path::Path;

use serde_json::json;

use super::assert::{Check, check_sync, evaluate};
use super::parse::{Suite, parse, report};
use super::tests::run_with_calls;
use crate::checks::SampleStatus;
use crate::test_support::assert_contains;

const FILE: &str = "prompt-tests/s.evals.toml";

fn parsed(text: &str) -> Result<Suite, String> {
    parse("s", FILE, Path::new("/nonexistent"), text).map_err(|p| report(FILE, text, &p))
}

/// The checks of a one-case suite whose case asserts `assert`.
fn checks(assert: &str) -> Vec<Check> {
    let text = format!(
        "prompt = \"Hi\"\ntools = [{{ name = \"search\" }}]\n[[cases]]\nname = \"a\"\nassert = {assert}\n"
    );
    let suite = parsed(&text).unwrap_or_else(|report| panic!("{report}"));
    suite.cases[0]
        .asserts
        .iter()
        .map(|a| a.check.clone())
        .collect()
}

/// The problems of a one-case suite whose case asserts `assert` (on line 4).
fn problems(assert: &str) -> String {
    let text = format!("prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = {assert}\n");
    parsed(&text).expect_err("the suite has problems")
}

#[test]
fn each_trajectory_assertion_is_read_with_its_defaults() {
    let read = checks(
        r#"[
  { tool_called = { name = "search", arguments = { q = "a" }, min = 2, max = 3 } },
  { tool_called = { name = "search", max = 1 } },
  { tool_called = { name = "search", min = 0, max = 2 } },
  { tool_sequence = { tools = ["search", "reply"] } },
  { tool_sequence = { tools = ["search"], order = "exact" } },
  { tool_sequence = { tools = ["search"], order = "unordered" } },
  { tool_sequence = { tools = "search", order = "superset" } },
  { max_model_calls = 4 },
  { max_repeats = 2 },
  { judge_trajectory = "The agent searched before replying." },
]"#,
    );
    let shown: Vec<String> = read
        .iter()
        .map(|c| match c {
            Check::ToolCalled {
                name,
                arguments,
                min,
                max,
            } => format!("{name} {arguments:?} {min} {max:?}"),
            Check::ToolSequence { tools, order } => format!("{tools:?} {order:?}"),
            Check::MaxModelCalls(n) | Check::MaxRepeats(n) => format!("{} {n}", c.kind()),
            Check::JudgeTrajectory(q) => q.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shown,
        [
            r#"search Some(Object {"q": String("a")}) 2 Some(3)"#,
            "search None 1 Some(1)",
            "search None 0 Some(2)",
            r#"["search", "reply"] InOrder"#,
            r#"["search"] Exact"#,
            r#"["search"] Unordered"#,
            r#"["search"] Superset"#,
            "max_model_calls 4",
            "max_repeats 2",
            "The agent searched before replying.",
        ]
    );
    // The judge on the trajectory is a judge call, as `judge` is (the estimate, judge_samples).
    assert_eq!(read[9].call(), Some(crate::role::CallRole::Judge));
    assert_eq!(read[7].call(), None);
}

#[test]
fn each_bad_form_names_its_line_key_and_fix() {
    for (assert, expected) in [
        (
            r#"[{ tool_called = { name = "x", max = 0 } }]"#,
            &[
                "4:47: `cases[0].assert[0].tool_called.max`: `max = 0` asks for no call",
                "fix: write `not_tool_called = \"x\"` instead",
            ][..],
        ),
        (
            r#"[{ tool_called = { name = "x", min = 3, max = 1 } }]"#,
            &[
                "4:47: `cases[0].assert[0].tool_called.min`: `min = 3` is above `max = 1`: no count passes",
                "fix: make `min` at most `max`",
            ],
        ),
        (
            r#"[{ tool_called = { name = "x", min = 0 } }]"#,
            &[
                "`cases[0].assert[0].tool_called.min`: `min = 0` without `max` passes whatever the model does",
            ],
        ),
        (
            r#"[{ tool_called = { name = "x", min = -1 } }]"#,
            &["`cases[0].assert[0].tool_called.min`: -1 is out of range"],
        ),
        (
            r#"[{ tool_called = { name = "x", most = 2 } }]"#,
            &[
                "`cases[0].assert[0].tool_called.most`: unknown key `most`",
                "fix: the keys are `name`, `arguments`, `min` and `max`",
            ],
        ),
        (
            r#"[{ tool_sequence = { tools = ["a"], order = "sorted" } }]"#,
            &[
                "4:54: `cases[0].assert[0].tool_sequence.order`: unknown order \"sorted\"",
                "fix: use `in_order` (these tools in this order, others allowed between), `exact` (exactly \
                 these, in this order), `unordered` (exactly these, in any order) or `superset` (each of \
                 these, in any order, others allowed)",
            ],
        ),
        (
            r#"[{ tool_sequence = { tool = ["a"] } }]"#,
            &[
                "`cases[0].assert[0].tool_sequence.tool`: unknown key `tool`",
                "fix: the keys are `tools` and `order`",
            ],
        ),
        (
            r#"[{ tool_sequence = { order = "exact" } }]"#,
            &["`cases[0].assert[0].tool_sequence`: the sequence names no tools"],
        ),
        (
            r#"[{ tool_sequence = { tools = [] } }]"#,
            &["`cases[0].assert[0].tool_sequence.tools`: the list is empty"],
        ),
        (
            r#"[{ tool_sequence = ["a", "b"] }]"#,
            &[
                "`cases[0].assert[0].tool_sequence`: expected a table, found an array",
                "fix: write `tool_sequence = { tools = [\"search\", \"reply\"], order = \"in_order\" }`",
            ],
        ),
        (
            "[{ max_model_calls = 0 }]",
            &["`cases[0].assert[0].max_model_calls`: 0 is out of range"],
        ),
        (
            r#"[{ max_repeats = "two" }]"#,
            &["`cases[0].assert[0].max_repeats`: expected a whole number, found a string"],
        ),
        (
            r#"[{ judge_trajectory = " " }]"#,
            &[
                "`cases[0].assert[0].judge_trajectory`: the requirement is empty",
                "fix: write what the judge must confirm: `judge_trajectory = \"The agent looked the order up \
                 before answering.\"`",
            ],
        ),
        (
            r#"[{ max_repeats = 1, turn = 1 }]"#,
            &[
                "`cases[0].assert[0].turn`: `max_repeats` reads the sample's whole trajectory (every turn's \
                 model calls), not one turn's reply",
                "fix: remove `turn` from this assertion",
            ],
        ),
    ] {
        assert_contains(&problems(assert), expected);
    }
}

#[test]
fn the_counts_pass_and_fail_printing_the_trajectory() {
    let run = run_with_calls(&[
        ("search", json!({"q": "a"})),
        ("search", json!({"q": "a"})),
        ("lookup", json!({"id": 42})),
        ("search", json!({"q": "b"})),
    ]);
    let trajectory = "the sample's trajectory:\n  \
                      1. fake/m requested search({\"q\":\"a\"})\n  \
                      2. fake/m requested search({\"q\":\"a\"})\n  \
                      3. fake/m requested lookup({\"id\":42})\n  \
                      4. fake/m requested search({\"q\":\"b\"})";
    let read = checks(
        r#"[
  { tool_called = { name = "search", arguments = { q = "a" }, min = 2, max = 2 } },
  { tool_called = { name = "search", max = 2 } },
  { tool_called = { name = "search", arguments = { q = "b" }, min = 2 } },
  { tool_sequence = { tools = ["search", "lookup"] } },
  { tool_sequence = { tools = ["lookup", "search", "search", "search"], order = "unordered" } },
  { tool_sequence = { tools = ["lookup", "search"], order = "exact" } },
  { tool_sequence = { tools = ["lookup", "lookup"], order = "superset" } },
  { max_model_calls = 4 },
  { max_model_calls = 3 },
  { max_repeats = 2 },
  { max_repeats = 1 },
]"#,
    );
    let verdicts: Vec<Option<String>> = read
        .iter()
        .map(|c| {
            let v = check_sync(c, &run);
            assert_eq!(v.passed, v.detail.is_none(), "{v:?}");
            v.detail
        })
        .collect();
    let failed = |detail: &Option<String>, what: &str| {
        let detail = detail.as_deref().expect("a failure");
        assert_eq!(detail, format!("{what}\n{trajectory}"));
    };
    assert_eq!(verdicts[0], None);
    failed(
        &verdicts[1],
        "tool_called: the model requested `search` 3 time(s), expected from 1 to 2",
    );
    failed(
        &verdicts[2],
        "tool_called: the model requested `search` with arguments containing {\"q\":\"b\"} 1 time(s), \
         expected at least 2 ($.q is \"a\", expected \"b\"; $.q is \"a\", expected \"b\")",
    );
    assert_eq!((&verdicts[3], &verdicts[4]), (&None, &None));
    failed(
        &verdicts[5],
        "tool_sequence: expected the tools [lookup, search] exactly, in this order; the model requested \
         [search, search, lookup, search]",
    );
    failed(
        &verdicts[6],
        "tool_sequence: expected the tools [lookup, lookup] each, in any order (others allowed); the model \
         requested [search, search, lookup, search]",
    );
    assert_eq!(verdicts[7], None);
    failed(
        &verdicts[8],
        "max_model_calls: the sample made 4 model call(s), expected at most 3",
    );
    assert_eq!(verdicts[9], None);
    failed(
        &verdicts[10],
        "max_repeats: the model requested search({\"q\":\"a\"}) 2 times in a row, at most 1 allowed: a loop",
    );
}

#[test]
fn the_judge_on_the_trajectory_is_not_asked_when_the_case_fails_anyway() {
    let suite = parsed(
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ max_model_calls = 1 }, { judge_trajectory = \"It searched.\" }]\n",
    )
    .unwrap();
    let run = run_with_calls(&[("search", json!({})), ("search", json!({"q": 1}))]);
    // Asking would call the judge of this crate's configuration (none answers during unit tests) and
    // error the sample instead of failing it.
    let outcome = crate::engine::Engine::for_unit_tests().block_on(evaluate(
        &suite.cases[0].asserts,
        None,
        &run,
    ));
    let (SampleStatus::Failed, Some(message)) = (outcome.status(), outcome.message()) else {
        panic!("a failure expected, got {outcome:?}");
    };
    assert_contains(
        message,
        &[
            "2 of 2 assertions failed",
            "max_model_calls: the sample made 2 model call(s), expected at most 1",
            "judge_trajectory: not asked, the case fails anyway",
        ],
    );
}

#[cfg(feature = "yaml")]
#[test]
fn yaml_suites_read_the_same_assertions() {
    use crate::trajectory::ToolOrder;
    const YAML: &str = "prompt-tests/s.evals.yaml";
    let text = "prompt: Hi\ntools:\n  - name: search\ncases:\n  - name: a\n    assert:\n      \
                - tool_called: { name: search, min: 1, max: 2 }\n      \
                - tool_sequence: { tools: [search, reply], order: exact }\n      \
                - max_model_calls: 3\n      - max_repeats: 1\n      \
                - judge_trajectory: It searched first.\n";
    let suite = parse("s", YAML, Path::new("/nonexistent"), text)
        .map_err(|p| report(YAML, text, &p))
        .unwrap_or_else(|report| panic!("{report}"));
    let kinds: Vec<&str> = suite.cases[0]
        .asserts
        .iter()
        .map(|a| a.check.kind())
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_called",
            "tool_sequence",
            "max_model_calls",
            "max_repeats",
            "judge_trajectory"
        ]
    );
    assert!(matches!(
        suite.cases[0].asserts[1].check,
        Check::ToolSequence {
            order: ToolOrder::Exact,
            ..
        }
    ));
    let bad = "prompt: Hi\ncases:\n  - name: a\n    assert:\n      - tool_sequence: { tools: [a], order: sorted }\n";
    let report = parse("s", YAML, Path::new("/nonexistent"), bad)
        .map(|_| ())
        .map_err(|p| report(YAML, bad, &p))
        .expect_err("an unknown order");
    assert_contains(
        &report,
        &["`cases[0].assert[0].tool_sequence.order`: unknown order \"sorted\""],
    );
}
