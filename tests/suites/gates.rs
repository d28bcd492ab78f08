//! Gated datasets (`[gate]`): the rows of a `cases_file` judged as a whole, one trial for the suite
//! and one per category; what a failing gate lists, what `--list` and `--exact` show, one gate per
//! column of a matrix, the reports, and the errors of a `[gate]` that cannot be used.

use prompt_tester_testkit::FakeProvider;

use super::*;

const SUITE: &str = "prompt = \"Capital of {country}?\"\n\
                     cases_file = \"golden/capitals.jsonl\"\n\
                     assert = [{ equals = \"{expected}\" }]\n\
                     \n\
                     [gate]\n\
                     pass_threshold = 0.5\n\
                     \n\
                     [gate.categories]\n\
                     europe = 0.5\n\
                     americas = 1\n";

/// Europe: two of three right (and one skipped); the Americas: one of two.
const JSONL: &str = r#"{"id": "france", "category": "europe", "expected": "Paris", "country": "France"}
{"id": "italy", "category": "europe", "expected": "Rome", "country": "Italy"}
{"id": "spain", "category": "europe", "expected": "Madrid", "country": "Spain"}
{"id": "later", "category": "europe", "skip": "not asked yet", "expected": "Oslo"}
{"id": "peru", "category": "americas", "expected": "Lima", "country": "Peru"}
{"id": "chile", "category": "americas", "expected": "Santiago", "country": "Chile"}
"#;

fn fixture(name: &str) -> Fixture {
    let capitals = [
        ("France", "Paris"),
        ("Italy", "Milan"),
        ("Spain", "Madrid"),
        ("Peru", "Lima"),
        ("Chile", "Valparaiso"),
    ];
    Fixture::golden(name, SUITE, JSONL, &capitals)
}

#[test]
fn gates_pass_and_fail_on_their_share_and_a_failing_one_lists_its_failing_rows() {
    let f = fixture("pass-fail");
    let html = f.root.join("out/report.html");
    let out = f.run(&["--html", html.to_str().unwrap()]);
    out.assert_code(101);
    out.assert_statuses(&[
        // 3 of 5 rows, 3 needed.
        ("golden::gate", "ok"),
        // 2 of 3 (the skipped row is not counted), 2 needed.
        ("golden::gate::europe", "ok"),
        // 1 of 2, both needed.
        ("golden::gate::americas", "FAILED"),
    ]);
    // The rows are samples, not trials.
    child::assert_lacks(&out.stdout(), "test golden::france");
    out.assert_stdout_has("2 passed; 1 failed");
    out.assert_stdout_has(
        "---- golden::gate::americas ----\n[row chile] FAILED: 1 of 1 assertion failed:\n    - \
         prompt-tests/golden.evals.toml:3: equals: expected exactly \"Santiago\"",
    );
    out.assert_stdout_has("1/2 rows passed (50%, 95% CI 9–91%; need 2, pass threshold 100%)\n");
    out.assert_stderr_has(
        "gate golden::gate::europe: 2/3 rows passed (67%, 95% CI 21–94%; need 2, pass threshold 50%), 1 row skipped \
         (not counted): passed, 1 row failing",
    );
    out.assert_stderr_has("gate golden::gate: 3/5 rows passed (60%, 95% CI 23–88%; need 3, pass threshold 50%), 1 row skipped (not counted): passed, 2 rows failing");

    // The JSON report: every row once as a case, each gate with its rate and failing rows.
    let suite = out.suite("golden");
    let cases: Vec<&str> = suite["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case_id"].as_str().unwrap())
        .collect();
    let mut sorted = cases.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["chile", "france", "italy", "peru", "spain"],
        "{suite:#}"
    );
    assert_eq!(
        (suite["passed"].clone(), suite["total"].clone()),
        (json!(3), json!(5))
    );
    assert_eq!(suite["skipped"], 1);
    assert_eq!(suite["by_category"]["europe"]["count"], 3);
    out.assert_failure_has(
        "golden",
        "italy",
        &[
            "prompt-tests/golden.evals.toml:3: equals: expected exactly \"Rome\"",
            "saw \"Milan\"",
        ],
    );
    let gate = child::entry(&suite["gates"], "gate", "gate::americas");
    assert_eq!(gate["status"], "failed");
    assert_eq!(gate["category"], "americas");
    assert_eq!(
        (
            gate["rows_passed"].clone(),
            gate["rows_total"].clone(),
            gate["rows_required"].clone()
        ),
        (json!(1), json!(2), json!(2))
    );
    assert_eq!(gate["pass_rate"], 0.5);
    assert!(gate["ci_low"].as_f64().unwrap() < 0.1, "{gate:#}");
    assert_eq!(gate["failing_rows"][0]["case_id"], "chile");
    let europe = child::entry(&suite["gates"], "gate", "gate::europe");
    assert_eq!(
        (europe["status"].clone(), europe["rows_skipped"].clone()),
        (json!("passed"), json!(1))
    );
    assert_eq!(europe["failing_rows"][0]["case_id"], "italy");
    let report = out.report.as_ref().unwrap();
    assert_eq!(report["totals"]["failed"], 1, "gates are the trials");

    // JUnit: one test case per gate, its rows as properties and its failing rows as its output.
    let junit = out.junit.as_deref().unwrap();
    child::assert_contains(
        junit,
        &[
            "<testcase name=\"golden::gate::americas\"",
            "<property name=\"gate_rows_failing\" value=\"1\"/>",
            "<property name=\"gate_rows_skipped\" value=\"1\"/>",
            "[row italy] FAILED: 1 of 1 assertion failed:",
        ],
    );
    child::assert_lacks(junit, "<testcase name=\"golden::france\"");

    // The HTML page holds each gate with its rows and their samples.
    let page = std::fs::read_to_string(&html).unwrap();
    let data = prompt_tester::testing::read_html_data(&page).unwrap();
    let records = data["records"].as_array().unwrap();
    let americas = records
        .iter()
        .find(|r| r["name"] == "golden::gate::americas")
        .unwrap();
    let rows = americas["gate"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["samples"][0]["output"], "Valparaiso");
    assert!(
        records.iter().all(|r| r["gate"].is_object()),
        "only gates are trials"
    );
}

#[test]
fn a_gated_suite_lists_its_gates_and_exact_still_runs_one_row() {
    let out = fixture("list").run(&["--list"]);
    out.assert_code(0);
    assert_eq!(
        out.listed(),
        [
            "golden::gate",
            "golden::gate::americas",
            "golden::gate::europe"
        ]
    );
    // `--list --ignored` lists no row either.
    let out = fixture("list-ignored").run(&["--list", "--ignored"]);
    assert_eq!(out.listed(), Vec::<String>::new());

    let out = fixture("exact-row").run(&["--exact", "golden::italy"]);
    out.assert_fails_at("golden::italy", &["equals: expected exactly \"Rome\""]);
    out.assert_stdout_has("1 failed");
    let out = fixture("exact-gate").run(&["--exact", "golden::gate::europe"]);
    out.assert_code(0);
    out.assert_statuses(&[("golden::gate::europe", "ok")]);
    out.assert_stdout_has("1 passed");
}

#[test]
fn an_errored_or_broken_row_fails_the_gate_whatever_the_share() {
    let mut f = Fixture::new("errored");
    f.recorded_suite(
        "golden",
        "prompt = \"Capital of {country}?\"\ncases_file = \"rows.jsonl\"\nassert = [{ equals = \"{expected}\" }]\n\
         [gate]\npass_threshold = 0.01\n",
        &[("Capital of France?", "Paris")],
    );
    f.file(
        "prompt-tests/rows.jsonl",
        "{\"id\": \"france\", \"expected\": \"Paris\", \"country\": \"France\"}\n\
         {\"id\": \"no_country\", \"expected\": \"Oslo\"}\n",
    );
    let out = f.run(&[]);
    out.assert_fails_at(
        "golden::gate",
        &[
            "[row no_country] ERROR: row `no_country` of prompt-tests/rows.jsonl (line 2) has 1 problem; it did \
             not run:",
            "1/2 rows passed, 1 errored (50%, 95% CI 9–91%; need 1, pass threshold 1%): an errored row fails the gate",
        ],
    );
    let gate = child::entry(&out.suite("golden")["gates"], "gate", "gate");
    assert_eq!(gate["status"], "errored");
}

#[test]
fn a_gate_that_cannot_be_used_is_the_suite_file_s_error_located() {
    let f = fixture("bad");
    f.file(
        "prompt-tests/golden.evals.toml",
        &SUITE.replace("americas = 1", "america = 1"),
    );
    let out = f.run(&[]);
    out.assert_fails_at(
        "golden::suite_file_error",
        &[
            "prompt-tests/golden.evals.toml:10:1: `gate.categories.america`: no row of \
             prompt-tests/golden/capitals.jsonl has the category `america`",
            "fix: did you mean `americas`? (the categories there: americas, europe)",
        ],
    );
}

/// Two models over two rows: `a` knows France only, `b` nothing.
const MATRIX: &str = "prompt = \"Capital of {country}?\"\n\
                      models = [\"fake/a\", \"fake/b\"]\n\
                      cases_file = \"rows.jsonl\"\n\
                      assert = [{ contains = \"{expected}\" }]\n\
                      [gate]\npass_threshold = 0.5\n";

#[test]
fn a_matrix_has_one_gate_per_column_recorded_per_row_and_replayed() {
    let fake = paris_and_lyon();
    let f = Fixture::calling("matrix", &fake, "auto");
    f.file("prompt-tests/golden.evals.toml", MATRIX);
    f.file(
        "prompt-tests/rows.jsonl",
        "{\"id\": \"france\", \"expected\": \"Paris\", \"country\": \"France\"}\n\
         {\"id\": \"italy\", \"expected\": \"Rome\", \"country\": \"Italy\"}\n",
    );
    let listed = f.run(&["--list"]);
    assert_eq!(
        listed.listed(),
        ["golden::gate[fake/a]", "golden::gate[fake/b]"]
    );
    let statuses = [
        ("golden::gate[fake/a]", "ok"),
        ("golden::gate[fake/b]", "FAILED"),
    ];
    let first = f.run(&[]);
    first.assert_statuses(&statuses);
    assert_eq!(fake.requests().len(), 4, "each row once per model");
    first.assert_stdout_has("[row italy[fake/b]] FAILED:");
    // The recordings are the rows' own, so a row alone replays them too.
    let recorded = f.recorded("golden");
    for row in ["golden::france[fake/a]", "golden::italy[fake/b]"] {
        assert!(
            recorded.iter().any(|e| e["test"] == row),
            "{row} in {recorded:#?}"
        );
    }
    let mut replay = f;
    replay.mode = "replay";
    let again = replay.run(&[]);
    again.assert_statuses(&statuses);
    assert_eq!(fake.requests().len(), 4, "replayed without a call");
    let row = replay.run(&["--exact", "golden::france[fake/a]"]);
    row.assert_code(0);
    assert_eq!(fake.requests().len(), 4);
    // The matrix shows each gate's rate per column.
    let matrix = &again.report.as_ref().unwrap()["matrix"];
    assert!(matrix.to_string().contains("golden::gate"), "{matrix:#}");
}

#[test]
fn the_gates_of_a_suite_call_each_row_once() {
    let fake = FakeProvider::builder()
        .answer_prompt("Capital of France?", "Paris")
        .start();
    let f = Fixture::calling("shared", &fake, "off");
    f.file(
        "prompt-tests/golden.evals.toml",
        "prompt = \"Capital of {country}?\"\ncases_file = \"rows.jsonl\"\nassert = [{ contains = \"{expected}\" }]\n\
         [gate]\npass_threshold = 1\n[gate.categories]\neurope = 1\n",
    );
    f.file(
        "prompt-tests/rows.jsonl",
        "{\"id\": \"france\", \"category\": \"europe\", \"expected\": \"Paris\", \"country\": \"France\"}\n",
    );
    let out = f.run(&[]);
    out.assert_code(0);
    out.assert_statuses(&[("golden::gate", "ok"), ("golden::gate::europe", "ok")]);
    assert_eq!(
        fake.requests().len(),
        1,
        "two gates count the row; it is called once"
    );
}
