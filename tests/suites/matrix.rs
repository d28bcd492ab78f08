//! The model matrix and prompt variants in suites: `models = [...]` x `prompts = [...]`, one trial per
//! cell, one cassette per suite, the side-by-side table, `--subject`, and the problems in such a file.

use prompt_tester_testkit::FakeProvider;
use serde_json::Value;

use super::*;

/// Two prompt versions of one task, across two models of the `fake` endpoint.
const SUITE: &str = "prompts = [\"capital_v1.md\", \"capital_v2.md\"]\n\
                     models = [\"fake/a\", \"fake/b\"]\n\
                     [[cases]]\nname = \"france\"\ninputs = { country = \"France\" }\nassert = [{ contains = \"Paris\" }]\n";
const V1: &str = "Capital of {country}?";
const V2: &str = "Name the capital city of {country}.";

/// The four trials, with how each ends: model `a` knows the answer, model `b` does not.
const TRIALS: [(&str, &str); 4] = [
    ("geo2::france[fake/a|capital_v1]", "ok"),
    ("geo2::france[fake/a|capital_v2]", "ok"),
    ("geo2::france[fake/b|capital_v1]", "FAILED"),
    ("geo2::france[fake/b|capital_v2]", "FAILED"),
];

fn matrix_suite(f: &Fixture) {
    f.file("prompt-tests/geo2.evals.toml", SUITE);
    f.file("prompt-tests/capital_v1.md", V1);
    f.file("prompt-tests/capital_v2.md", V2);
}

/// The matrix suite in a crate calling [`paris_and_lyon`], run in cassette `mode`.
fn two_models(name: &str, mode: &'static str) -> (FakeProvider, Fixture) {
    let fake = paris_and_lyon();
    let f = Fixture::calling(name, &fake, mode);
    matrix_suite(&f);
    (fake, f)
}

#[test]
fn two_models_and_two_prompt_variants_record_one_cassette_and_replay_side_by_side() {
    let (fake, mut f) = two_models("matrix-record", "auto");
    let first = f.run(&[]);
    first.assert_code(101);
    first.assert_statuses(&TRIALS);
    // Each variant's text went to each model.
    let mut sent: Vec<(String, String)> = fake
        .requests()
        .iter()
        .map(|r| (r.model().unwrap(), r.last_user_text().unwrap()))
        .collect();
    sent.sort();
    let expected = [("a", V1), ("a", V2), ("b", V1), ("b", V2)]
        .map(|(m, p)| (m.to_string(), p.replace("{country}", "France")));
    assert_eq!(sent, expected);

    // One cassette for the suite; every entry holds the answer of the model it names.
    let entries = f.recorded("geo2");
    assert_eq!(entries.len(), 4, "{entries:#?}");
    for e in &entries {
        let model = e["model"].as_str().unwrap();
        assert_eq!(e["request"]["model"], model);
        let text = serde_json::to_string(&e["response"]).unwrap();
        let expected = if model == "a" { "Paris" } else { "Lyon" };
        assert!(text.contains(expected), "{model}: {text}");
    }
    drop(fake);

    // Offline: the same verdicts from the cassette, and the table side by side.
    f.mode = "replay";
    let again = f.run(&[]);
    again.assert_statuses(&TRIALS);
    again.assert_stderr_has("(4 replayed from cassettes)");
    let stderr = again.stderr();
    let header = stderr
        .lines()
        .find(|l| l.starts_with("test ") && l.contains("fake/a|capital_v1"))
        .unwrap_or_else(|| panic!("no matrix header in\n{}", again.stderr()));
    let labels: Vec<&str> = header.split_whitespace().skip(1).collect();
    assert_eq!(
        labels,
        [
            "fake/a|capital_v1",
            "fake/a|capital_v2",
            "fake/b|capital_v1",
            "fake/b|capital_v2"
        ]
    );
    let row = stderr
        .lines()
        .find(|l| l.starts_with("geo2::france "))
        .unwrap_or_else(|| panic!("no matrix row in\n{}", again.stderr()));
    assert_eq!(row.matches("1/1 100% [21-100%]").count(), 2, "{row}");
    assert_eq!(row.matches("0/1 0% [0-79%]").count(), 2, "{row}");

    let matrix = &again.report.as_ref().unwrap()["matrix"];
    assert_eq!(matrix["columns"][2]["model"], "fake/b");
    assert_eq!(matrix["columns"][2]["prompt"], "capital_v1");
    let row = &matrix["rows"][0];
    assert_eq!(row["name"], "geo2::france");
    assert_eq!(row["cells"]["fake/a|capital_v2"]["pass_rate"], 1.0);
    assert_eq!(row["cells"]["fake/b|capital_v2"]["runs_passed"], 0);
    assert_eq!(row["cells"]["fake/b|capital_v2"]["runs_total"], 1);
}

/// Recorded answers for the four cells: (model, prompt, output, latency in ms).
fn recorded(f: &mut Fixture, answers: &[(&str, &str, &str, u64)]) {
    for (model, prompt, output, latency_ms) in answers {
        let prompt = prompt.replace("{country}", "France");
        let request = CompletionRequest::new(*model, prompt, MAX_TOKENS);
        let result = CompletionResult::new(*output, 10, 20);
        f.answer_with("geo2", request, 1, result, *latency_ms);
    }
}

#[test]
fn the_summary_prints_the_matrix_with_rates_intervals_cost_latency_and_column_totals() {
    let mut f = Fixture::new("matrix-table");
    matrix_suite(&f);
    // A second case, so that a column total adds two rows.
    let suite = format!(
        "{SUITE}[[cases]]\nname = \"spain\"\ninputs = {{ country = \"Spain\" }}\nassert = [{{ contains = \"Madrid\" }}]\n"
    );
    f.file("prompt-tests/geo2.evals.toml", &suite);
    let config = std::fs::read_to_string(f.root.join("prompt-tester.toml")).unwrap();
    f.file(
        "prompt-tester.toml",
        &format!("{config}\n[prices.\"a\"]\ninput_mtok = 1.0\noutput_mtok = 2.0\n"),
    );
    recorded(
        &mut f,
        &[
            ("a", V1, "Paris", 500),
            ("a", V2, "Paris", 1500),
            ("b", V1, "Lyon", 200),
            ("b", V2, "Paris", 400),
        ],
    );
    for (model, prompt, output) in [
        ("a", "Capital of Spain?", "Madrid"),
        ("a", "Name the capital city of Spain.", "Madrid"),
        ("b", "Capital of Spain?", "Madrid"),
        ("b", "Name the capital city of Spain.", "Seville"),
    ] {
        let request = CompletionRequest::new(model, prompt, MAX_TOKENS);
        let result = CompletionResult::new(output, 10, 20);
        f.answer_with("geo2", request, 1, result, 1000);
    }
    let out = f.run(&[]);
    let stderr = out.stderr();
    let table = stderr
        .split_once("prompt-tester matrix")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no matrix in\n{}", out.context()));
    // Model `a` is priced (10 in, 20 out: $0.00005 a call); `b` has no price.
    assert_eq!(
        table,
        ": samples passed, pass rate [95% interval], cost, mean latency\n\
test                          fake/a|capital_v1                  fake/a|capital_v2                  fake/b|capital_v1                  fake/b|capital_v2\n\
geo2::france  1/1 100% [21-100%] $0.00005 0.50s  1/1 100% [21-100%] $0.00005 1.50s      0/1 0% [0-79%] unpriced 0.20s  1/1 100% [21-100%] unpriced 0.40s\n\
geo2::spain   1/1 100% [21-100%] $0.00005 1.00s  1/1 100% [21-100%] $0.00005 1.00s  1/1 100% [21-100%] unpriced 1.00s      0/1 0% [0-79%] unpriced 1.00s\n\
total         2/2 100% [34-100%] $0.00010 0.75s  2/2 100% [34-100%] $0.00010 1.25s     1/2 50% [9-91%] unpriced 0.60s     1/2 50% [9-91%] unpriced 0.70s\n",
        "{}",
        out.context()
    );
    let matrix = &out.report.as_ref().unwrap()["matrix"];
    let total = &matrix["columns"][0]["total"];
    assert_eq!(total["runs_passed"], 2);
    assert_eq!(total["mean_latency_s"], 0.75);
    assert!((total["cost_usd"].as_f64().unwrap() - 0.0001).abs() < 1e-12);
    assert_eq!(matrix["columns"][3]["total"]["cost_usd"], Value::Null);
    let interval = &matrix["columns"][3]["total"]["pass_rate_95"];
    assert!(
        (interval["low"].as_f64().unwrap() - 0.0945).abs() < 1e-3,
        "{interval}"
    );
}

#[test]
fn trial_names_list_every_cell_and_a_filter_selects_a_column() {
    let (fake, f) = two_models("matrix-filter", "off");
    let list = f.run(&["--list"]);
    let names = list.listed();
    assert_eq!(names, TRIALS.map(|(n, _)| n), "{}", list.context());

    // A case's own `models` replace the suite's.
    f.file(
        "prompt-tests/solo.evals.toml",
        "prompt = \"Hi\"\nmodels = [\"fake/a\", \"fake/b\"]\n[[cases]]\nname = \"own\"\nmodels = [\"fake/c\"]\n\
         [[cases]]\nname = \"inherited\"\n",
    );
    let list = f.run(&["--list", "solo::"]);
    let names = list.listed();
    assert_eq!(
        names,
        [
            "solo::own[fake/c]",
            "solo::inherited[fake/a]",
            "solo::inherited[fake/b]"
        ],
        "{}",
        list.context()
    );
    std::fs::remove_file(f.root.join("prompt-tests/solo.evals.toml")).unwrap();

    let out = f.run(&["[fake/a"]);
    out.assert_code(0);
    out.assert_statuses(&TRIALS[..2]);
    child::assert_lacks(&out.stdout(), "fake/b");
    let models: Vec<String> = fake.requests().iter().map(|r| r.model().unwrap()).collect();
    assert_eq!(models, ["a", "a"]);

    let one = f.run(&["--exact", "geo2::france[fake/b|capital_v2]"]);
    one.assert_statuses(&TRIALS[3..]);
    assert_eq!(fake.request_count(), 3, "{}", one.context());
    // The command to re-run it quotes the brackets and the bar for the shell.
    one.assert_stderr_has("-- --exact 'geo2::france[fake/b|capital_v2]'");
}

#[test]
fn subject_retargets_every_case_at_one_model_and_bad_values_are_errors() {
    let (fake, f) = two_models("matrix-subject", "off");
    f.file(
        "prompt-tests/plain.evals.toml",
        "prompt = \"Capital of {country}?\"\n[[cases]]\nname = \"france\"\ninputs = { country = \"France\" }\n\
         assert = [{ contains = \"Paris\" }]\n",
    );
    let out = f.run(&["--subject", "fake/a"]);
    out.assert_code(0);
    // The model axis collapses onto the one model; the prompt variants stay.
    out.assert_statuses(&[
        ("geo2::france[capital_v1]", "ok"),
        ("geo2::france[capital_v2]", "ok"),
        ("plain::france", "ok"),
    ]);
    let models: Vec<String> = fake.requests().iter().map(|r| r.model().unwrap()).collect();
    assert_eq!(models, ["a", "a", "a"], "{}", out.context());

    let mut g = Fixture::calling("matrix-subject-env", &fake, "off");
    matrix_suite(&g);
    g.env.push(("PROMPT_TESTER_SUBJECT", "fake/b"));
    let by_env = g.run(&["geo2"]);
    by_env.assert_statuses(&[("geo2::france[capital_v1]", "FAILED")]);
    assert_eq!(fake.requests().last().unwrap().model().unwrap(), "b");

    for (args, env, message) in [
        (
            &["--subject", "claude-haiku-4-5"][..],
            None,
            "error: --subject: \"claude-haiku-4-5\" is not `provider/model`: there is no `/` between the provider \
             and the model",
        ),
        (
            &["--subject"][..],
            None,
            "error: --subject needs a model: --subject provider/model",
        ),
        (
            &[][..],
            Some("nowhere/x"),
            "error: the subject nowhere/x of this run: unknown provider \"nowhere\"",
        ),
        (
            &[][..],
            Some("fake/"),
            "environment variable PROMPT_TESTER_SUBJECT=\"fake/\" is not valid: `provider/model`",
        ),
    ] {
        let mut h = Fixture::new("matrix-bad-subject");
        if let Some(value) = env {
            h.env.push(("PROMPT_TESTER_SUBJECT", value));
        }
        let bad = h.run(args);
        bad.assert_code(2);
        bad.assert_stderr_has(message);
        // Nothing ran.
        child::assert_lacks(&bad.stdout(), "test ");
    }
}

#[test]
fn prune_refuses_a_run_retargeted_at_one_model() {
    let mut f = Fixture::new("matrix-prune");
    matrix_suite(&f);
    recorded(&mut f, &[("a", V1, "Paris", 1)]);
    let out = f.run(&["--subject", "fake/a", "--prune-cassettes"]);
    out.assert_code(2);
    out.assert_stderr_has("--prune-cassettes refused: the run is retargeted at fake/a");
}

/// (file, text, `file:line:column: key: problem`, fix fragment)
const BROKEN: &[(&str, &str, &str, &str)] = &[
    (
        "both_models",
        "prompt = \"Hi\"\nmodel = \"m\"\nmodels = [\"fake/a\"]\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/both_models.evals.toml:2:9: `model`: `model` and `models` are both set here",
        "keep `models = [\"provider/model\", ...]` for a model matrix",
    ),
    (
        "bad_model",
        "prompt = \"Hi\"\nmodels = [\"fake/a\", \"haiku\", \"fake/a\"]\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_model.evals.toml:2:21: `models[1]`: \"haiku\" is not `provider/model`: there is no `/`",
        "write `models = [\"anthropic/claude-haiku-4-5\", \"local/SmolLM2-135M-Instruct\"]`",
    ),
    (
        "twice_model",
        "prompt = \"Hi\"\nmodels = [\"fake/a\", \"fake/a\"]\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/twice_model.evals.toml:2:21: `models[1]`: fake/a is listed twice",
        "keep one",
    ),
    (
        "case_model",
        "prompt = \"Hi\"\nmodels = [\"fake/a\"]\n[[cases]]\nname = \"a\"\nmodel = \"b\"\n",
        "prompt-tests/case_model.evals.toml:5:9: `cases[0].model`: the suite sets `models`, so a case cannot set `model` alone",
        "give the case its own `models = [\"provider/model\"]`",
    ),
    (
        "both_prompts",
        "prompt = \"Hi\"\nprompts = [\"capital_v1.md\"]\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/both_prompts.evals.toml:2:11: `prompts`: the suite has both `prompt` and `prompts`",
        "keep `prompt` for one prompt",
    ),
    (
        "missing_variant",
        "prompts = [\"capital_v1.md\", \"capital_v3.md\"]\n[[cases]]\nname = \"a\"\ninputs = { country = \"x\" }\n",
        "prompt-tests/missing_variant.evals.toml:1:29: `prompts[1]`: prompt file `capital_v3.md` not found",
        "create the file beside the suite",
    ),
    (
        "inline_variant",
        "prompts = [\"Say hi to {name}\"]\n[[cases]]\nname = \"a\"\ninputs = { name = \"x\" }\n",
        "prompt-tests/inline_variant.evals.toml:1:12: `prompts[0]`: \"Say hi to {name}\" is not a prompt file",
        "inline prompt text goes in `prompt`",
    ),
    (
        "variant_input",
        "prompts = [\"capital_v1.md\", \"hello.md\"]\n[[cases]]\nname = \"a\"\ninputs = { country = \"x\" }\n",
        "prompt-tests/variant_input.evals.toml:4:10: `cases[0].inputs`: no input `name` for the placeholder {name} of the prompt",
        "add `name = \"...\"`",
    ),
];

#[test]
fn matrix_keys_with_problems_are_located_with_the_fix() {
    let f = Fixture::new("matrix-broken");
    f.file("prompt-tests/capital_v1.md", V1);
    f.file("prompt-tests/hello.md", "Hello {name}");
    for (name, text, ..) in BROKEN {
        f.file(&format!("prompt-tests/{name}.evals.toml"), text);
    }
    let out = f.run(&[]);
    out.assert_code(101);
    for (name, _, location, fix) in BROKEN {
        assert_eq!(out.outcome(&format!("{name}::suite_file_error")), "FAILED");
        let error = out.suite(name)["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(location),
            "{name}: {location:?} not in\n{error}"
        );
        assert!(error.contains(fix), "{name}: {fix:?} not in\n{error}");
    }
}
