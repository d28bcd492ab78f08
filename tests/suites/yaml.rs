//! YAML suites end to end: found beside the TOML ones, run like them (trial names, cassettes, reports,
//! the matrix, datasets), and a broken one is one failing trial whose problems are located and worded in
//! YAML.

use super::*;

/// PromptKit's example as the example crate commits it (its documentation's text under a comment): no
/// prompt, provider or model of its own.
const PROMPTKIT: &str = include_str!("../../prompt-tests/support.evals.yaml");

/// Its prompt, beside it with its name.
const SUPPORT_MD: &str = "You are the support agent of {product}. Reply to: {message}";

#[test]
fn promptkit_s_example_replays_from_its_cassette_with_the_prompt_beside_it() {
    let mut f = Fixture::new("yaml-promptkit");
    f.file("prompt-tests/support.evals.yaml", PROMPTKIT);
    f.file("prompt-tests/support.md", SUPPORT_MD);
    let prompt = |message: &str| {
        SUPPORT_MD
            .replace("{product}", "Acme Cloud")
            .replace("{message}", message)
    };
    f.answer(
        "support",
        &prompt("My invoice looks wrong."),
        1,
        "Acme Cloud billing can fix that invoice.",
    );
    f.answer(
        "support",
        &prompt("I cannot log in."),
        1,
        "Try resetting your password.",
    );
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[
        ("support::mentions_the_product", "ok"),
        ("support::handles_a_missing_order_id", "ok"),
        ("support::not_ready_yet", "ignored (skipped in the suite)"),
    ]);
    let suite = out.suite("support");
    assert_eq!(suite["file"], "prompt-tests/support.evals.yaml");
    assert_eq!(suite["prompt_id"], "support");
    assert_eq!(
        (suite["passed"].as_u64(), suite["skipped"].as_u64()),
        (Some(2), Some(1))
    );
    // The order id is not in the prompt: said, not an error.
    out.assert_stderr_has(
        "input(s) `order_id` match no placeholder of the prompt and are not sent",
    );
    // A failure names the YAML file's line, as a TOML suite's does.
    f.cassettes.clear();
    f.answer("support", &prompt("My invoice looks wrong."), 1, "Hello!");
    f.answer(
        "support",
        &prompt("I cannot log in."),
        1,
        "What is your order id?",
    );
    let out = f.run(&[]);
    out.assert_code(101);
    out.assert_failure_has(
        "support",
        "mentions_the_product",
        &["prompt-tests/support.evals.yaml:13: contains: expected the output to contain \"Acme Cloud\""],
    );
    out.assert_failure_has(
        "support",
        "handles_a_missing_order_id",
        &["prompt-tests/support.evals.yaml:21: not_contains:"],
    );
}

/// (file, text, `file:line:column: key: message`, fix fragment)
const BROKEN: &[(&str, &str, &str, &str)] = &[
    (
        "bad_syntax",
        "prompt: Say hi\ncases:\n  - name: a\n     assert: []\n",
        "prompt-tests/bad_syntax.evals.yaml:4:12: YAML syntax error: mapping values are not allowed in this context",
        "correct the YAML at this position",
    ),
    (
        "bad_tabs",
        "prompt: Say hi\ncases:\n\t- name: a\n",
        "prompt-tests/bad_tabs.evals.yaml:3:2: YAML syntax error: tabs disallowed within this context",
        "indent with spaces, not tabs",
    ),
    (
        "bad_assert",
        "prompt: Say hi\ncases:\n  - name: a\n    assert:\n      - containz: hi\n",
        "prompt-tests/bad_assert.evals.yaml:5:9: `cases[0].assert[0].containz`: unknown assertion `containz`",
        "did you mean `contains`? Valid assertions: contains, not_contains,",
    ),
    (
        "bad_type",
        "prompt: Say hi\nruns: three\ncases:\n  - name: a\n",
        "prompt-tests/bad_type.evals.yaml:2:7: `runs`: expected a whole number, found a string",
        "write `runs: 1` or more (samples per case)",
    ),
    (
        "bad_bool",
        "prompt: Say hi\ncases:\n  - name: a\n    live_only: yes\n",
        "prompt-tests/bad_bool.evals.yaml:4:16: `cases[0].live_only`: expected `true` or `false`, found a string",
        "write `live_only: true`",
    ),
    (
        "bad_key",
        "promt: Say hi\ncases:\n  - name: a\n",
        "prompt-tests/bad_key.evals.yaml:1:1: `promt`: unknown key `promt`",
        "did you mean `prompt`?",
    ),
    (
        "bad_prompt_file",
        "prompt: missing.md\ncases:\n  - name: a\n",
        "prompt-tests/bad_prompt_file.evals.yaml:1:9: `prompt`: prompt file `missing.md` not found",
        "create the file beside the suite",
    ),
    (
        "no_prompt",
        "cases:\n  - name: a\n",
        "prompt-tests/no_prompt.evals.yaml:1:1: `prompt`: the suite has no `prompt`, and no prompt file beside it \
         has its name (`no_prompt.md`, `no_prompt.txt`, `no_prompt.prompt`)",
        "create `no_prompt.md` beside the suite, or add `prompt: \"no_prompt.md\"`",
    ),
    (
        "bad_input",
        "prompt: Reply to {message} about {product}\ncases:\n  - name: a\n    inputs: { message: hi }\n",
        "prompt-tests/bad_input.evals.yaml:4:13: `cases[0].inputs`: no input `product` for the placeholder {product} \
         of the prompt",
        "add `product: \"...\"` to this case's inputs",
    ),
    (
        "bad_duplicate",
        "prompt: Say hi\ncases:\n  - name: a\n    name: b\n",
        "prompt-tests/bad_duplicate.evals.yaml:4:5: `cases[0].name`: the key `name` is written twice in this mapping \
         (first on line 3)",
        "keep one of them",
    ),
    (
        "bad_null",
        "prompt: Say hi\ncases:\n  - name: a\n    assert:\n      - contains:\n",
        "prompt-tests/bad_null.evals.yaml:5:17: `cases[0].assert[0].contains`: no value",
        "write a value after `contains:`",
    ),
    (
        "bad_documents",
        "prompt: Say hi\ncases: [{ name: a }]\n---\nprompt: Say ho\n",
        "prompt-tests/bad_documents.evals.yml:3:1: a second YAML document: a suite file holds one",
        "remove this `---` and what follows it",
    ),
];

#[test]
fn a_broken_yaml_suite_is_one_failing_trial_that_locates_the_problem() {
    let mut f = Fixture::new("yaml-broken");
    for (name, text, location, _) in BROKEN {
        // One written `.yml`, the other spelling.
        let suffix = if location.contains(".evals.yml:") {
            "yml"
        } else {
            "yaml"
        };
        f.file(&format!("prompt-tests/{name}.evals.{suffix}"), text);
    }
    f.file(
        "prompt-tests/good.evals.yaml",
        "prompt: Say hi\ncases:\n  - name: hi\n    assert:\n      - icontains: hi\n",
    );
    f.answer("good", "Say hi", 1, "Hi!");
    let out = f.run(&[]);
    out.assert_code(101);
    // Other suites run normally.
    out.assert_statuses(&[("good::hi", "ok")]);
    for (name, _, location, fix) in BROKEN {
        out.assert_statuses(&[(&format!("{name}::suite_file_error"), "FAILED")]);
        let error = out.suite(name)["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no error"))
            .to_string();
        child::assert_contains(&error, &[location, fix, "no case of this suite ran"]);
        // Worded for YAML: no TOML `key = value` in a fix.
        for line in error.lines().filter(|l| l.trim_start().starts_with("fix:")) {
            assert!(!line.contains(" = "), "{name}: {line}");
        }
        out.assert_stdout_has(location);
    }
}

#[test]
fn a_toml_and_a_yaml_suite_of_one_name_are_an_error_naming_both() {
    let f = Fixture::new("yaml-twins");
    f.file(
        "prompt-tests/a.evals.toml",
        "prompt = \"Hi\"\n[[cases]]\nname = \"x\"\n",
    );
    f.file(
        "prompt-tests/a.evals.yaml",
        "prompt: Hi\ncases:\n  - name: x\n",
    );
    let out = f.run(&[]);
    out.assert_fails_at(
        "a::suite_file_error",
        &["two suite files are named `a`: prompt-tests/a.evals.toml and prompt-tests/a.evals.yaml, the same \
           suite in more than one format; keep one of them"],
    );
    child::assert_lacks(&out.stdout(), "a::x ");
}

#[test]
fn a_yaml_matrix_and_dataset_run_as_their_toml_twins_do() {
    let fake = paris_and_lyon();
    let f = Fixture::calling("yaml-matrix", &fake, "auto");
    f.file(
        "prompt-tests/geo.evals.yml",
        "prompts: [capital_v1.md, capital_v2.md]\nmodels: [fake/a, fake/b]\ncases_file: golden.jsonl\n\
         assert:\n  - contains: \"{expected}\"\ncases:\n  - name: france\n    expected: Paris\n    inputs:\n      \
         country: France\n",
    );
    f.file("prompt-tests/capital_v1.md", "Capital of {country}?");
    f.file(
        "prompt-tests/capital_v2.md",
        "Name the capital city of {country}.",
    );
    f.file(
        "prompt-tests/golden.jsonl",
        "{\"id\": \"row_fr\", \"country\": \"France\", \"expected\": \"Paris\"}\n",
    );
    let trials = |status_b: &'static str| {
        ["france", "row_fr"].into_iter().flat_map(move |case| {
            [("a", "ok"), ("b", status_b)]
                .into_iter()
                .flat_map(move |(model, status)| {
                    ["capital_v1", "capital_v2"]
                        .map(|v| (format!("geo::{case}[fake/{model}|{v}]"), status))
                })
        })
    };
    let first = f.run(&[]);
    first.assert_code(101);
    for (trial, status) in trials("FAILED") {
        first.assert_statuses(&[(&trial, status)]);
    }
    // The inline case and the dataset row render the same four calls: each is made once, and the
    // second trial to ask it replays its recording, as it will offline.
    assert_eq!(fake.requests().len(), 4);
    // One cassette for the suite, named as a TOML suite's is; offline, every trial replays from it.
    assert!(
        f.root
            .join("prompt-tests/cassettes/geo.cassette.json")
            .is_file()
    );
    drop(fake);
    let mut offline = f;
    offline.mode = "replay";
    let again = offline.run(&[]);
    for (trial, status) in trials("FAILED") {
        again.assert_statuses(&[(&trial, status)]);
    }
    again.assert_stdout_has("fake/a|capital_v1");
    let suite = again.suite("geo");
    assert_eq!(suite["file"], "prompt-tests/geo.evals.yml");
    assert_eq!(
        (suite["passed"].as_u64(), suite["total"].as_u64()),
        (Some(4), Some(8))
    );
}
