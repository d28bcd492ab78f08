//! Suite files: a broken one is one failing trial that locates the problem; the shipped ones are valid.

use prompt_tester_testkit::child::Child;

use super::*;

/// (file, text, `file:line:column`, key, fix fragment)
const BROKEN: &[(&str, &str, &str, &str, &str)] = &[
    (
        "bad_syntax",
        "prompt = \"Say hi\"\n[[cases]\nname = \"a\"\n",
        "prompt-tests/bad_syntax.evals.toml:2:9: TOML syntax error: unclosed array table, expected `]`",
        "",
        "correct the TOML at this position",
    ),
    (
        "bad_assert",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nassert = [{ containz = \"hi\" }]\n",
        "prompt-tests/bad_assert.evals.toml:4:13: `cases[0].assert[0].containz`: unknown assertion `containz`",
        "cases[0].assert[0].containz",
        "did you mean `contains`? Valid assertions: contains, not_contains, icontains, regex, equals, starts_with, \
         ends_with, is_json, json_schema, max_latency, max_cost, max_tokens, max_words, tool_called, not_tool_called, \
         tool_sequence, max_model_calls, max_repeats, judge, judge_trajectory, similar; custom: min_sentences",
    ),
    (
        "bad_type",
        "prompt = \"Say hi\"\nruns = \"three\"\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_type.evals.toml:2:8: `runs`: expected a whole number, found a string",
        "runs",
        "write `runs = 1` or more (samples per case)",
    ),
    (
        "bad_live_only",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nlive_only = \"yes\"\n",
        "prompt-tests/bad_live_only.evals.toml:4:13: `cases[0].live_only`: expected `true` or `false`, found a string",
        "cases[0].live_only",
        "write `live_only = true`",
    ),
    (
        "bad_regex",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nassert = [{ regex = \"(unclosed\" }]\n",
        "prompt-tests/bad_regex.evals.toml:4:21: `cases[0].assert[0].regex`: invalid regex \"(unclosed\": unclosed group",
        "cases[0].assert[0].regex",
        "correct the pattern",
    ),
    (
        "bad_schema",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nassert = [{ json_schema = { type = \"objekt\" } }]\n",
        "prompt-tests/bad_schema.evals.toml:4:27: `cases[0].assert[0].json_schema`: invalid JSON schema:",
        "cases[0].assert[0].json_schema",
        "correct the schema",
    ),
    (
        "bad_prompt",
        "prompt = \"missing.md\"\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_prompt.evals.toml:1:10: `prompt`: prompt file `missing.md` not found",
        "prompt",
        "create the file beside the suite",
    ),
    (
        "bad_input",
        "prompt = \"Reply to {message} about {product}\"\n[[cases]]\nname = \"a\"\ninputs = { message = \"hi\" }\n",
        "prompt-tests/bad_input.evals.toml:4:10: `cases[0].inputs`: no input `product` for the placeholder {product} of the prompt",
        "cases[0].inputs",
        "add `product = \"...\"` to this case's inputs",
    ),
    (
        "bad_messages",
        "prompt = \"Say hi\"\nmessages = [{ role = \"user\", content = \"Hi\" }, { role = \"user\", content = \"Again\" }]\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_messages.evals.toml:2:48: `messages[1]`: turns 1 and 2 are both `user` turns",
        "messages[1]",
        "join them into one turn, or put the other role's turn between them (the order every provider takes",
    ),
    (
        "bad_confidence",
        "prompt = \"Say hi\"\npass_rate = 0.8\nconfidence = 1.5\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_confidence.evals.toml:3:14: `confidence`: 1.5 is out of range",
        "confidence",
        "use a confidence from 0.5 to below 1",
    ),
    (
        "bad_pass_rate_with_runs",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nruns = 5\npass_rate = 0.8\n",
        "prompt-tests/bad_pass_rate_with_runs.evals.toml:5:13: `cases[0].pass_rate`: `pass_rate` cannot be combined \
         with `runs`",
        "cases[0].pass_rate",
        "keep either `runs` / `pass_threshold` (a fixed number of samples) or `pass_rate`",
    ),
    (
        "bad_indifference",
        "prompt = \"Say hi\"\nindifference = 0.7\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_indifference.evals.toml:2:16: `indifference`: 0.7 is out of range",
        "indifference",
        "use a half-width above 0 and below 0.5",
    ),
    (
        "bad_key",
        "promt = \"Say hi\"\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_key.evals.toml:1:1: `promt`: unknown key `promt`",
        "promt",
        "did you mean `prompt`?",
    ),
    (
        "attribute_only",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"a\"\nrun_fn = \"echo\"\n",
        "prompt-tests/attribute_only.evals.toml:4:1: `cases[0].run_fn`: `run_fn` is #[prompt_test]'s key, not a \
         suite's",
        "cases[0].run_fn",
        "a suite calls a provider: name an endpoint of prompt-tester.toml (`[providers.NAME]`) as its `provider`",
    ),
];

#[test]
fn a_broken_suite_is_one_failing_trial_that_locates_the_problem() {
    let mut f = Fixture::new("broken");
    for (name, text, ..) in BROKEN {
        f.file(&format!("prompt-tests/{name}.evals.toml"), text);
    }
    f.recorded_suite(
        "good",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"hi\"\nassert = [{ icontains = \"hi\" }]\n",
        &[("Say hi", "Hi!")],
    );
    let out = f.run(&[]);
    out.assert_code(101);
    // Other suites run normally.
    out.assert_statuses(&[("good::hi", "ok")]);
    for (name, _, location, key, fix) in BROKEN {
        let trial = format!("{name}::suite_file_error");
        out.assert_statuses(&[(&trial, "FAILED")]);
        let suite = out.suite(name);
        let error = suite["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no error in {suite:#}"));
        assert!(
            error.contains(location),
            "{name}: {location:?} not in\n{error}"
        );
        if !key.is_empty() {
            assert!(
                error.contains(&format!("`{key}`")),
                "{name}: key {key} not in\n{error}"
            );
        }
        assert!(
            error.contains(&format!("fix: {fix}")) || error.contains(fix),
            "{name}: {fix:?} not in\n{error}"
        );
        assert!(error.contains("no case of this suite ran"), "{error}");
        assert_eq!(suite["total"], 1);
        assert_eq!(suite["passed"], 0);
        // The failure is printed by the console too.
        assert!(
            out.stdout().contains(location),
            "{name}: not on the console\n{}",
            out.stdout()
        );
    }
}

/// A suite written with #[prompt_test]'s names runs as with its own, and the run warns once per name,
/// at its line, naming the suite's key.
#[test]
fn a_suite_with_the_attribute_s_names_runs_and_warns_at_each() {
    let mut f = Fixture::new("attribute-names");
    f.recorded_suite(
        "old",
        "target_prompt = \"Say {x}\"\n[[cases]]\nname = \"one\"\ntarget_prompt_vars = { x = \"1\" }\n\
         assert = [{ contains = \"ok\" }]\n[[cases]]\nname = \"two\"\ninputs = { x = \"2\" }\n\
         assert = [{ contains = \"ok\" }]\n",
        &[("Say 1", "ok"), ("Say 2", "ok")],
    );
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[("old::one", "ok"), ("old::two", "ok")]);
    let stderr = out.stderr();
    for line in [
        "warning: prompt-tests/old.evals.toml:1: `target_prompt` is #[prompt_test]'s name for `prompt`; read as \
         `prompt`: write `prompt` in a suite\n",
        "warning: prompt-tests/old.evals.toml:4: `target_prompt_vars` is #[prompt_test]'s name for `inputs`; \
         read as `inputs`: write `inputs` in a suite\n",
    ] {
        assert_eq!(
            stderr.matches(line).count(),
            1,
            "{line:?} once in\n{stderr}"
        );
    }
}

#[test]
fn exact_builds_only_the_requested_trial_even_when_another_suite_is_broken() {
    let mut f = Fixture::new("exact");
    f.file("prompt-tests/broken.evals.toml", "prompt = 3\n");
    f.recorded_suite(
        "nested::deep",
        "prompt = \"Deep {x}\"\n[[cases]]\nname = \"one\"\ninputs = { x = \"1\" }\nassert = [{ contains = \"ok\" }]\n\
         [[cases]]\nname = \"two\"\ninputs = { x = \"2\" }\nassert = [{ contains = \"ok\" }]\n",
        &[("Deep 1", "ok"), ("Deep 2", "ok")],
    );
    let out = f.run(&["--exact", "nested::deep::one"]);
    out.assert_code(0);
    assert_eq!(out.outcome("nested::deep::one"), "ok");
    out.assert_stdout_has("1 passed; 0 failed");
    child::assert_lacks(&out.stdout(), "broken");

    // Asked by name, a case of a broken suite fails with the suite's problems instead of vanishing.
    let out = f.run(&["--exact", "broken::anything"]);
    out.assert_fails_at(
        "broken::anything",
        &["prompt-tests/broken.evals.toml:1:10: `prompt`: expected a string, found an integer"],
    );
}

/// A `--exact` process reads only its own case of a TOML suite (nextest runs one per trial): a broken
/// sibling does not stop it, and asked by name, the broken case fails with the whole file's problems,
/// located as in the file (`cases[1]`, its line), never as in the part that was read.
#[test]
fn exact_reads_only_its_case_and_a_broken_one_is_located_in_the_whole_file() {
    let mut f = Fixture::new("exact-case");
    f.recorded_suite(
        "pair",
        "prompt = \"Pair {x}\"\n[[cases]]\nname = \"good\"\ninputs = { x = \"1\" }\nassert = [{ contains = \"ok\" }]\n\
         [[cases]]\nname = \"bad\"\ninputs = { x = \"2\" }\nassert = [{ containz = \"ok\" }]\n",
        &[("Pair 1", "ok")],
    );
    let out = f.run(&["--exact", "pair::good"]);
    out.assert_code(0);
    assert_eq!(out.outcome("pair::good"), "ok");
    let out = f.run(&["--exact", "pair::bad"]);
    out.assert_fails_at(
        "pair::bad",
        &["prompt-tests/pair.evals.toml:9:13: `cases[1].assert[0].containz`: unknown assertion `containz`"],
    );
    // The whole run reads the whole file: the suite is one failing trial.
    let out = f.run(&[]);
    assert_ne!(out.code(), Some(0), "{}", out.context());
}

#[test]
fn a_case_without_provider_or_model_fails_with_the_fix() {
    let f = Fixture::new("nodefaults");
    f.file("prompt-tester.toml", "");
    f.file(
        "prompt-tests/lone.evals.toml",
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ contains = \"x\" }]\n",
    );
    let out = f.run(&[]);
    out.assert_case_failed(
        "lone",
        "a",
        &["case `lone::a` names no provider and model: add `provider = \"...\"` and `model = \"...\"` to \
           prompt-tests/lone.evals.toml"],
    );
}

#[test]
fn the_shipped_example_suites_are_valid() {
    let root = child::examples_root();
    let out = Child::harness(CHILD_ARGS, &["prompts", "--list"])
        .root(&root)
        .run();
    let stdout = out.stdout();
    assert!(out.success(), "{}", out.context());
    assert!(!stdout.contains("suite_file_error"), "{stdout}");
    // Listed as trials.
    child::assert_contains(
        &stdout,
        &[
            "assertions::france_sentence: test",
            "assertions::france_json: test",
            "assertions::italy_sentence::run_3: test",
            // A prompt-variant matrix over a gated dataset: one gate per prompt version.
            "translate_variants::gate[translate_v1]: test",
            "translate_variants::gate[translate_v2]: test",
            // PromptKit's example, in YAML, its prompt beside it.
            "support::mentions_the_product: test",
            "support::handles_a_missing_order_id: test",
        ],
    );
    // The showcase uses every built-in assertion kind but those on the trajectory (its prompt declares
    // no tools: tests/tools/suite_trajectory.rs runs them); `similar` is shown beside it, in
    // meaning.evals.toml, with thresholds measured for the local model.
    let text = ["assertions", "meaning"]
        .map(|s| std::fs::read_to_string(root.join(format!("{s}.evals.toml"))).unwrap())
        .join("\n");
    for kind in prompt_tester::testing::BUILT_IN_ASSERTIONS
        .into_iter()
        .filter(|kind| {
            ![
                "tool_called",
                "not_tool_called",
                "tool_sequence",
                "max_model_calls",
                "max_repeats",
                "judge_trajectory",
            ]
            .contains(kind)
        })
    {
        assert!(
            text.contains(&format!("{{ {kind} = ")),
            "the example does not use {kind}"
        );
    }
}

/// Values that are each in range but cannot work together once `[defaults]` fill in (here: a
/// `max_runs` below the 24 passes a passing test needs) fail that case's trial, naming the line and key.
#[test]
fn an_adaptive_case_that_could_never_pass_fails_naming_the_line_and_key() {
    let out = run_with_file(
        "adaptive-max-runs",
        "adaptive.evals.toml",
        "prompt = \"Say hi\"\npass_rate = 0.8\n\n[[cases]]\nname = \"a\"\nmax_runs = 10\n",
    );
    out.assert_fails_at(
        "adaptive::a",
        &[
            "prompt-tests/adaptive.evals.toml:6: `max_runs` of case `adaptive::a`: `max_runs` is 10, but even when \
             every run passes the test needs 24 runs to pass",
        ],
    );
}
