//! Unit tests of YAML suites: read into the same suite as TOML, their problems located and worded in
//! YAML (the harness-level ones are in tests/suites/yaml.rs).

use std::path::Path;

use super::assert::Check;
use super::parse::{Suite, parse, report};
use crate::test_support::{Scratch, assert_contains};

const FILE: &str = "prompt-tests/support.evals.yaml";

/// PromptKit's example as the example crate commits it (its documentation's text under a comment).
const PROMPTKIT: &str = include_str!("../../prompt-tests/support.evals.yaml");

fn parsed(file: &str, text: &str, dir: &Path) -> Result<Suite, String> {
    parse("support", file, dir, text).map_err(|p| report(file, text, &p))
}

fn problems(text: &str) -> String {
    parsed(FILE, text, Path::new("/nonexistent")).expect_err("the suite has problems")
}

/// An assertion's kind and value.
fn check(check: &Check) -> String {
    let value = match check {
        Check::Contains(v)
        | Check::NotContains(v)
        | Check::IContains(v)
        | Check::NotToolCalled(v) => {
            format!("{v:?}")
        }
        Check::Regex(v) => format!("{:?}", v.iter().map(|r| r.as_str()).collect::<Vec<_>>()),
        Check::Equals(v)
        | Check::StartsWith(v)
        | Check::EndsWith(v)
        | Check::Judge(v)
        | Check::JudgeWithInputs(v)
        | Check::JudgeTrajectory(v) => {
            format!("{v:?}")
        }
        Check::IsJson(v) => v.to_string(),
        Check::MaxLatency(v) | Check::MaxCost(v) => format!("{v:?}"),
        Check::MaxTokens(v) | Check::MaxWords(v) => v.to_string(),
        Check::ToolCalled {
            name,
            arguments,
            min,
            max,
        } => format!("{name} {arguments:?} {min}..{max:?}"),
        Check::ToolSequence { tools, order } => format!("{tools:?} {order:?}"),
        Check::MaxModelCalls(v) | Check::MaxRepeats(v) => v.to_string(),
        Check::Similar {
            reference,
            threshold,
        } => format!("{reference:?} {threshold}"),
        _ => String::new(),
    };
    format!("{}({value})", check.kind())
}

/// A suite's cases as comparable text: name, inputs, skip, and each assertion's check and weight.
fn shape(suite: &Suite) -> Vec<String> {
    suite
        .cases
        .iter()
        .map(|c| {
            let asserts: Vec<String> = c
                .asserts
                .iter()
                .map(|a| format!("{} x{}", check(&a.check), a.weight))
                .collect();
            format!(
                "{} {:?} {:?} {}",
                c.name,
                c.inputs,
                c.skip,
                asserts.join("; ")
            )
        })
        .collect()
}

#[test]
fn promptkit_s_example_runs_as_written_with_the_prompt_beside_it() {
    let dir = Scratch::new("yaml-promptkit");
    dir.file("support.md", "You support {product}. Reply to: {message}");
    let suite = parsed(FILE, PROMPTKIT, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(suite.prompt, "You support {product}. Reply to: {message}");
    assert_eq!(suite.info.prompt_id, "support");
    let cases = shape(&suite);
    assert_eq!(cases.len(), 3);
    assert_contains(
        &cases[0],
        &[
            "mentions_the_product",
            "(\"order_id\", \"A-1042\")",
            "contains([\"Acme Cloud\"]) x1",
            "max_tokens(400) x1",
        ],
    );
    assert_contains(
        &cases[1],
        &[
            "not_contains([\"order id\"]) x1",
            // Seconds, as in TOML.
            "max_latency(30.0) x1",
        ],
    );
    assert_contains(
        &cases[2],
        &["not_ready_yet", "Some(\"skipped in the suite\")"],
    );
    // The order id is an input no placeholder uses: reported, not an error.
    assert_eq!(suite.cases[0].unused_inputs, ["order_id"]);
}

#[test]
fn a_yaml_suite_is_the_same_suite_as_its_toml_twin() {
    let dir = Scratch::new("yaml-twin");
    let toml = r#"
prompt = "Say {x} about {y}"
runs = 3
pass_threshold = 0.6
assert = [{ max_words = 50 }]

[[cases]]
name = "a"
category = "billing"
inputs = { x = "1.50", y = "yes" }
expected = "Paris"
assert = [
  { contains = ["a", "b"], weight = 2 },
  { regex = '^\d+ {expected}$' },
  { is_json = false },
  { json_schema = { type = "object", required = ["answer"] } },
  { judge = "Polite." },
]

[[cases]]
name = "b"
skip = "later"
"#;
    let yaml = r#"
prompt: Say {x} about {y}
runs: 3
pass_threshold: 0.6
assert:
  - max_words: 50
cases:
  - name: a
    category: billing
    inputs: { x: "1.50", y: yes }
    expected: Paris
    assert:
      - contains: [a, b]
        weight: 2
      - regex: '^\d+ {expected}$'
      - is_json: false
      - json_schema: { type: object, required: [answer] }
      - judge: Polite.
  - name: b
    skip: later
"#;
    let from_toml = parsed("prompt-tests/support.evals.toml", toml, dir.path()).unwrap();
    let from_yaml = parsed(FILE, yaml, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shape(&from_yaml), shape(&from_toml));
    assert_eq!(
        format!("{:?}", from_yaml.cases[0].settings.sampling),
        format!("{:?}", from_toml.cases[0].settings.sampling)
    );
    // Where each assertion is written: the YAML file's own lines.
    let at: Vec<&str> = from_yaml.cases[0]
        .asserts
        .iter()
        .map(|a| a.at.as_str())
        .collect();
    assert_eq!(
        at,
        [
            "prompt-tests/support.evals.yaml:6",
            "prompt-tests/support.evals.yaml:13",
            "prompt-tests/support.evals.yaml:15",
            "prompt-tests/support.evals.yaml:16",
            "prompt-tests/support.evals.yaml:17",
            "prompt-tests/support.evals.yaml:18",
        ]
    );
}

#[test]
fn problems_are_located_and_worded_in_yaml() {
    let report = problems(
        "prompt: Say {x}\nruns: three\ncases:\n  - name: a\n    inputs: { x: 1 }\n    assert:\n      - containz: hi\n      - max_words: [1]\n    live_only: yes\n",
    );
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml has 4 problems; no case of this suite ran:",
            "prompt-tests/support.evals.yaml:2:7: `runs`: expected a whole number, found a string",
            "2 | runs: three",
            "  |       ^",
            "fix: write `runs: 1` or more (samples per case)",
            "prompt-tests/support.evals.yaml:7:9: `cases[0].assert[0].containz`: unknown assertion `containz`",
            "fix: did you mean `contains`?",
            "prompt-tests/support.evals.yaml:8:20: `cases[0].assert[1].max_words`: expected a whole number, found a list",
            // `yes` is a string in YAML 1.2, not a boolean.
            "prompt-tests/support.evals.yaml:9:16: `cases[0].live_only`: expected `true` or `false`, found a string",
            "fix: write `live_only: true`",
        ],
    );
    assert!(!report.contains(" = "), "{report}");
}

#[test]
fn an_unknown_key_suggests_the_known_one() {
    let report = problems("promt: Say hi\ncases:\n  - name: a\n    inputz: {}\n");
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml:1:1: `promt`: unknown key `promt`",
            "fix: did you mean `prompt`?",
            "prompt-tests/support.evals.yaml:4:5: `cases[0].inputz`: unknown key `inputz`",
            "fix: did you mean `inputs`?",
        ],
    );
}

/// The attribute's names are read in YAML as in TOML, with the same warning at their line.
#[test]
fn the_attribute_s_names_are_read_with_a_warning() {
    let text =
        "target_prompt: Say {x}\ncases:\n  - name: a\n    target_prompt_vars: { x: \"1\" }\n";
    let suite = parsed(FILE, text, Path::new("/nonexistent")).unwrap_or_else(|r| panic!("{r}"));
    assert_eq!(suite.prompt, "Say {x}");
    assert_eq!(suite.cases[0].inputs, [("x".to_string(), "1".to_string())]);
    assert_eq!(
        suite.warnings,
        [
            "prompt-tests/support.evals.yaml:1: `target_prompt` is #[prompt_test]'s name for `prompt`; read \
             as `prompt`: write `prompt` in a suite",
            "prompt-tests/support.evals.yaml:4: `target_prompt_vars` is #[prompt_test]'s name for `inputs`; \
             read as `inputs`: write `inputs` in a suite",
        ]
    );
    let report = problems("prompt: Hi\nagent: tools\ncases:\n  - name: a\n");
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml:2:1: `agent`: `agent` is #[prompt_test]'s key, not a suite's",
            "fix: a suite's agent loop runs the tools of its `mcp: [...]` servers (`tools` are offered and their calls checked, not run)",
        ],
    );
}

#[test]
fn duplicate_keys_nulls_and_yaml_only_problems_fail_the_suite() {
    let report =
        problems("prompt: Say hi\nprompt: Say ho\ncases:\n  - name: a\n    skip:\n  - name: a\n");
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml:2:1: `prompt`: the key `prompt` is written twice in this mapping (first on line 1)",
            "fix: keep one of them",
            "prompt-tests/support.evals.yaml:5:9: `cases[0].skip`: no value",
            "fix: write a value after `skip:`",
            "prompt-tests/support.evals.yaml:6:11: `cases[1].name`: a case named `a` already exists in this suite",
        ],
    );
    let report = problems("prompt: Hi\ncases:\n\t- name: a\n");
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml:3:2: YAML syntax error: tabs",
            "fix: correct the YAML at this position (indent with spaces, not tabs",
        ],
    );
    let report = problems("prompt: Hi\ncases: [{ name: a }]\n---\nprompt: Ho\n");
    assert_contains(
        &report,
        &["prompt-tests/support.evals.yaml:3:1: a second YAML document: a suite file holds one"],
    );
    let report = problems("- prompt: Hi\n");
    assert_contains(
        &report,
        &["1:1: the file holds a list, not a mapping of keys"],
    );
}

#[test]
fn without_a_prompt_the_file_beside_with_the_suite_s_name_is_the_prompt() {
    let dir = Scratch::new("yaml-beside");
    let text = "cases:\n  - name: a\n";
    let report = parsed(FILE, text, dir.path()).expect_err("no prompt file yet");
    assert_contains(
        &report,
        &[
            "prompt-tests/support.evals.yaml:1:1: `prompt`: the suite has no `prompt`, and no prompt file beside it \
             has its name (`support.md`, `support.txt`, `support.prompt`)",
            "fix: create `support.md` beside the suite, or add `prompt: \"support.md\"`",
        ],
    );
    dir.file("support.prompt", "Hi");
    let suite = parsed(FILE, text, dir.path()).unwrap();
    assert_eq!(
        (suite.prompt.as_str(), suite.info.prompt_id.as_str()),
        ("Hi", "support")
    );
    // TOML suites take it too.
    let toml = "[[cases]]\nname = \"a\"\n";
    assert_eq!(
        parsed("prompt-tests/support.evals.toml", toml, dir.path())
            .unwrap()
            .prompt,
        "Hi"
    );
    // A `prompt` still wins.
    let named = parsed(FILE, "prompt: Ho\ncases: [{ name: a }]\n", dir.path()).unwrap();
    assert_eq!(named.prompt, "Ho");
    dir.file("support.md", "Hello");
    let report = parsed(FILE, text, dir.path()).expect_err("two prompt files");
    assert_contains(
        &report,
        &[
            "`prompt`: the suite names no `prompt`, and 2 prompt files beside it have its name: `support.md` and \
             `support.prompt`",
            "fix: name the one to use: `prompt: \"support.md\"`, or remove the others",
        ],
    );
}

#[test]
fn a_value_left_out_is_one_problem_not_also_a_missing_one() {
    for (text, says) in [
        (
            "prompt: Say hi\ncases:\n  - name: a\n    assert:\n      - contains:\n",
            "5:17: `cases[0].assert[0].contains`: no value",
        ),
        ("prompt:\ncases:\n  - name: a\n", "1:7: `prompt`: no value"),
        (
            "prompt: Hi\ncases:\n  - name: ~\n",
            "3:11: `cases[0].name`: no value",
        ),
        (
            "prompt: Say {x}\ncases:\n  - name: a\n    inputs: !custom { x: 1 }\n",
            "4:13: `cases[0].inputs`: the YAML tag `!custom` is not supported here",
        ),
    ] {
        let report = problems(text);
        assert_contains(
            &report,
            &[
                "prompt-tests/support.evals.yaml has 1 problem;",
                &format!("prompt-tests/support.evals.yaml:{says}"),
            ],
        );
    }
}

/// Every YAML example of the guide's suites chapter (src/guide/suites.md) is YAML the suite reader takes: no syntax or YAML problem, no
/// unknown key or assertion (a fragment may lack its prompt file or cases).
#[test]
fn the_documented_yaml_examples_read() {
    let docs = include_str!("../guide/suites.md");
    let blocks: Vec<&str> = docs
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(blocks.len() >= 7, "{} YAML examples", blocks.len());
    for block in blocks {
        // A fragment of assertions: the prompt that gives their placeholders.
        let block = if block.contains("prompt") {
            block.to_string()
        } else {
            format!("prompt: \"{{country}} {{city}}\"\n{block}")
        };
        let report = match parse("s", FILE, Path::new("/nonexistent"), &block) {
            Ok(_) => continue,
            Err(problems) => report(FILE, &block, &problems),
        };
        let bad = [
            "YAML",
            "unknown",
            "expected a",
            "expected `",
            "no value",
            "written twice",
            "invalid",
        ];
        for bad in bad {
            assert!(!report.contains(bad), "{block}\n{report}");
        }
    }
}
