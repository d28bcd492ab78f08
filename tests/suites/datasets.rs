//! Golden datasets (`cases_file`, JSON Lines and CSV): every row a trial, `{expected}` in assertions, a
//! malformed row its own failing trial, a broken file the suite's error, `--exact` one row.

use super::*;

const SUITE: &str = "prompt = \"Capital of {country}?\"\n\
                     cases_file = \"golden/capitals.jsonl\"\n\
                     assert = [{ equals = \"{expected}\" }]\n\
                     \n\
                     [[cases]]\n\
                     name = \"inline\"\n\
                     expected = \"Bern\"\n\
                     inputs = { country = \"Switzerland\" }\n";

/// Line by line: the metadata line (1), a blank line (2), then rows from line 3.
const JSONL: &str = r#"{"dataset_version": "2026-06"}

{"id": "france", "category": "europe", "expected": "Paris", "country": "France"}
{"id": "italy", "category": "europe", "expected": "Rome", "country": "Italy"}
{"name": "peru", "category": "americas", "expected": "Lima (PE)", "inputs": {"country": "Peru"}, "assert": [{"regex": "^{expected}$"}, {"max_words": 5}]}
{"id": "broken_json", "country": "Spain"
{"id": "no_country", "expected": "Oslo"}
{"id": "bad_assert", "expected": "Cairo", "country": "Egypt", "assert": [{"containz": "{expected}"}]}
{"id": "later", "skip": "needs a bigger model", "expected": "Canberra"}
{"id": "france", "expected": "Paris", "country": "France"}
"#;

fn fixture(name: &str) -> Fixture {
    let capitals = [
        ("Switzerland", "Bern"),
        ("France", " Paris\n"),
        ("Italy", "Milan"),
        ("Peru", "Lima (PE)"),
    ];
    Fixture::golden(name, SUITE, JSONL, &capitals)
}

#[test]
fn every_row_is_a_trial_checked_against_its_expected_value() {
    let out = fixture("jsonl").run(&[]);
    out.assert_code(101);
    out.assert_statuses(&[
        ("golden::inline", "ok"),
        ("golden::france", "ok"),
        ("golden::italy", "FAILED"),
        // Escaped inside `regex`: the parentheses match literally.
        ("golden::peru", "ok"),
        ("golden::line_6", "FAILED"),
        ("golden::no_country", "FAILED"),
        ("golden::bad_assert", "FAILED"),
        ("golden::later", "ignored (needs a bigger model)"),
        // A name already taken: the row is named by its line.
        ("golden::line_10", "FAILED"),
    ]);
    for (case, says) in [
        (
            "italy",
            "prompt-tests/golden.evals.toml:3: equals: expected exactly \"Rome\"",
        ),
        (
            "no_country",
            "prompt-tests/golden/capitals.jsonl:7: no input `country` for the placeholder {country} of the prompt\n  \
             fix: add a `country` column (CSV) or key (JSON Lines)",
        ),
        (
            "bad_assert",
            "prompt-tests/golden/capitals.jsonl:8: `assert[0].containz`: unknown assertion `containz` (with this \
             case's values filled in)\n  fix: did you mean `contains`?",
        ),
        (
            "line_10",
            "capitals.jsonl:10: a case named `france` already exists in this suite",
        ),
    ] {
        out.assert_failure_has("golden", case, &[says]);
    }
    let line_6 = out.failure("golden", "line_6");
    assert!(
        line_6.starts_with(
            "row `line_6` of prompt-tests/golden/capitals.jsonl (line 6) has 1 problem; it did not run:\n\
             prompt-tests/golden/capitals.jsonl:6: column 40: not JSON: EOF while parsing an object\n"
        ),
        "{line_6}"
    );
    let suite = out.suite("golden");
    assert_eq!(suite["dataset_version"], "2026-06");
    assert_eq!(suite["by_category"]["europe"]["count"], 2, "{suite:#}");
    assert_eq!(suite["by_category"]["americas"]["pass_rate"], 1.0);
    assert_eq!(suite["skipped"], 1);
}

#[test]
fn exact_runs_one_row_and_reads_no_other() {
    let out = fixture("exact").run(&["--exact", "golden::peru"]);
    out.assert_code(0);
    out.assert_statuses(&[("golden::peru", "ok")]);
    // The malformed rows are not even built.
    child::assert_lacks(&out.stdout(), "line_6");
    out.assert_stdout_has("1 passed");
    // A malformed row alone, by its line.
    let out = fixture("exact_line").run(&["--exact", "golden::line_6"]);
    out.assert_fails_at("golden::line_6", &[]);
}

#[test]
fn a_csv_dataset_names_the_column_and_is_versioned_by_its_hash() {
    let mut f = Fixture::new("csv");
    let csv = "name,category,expected,city\n\
               paris,europe,Paris,\"Paris, France\"\n\
               ,europe,Rome,Rome\n\
               lima,americas,Lima,Lima\n";
    f.recorded_suite(
        "cities",
        "prompt = \"Where is {city}?\"\ncases_file = \"cities.csv\"\nassert = [{ starts_with = \"{expected}\" }]\n",
        &[
            ("Where is Paris, France?", "Paris is in France."),
            ("Where is Lima?", "In Peru."),
        ],
    );
    f.file("prompt-tests/cities.csv", csv);
    let out = f.run(&[]);
    out.assert_statuses(&[
        ("cities::paris", "ok"),
        ("cities::line_3", "FAILED"),
        ("cities::lima", "FAILED"),
    ]);
    out.assert_failure_has(
        "cities",
        "line_3",
        &["prompt-tests/cities.csv:3: column 1 (`name`): the row has no name\n  fix: write the case's name in this column"],
    );
    // sha256sum of the CSV text, first 12 hex digits.
    let digest = prompt_tester_sha256_prefix(csv);
    assert_eq!(out.suite("cities")["dataset_version"], digest.as_str());
}

/// The first 12 hex digits of the SHA-256 of `text`, computed by the system's `sha256sum` (an
/// implementation apart from the crate's).
fn prompt_tester_sha256_prefix(text: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..12].to_string()
}

#[test]
fn a_dataset_that_cannot_be_read_is_the_suites_error() {
    let f = Fixture::new("badfile");
    // (suite, its text, what its error says)
    let broken = [
        (
            "missing",
            "prompt = \"Hi\"\ncases_file = \"golden/nope.jsonl\"\n",
            "prompt-tests/missing.evals.toml:2:14: `cases_file`: dataset file `golden/nope.jsonl` not found",
        ),
        (
            "header",
            "prompt = \"Hi {q}\"\ncases_file = \"header.csv\"\n",
            "prompt-tests/header.evals.toml:2:14: `cases_file`: prompt-tests/header.csv:1: the header has no `name` or \
             `id` column",
        ),
        (
            "format",
            "prompt = \"Hi\"\ncases_file = \"cases.xlsx\"\n",
            "`cases.xlsx` is neither JSON Lines nor CSV",
        ),
    ];
    for (suite, text, _) in broken {
        f.file(&format!("prompt-tests/{suite}.evals.toml"), text);
    }
    f.file("prompt-tests/header.csv", "title,q\na,b\n");
    let out = f.run(&[]);
    for (suite, _, error) in broken {
        out.assert_case_failed(suite, "suite_file_error", &[error]);
    }
}
