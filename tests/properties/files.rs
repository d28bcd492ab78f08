//! The crate's files, read as a run reads them: a suite and its dataset, a calibration set and its
//! result, a cassette, a baseline, `prompt-tester.toml` and `.env`, each generated (a valid one
//! mutated, or random bytes) into a scratch crate root. Whatever the bytes, the reader returns, and
//! every problem it reports names the file.

use std::path::Path;

use prompt_tester::testing::cassette::CassetteStore;
use prompt_tester::testing::readers;
use prompt_tester_testkit::child::{Scratch, repo_root};
use proptest::prelude::*;

use super::inputs::{hostile, hostile_text};
use super::{config, returns};

/// A configuration with a judge (calibration sets need one; the example's result file measured this one), suites at the root, and an endpoint
/// nothing listens on (nothing is called).
const CONFIG: &str = r#"suite_roots = ["."]
cassette_dir = "cassettes"

[defaults]
provider = "local"
model = "m"

[judge]
provider = "local"
model = "SmolLM2-135M-Instruct"
max_tokens = 400

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
"#;

/// A file of the example crate (`prompt-tests/`).
fn example(path: &str) -> String {
    let full = repo_root().join("prompt-tests").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// A file of the suite tests' data (`tests/suites/data/`).
fn suite_data(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("tests/suites/data").join(name)).unwrap()
}

/// The first `n` lines of `text`.
fn head(text: &str, n: usize) -> String {
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// A scratch crate root with [`CONFIG`] and the files the example suites name (prompts, a schema,
/// a dataset), so that a valid seed lists without problems.
fn root(name: &str) -> Scratch {
    let scratch = Scratch::new("properties", name);
    scratch.config(CONFIG);
    for file in [
        "capital.md",
        "translate_v1.md",
        "translate_v2.md",
        "golden/phrases.jsonl",
        "schemas/capital.schema.json",
    ] {
        scratch.file(file, &example(file));
    }
    // A few rows of each category: the example's `[gate.categories]` names both.
    let rows = example("golden/questions.jsonl");
    let sentiment = rows.lines().find(|l| l.contains("\"sentiment\"")).unwrap();
    scratch.file(
        "golden/questions.jsonl",
        &format!("{}{sentiment}\n", head(&rows, 12)),
    );
    scratch
}

fn write(root: &Path, relative: &str, bytes: &[u8]) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Every problem names one of `files`.
#[track_caller]
fn each_names(problems: &[String], files: &[&str]) {
    for problem in problems {
        assert!(
            files.iter().any(|f| problem.contains(f)),
            "a problem names none of {files:?}: {problem}"
        );
    }
}

/// When `bytes` are not UTF-8, one of `problems` says where they stop being so.
#[track_caller]
fn not_utf8_is_located(bytes: &[u8], problems: &[String]) {
    if std::str::from_utf8(bytes).is_err() {
        assert!(
            problems
                .iter()
                .any(|p| p.contains("is not UTF-8 text") && p.contains("line ")),
            "no problem locates the bytes that are not UTF-8: {problems:?}"
        );
    }
}

/// The problems a run at `root` lists; the configuration is valid, so a run can start.
fn listing(root: &Path) -> Vec<String> {
    let root = root.to_path_buf();
    returns("listing", move || readers::listing(&root)).unwrap_or_else(|e| panic!("{e}"))
}

const CSV_SUITE: &str = "prompt = \"Where is {city}?\"\ncases_file = \"cases.csv\"\nassert = [{ starts_with = \"{expected}\" }]\n";
const JSONL_SUITE: &str = "prompt = \"{question}\"\ncases_file = \"cases.jsonl\"\nthreshold = 0.6\nassert = [{ icontains = \"{expected}\", weight = 3 }, { max_words = 12, weight = 1 }]\n";
const CSV: &str = "name,category,expected,city\nparis,europe,France,Paris\nrome,europe,Italy,\"Rome, \"\"the eternal\"\"\"\ntokyo,asia,Japan,Tokyo\n";

fn suites() -> Vec<String> {
    let mut seeds: Vec<String> = [
        "assertions.evals.toml",
        "golden.evals.toml",
        "meaning.evals.toml",
        "translate_variants.evals.toml",
    ]
    .iter()
    .map(|f| example(f))
    .collect();
    seeds.extend(
        [
            "drinks.evals.toml",
            "geo.evals.toml",
            "judged.evals.toml",
            "runs.evals.toml",
        ]
        .iter()
        .map(|f| suite_data(f)),
    );
    seeds.push(JSONL_SUITE.replace("cases.jsonl", "golden/questions.jsonl"));
    seeds
}

#[test]
fn a_suite_file_lists_and_every_problem_names_it() {
    let root = root("suite");
    proptest!(config(), |(bytes in hostile(suites().into_iter().map(String::into_bytes).collect()))| {
        write(root.path(), "s.evals.toml", &bytes);
        let problems = listing(root.path());
        each_names(&problems, &["s.evals.toml", "golden/questions.jsonl"]);
        not_utf8_is_located(&bytes, &problems);
    });
}

/// YAML suites: the example, a matrix over a dataset, and the YAML that TOML has no word for (block
/// scalars, anchors, tags, a second document, nulls, flow and block styles mixed).
fn yaml_suites() -> Vec<String> {
    vec![
        example("support.evals.yaml"),
        "prompts: [translate_v1.md, translate_v2.md]\nmodels: [local/m, local/n]\ncases:\n  - name: cat\n    \
         inputs: { phrase: the cat }\n    assert: [{ icontains: chat }]\n"
            .to_string(),
        "prompt: \"{question}\"\ncases_file: golden/questions.jsonl\nthreshold: 0.6\nassert:\n  \
         - icontains: \"{expected}\"\n    weight: 2\n  - max_words: 12\n"
            .to_string(),
        "prompt: |\n  Reply to {message}.\n  Be brief.\nsystem: >\n  You are\n  kind.\nruns: 3\n\
         pass_threshold: 0.6\ntools:\n  - name: get_weather\n    input_schema: { type: object }\ncases:\n  \
         - name: a\n    inputs: { message: !!str 12 }\n    assert:\n      - regex: '^\\d+$'\n      \
         - json_schema: { type: object, required: [answer] }\n      - tool_called: { name: get_weather }\n  \
         - name: b\n    skip: true\n    inputs: &x { message: ~ }\n  - name: c\n    inputs: *x\n---\nx: 1\n"
            .to_string(),
    ]
}

#[test]
fn a_yaml_suite_file_lists_and_every_problem_names_it() {
    let root = root("yaml-suite");
    root.file("s.md", &example("support.md"));
    proptest!(config(), |(bytes in hostile(yaml_suites().into_iter().map(String::into_bytes).collect()))| {
        write(root.path(), "s.evals.yaml", &bytes);
        let problems = listing(root.path());
        each_names(&problems, &["s.evals.yaml", "golden/questions.jsonl"]);
        not_utf8_is_located(&bytes, &problems);
    });
}

#[test]
fn a_dataset_lists_and_every_problem_names_it() {
    let root = root("dataset");
    proptest!(config(), |(jsonl in any::<bool>(), bytes in hostile_text(&[CSV, &head(&example("golden/questions.jsonl"), 16)]))| {
        let (suite, dataset) = if jsonl { (JSONL_SUITE, "cases.jsonl") } else { (CSV_SUITE, "cases.csv") };
        write(root.path(), "s.evals.toml", suite.as_bytes());
        write(root.path(), dataset, &bytes);
        each_names(&listing(root.path()), &[dataset]);
    });
}

#[test]
fn a_calibration_set_lists_and_every_problem_names_it() {
    let root = root("calibration-set");
    proptest!(config(), |(bytes in hostile_text(&[&example("judge_basics.calibration.toml")]))| {
        write(root.path(), "c.calibration.toml", &bytes);
        let problems = listing(root.path());
        each_names(&problems, &["c.calibration.toml"]);
        not_utf8_is_located(&bytes, &problems);
    });
}

#[test]
fn a_calibration_result_is_read_or_refused_naming_it() {
    let root = {
        let root = root("calibration-result");
        root.file(
            "judge_basics.calibration.toml",
            &example("judge_basics.calibration.toml"),
        );
        root
    };
    proptest!(config(), |(bytes in hostile_text(&[&example("judge_basics.calibration.result.json")]))| {
        write(root.path(), "judge_basics.calibration.result.json", &bytes);
        let at = root.path().to_path_buf();
        let (_, errors) = returns("the calibration results", move || readers::calibration_results(&at))
            .unwrap_or_else(|e| panic!("{e}"));
        each_names(&errors, &["judge_basics.calibration.result.json"]);
        not_utf8_is_located(&bytes, &errors);
    });
}

/// What is checked of a file one reader reads alone: written as `file` into a scratch root of its own
/// (`name`), generated from `seeds`, the bytes are read by `read` (given the root), which returns
/// (see [`returns`]); its error, if any, names the file and locates bytes that are not UTF-8.
fn read_or_refused_naming_it<T: Send + 'static>(
    name: &str,
    file: &'static str,
    seeds: &[&str],
    what: &'static str,
    read: fn(&Path) -> Result<T, String>,
) {
    let root = Scratch::new("properties", name);
    proptest!(config(), |(bytes in hostile_text(seeds))| {
        write(root.path(), file, &bytes);
        let at = root.path().to_path_buf();
        let errors: Vec<String> = returns(what, move || read(&at)).err().into_iter().collect();
        each_names(&errors, &[file]);
        not_utf8_is_located(&bytes, &errors);
    });
}

#[test]
fn a_cassette_is_read_or_refused_naming_it() {
    let seeds = [
        example("cassettes/local.capital_of_france.cassette.json"),
        example("cassettes/local.three_colours_as_a_list.cassette.json"),
        head(&example("cassettes/meaning.cassette.json"), 200),
    ];
    let seeds = seeds.each_ref().map(String::as_str);
    read_or_refused_naming_it(
        "cassette",
        "c.cassette.json",
        &seeds,
        "the cassette reader",
        |dir| {
            CassetteStore::new(dir)
                .open("c")
                .map(|c| c.recorded_len())
                .map_err(|e| e.to_string())
        },
    );
}

#[test]
fn a_baseline_is_compared_or_refused_naming_it() {
    read_or_refused_naming_it(
        "baseline",
        "baseline.json",
        &[BASELINE],
        "the baseline reader",
        |root| readers::baseline(&root.join("baseline.json")),
    );
}

#[test]
fn a_configuration_is_read_or_refused_naming_it() {
    let seeds = [CONFIG, &example("prompt-tester.toml")];
    read_or_refused_naming_it(
        "config",
        "prompt-tester.toml",
        &seeds,
        "the configuration reader",
        readers::listing,
    );
}

#[test]
fn a_dotenv_file_is_read_or_refused_naming_it() {
    read_or_refused_naming_it("dotenv", ".env", &[DOTENV], "the .env reader", |root| {
        readers::dotenv(&root.join(".env"))
    });
}

/// The seeds as they are read without a problem: the properties start from valid files.
#[test]
fn the_seeds_read_without_problems() {
    let root = root("seeds");
    root.file(
        "judge_basics.calibration.toml",
        &example("judge_basics.calibration.toml"),
    );
    root.file(
        "judge_basics.calibration.result.json",
        &example("judge_basics.calibration.result.json"),
    );
    for (i, suite) in suites().iter().enumerate() {
        root.file(&format!("s{i}.evals.toml"), suite);
    }
    root.file("d.evals.toml", CSV_SUITE);
    root.file("cases.csv", CSV);
    // The valid YAML seeds; the last one is the hostile one, with its problems on purpose.
    for (i, suite) in yaml_suites().iter().take(3).enumerate() {
        root.file(&format!("y{i}.evals.yaml"), suite);
    }
    root.file("y0.md", &example("support.md"));
    assert_eq!(listing(root.path()), Vec::<String>::new());
    let (shown, errors) = readers::calibration_results(root.path()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(shown.contains("\"set\":\"judge_basics\""), "{shown}");
    assert!(shown.contains("judge-corrected pass rates"), "{shown}");
    root.file(
        "c.cassette.json",
        &example("cassettes/local.capital_of_france.cassette.json"),
    );
    let cassette = CassetteStore::new(root.path()).open("c").unwrap();
    assert_eq!(cassette.recorded_len(), Some(1));
    root.file("baseline.json", BASELINE);
    let compared = readers::baseline(&root.path().join("baseline.json")).unwrap();
    assert!(compared.contains("unchanged"), "{compared}");
    root.file(".env", DOTENV);
    let names = readers::dotenv(&root.path().join(".env")).unwrap().unwrap();
    assert_eq!(names.len(), 5, "{names:?}");
}

/// Found by the property: counts whose sum overflows ended the run in a panic after its trials.
#[test]
fn a_calibration_result_whose_counts_overflow_is_refused_naming_it() {
    let root = root("calibration-overflow");
    root.file(
        "judge_basics.calibration.toml",
        &example("judge_basics.calibration.toml"),
    );
    let result = example("judge_basics.calibration.result.json");
    let counts = "\"true_yes\": 6,";
    assert!(result.contains(counts));
    root.file(
        "judge_basics.calibration.result.json",
        &result.replacen(counts, "\"true_yes\": 4294967295,", 1),
    );
    let (shown, errors) = readers::calibration_results(root.path()).unwrap();
    assert_eq!(shown, "");
    assert_eq!(errors.len(), 1, "{errors:?}");
    prompt_tester_testkit::child::assert_contains(
        &errors[0],
        &[
            "judge_basics.calibration.result.json: cannot read the calibration result (the counts add up to \
             4294967331 verdicts, more than 10000000",
            "at line 19 column 7",
            "it was not rewritten",
        ],
    );
}

/// A baseline with a test and a suite with a case and a category: only the counts a comparison reads.
const BASELINE: &str = r#"{
  "suites": [
    {
      "suite": "geo",
      "runs_passed": 6,
      "runs_total": 8,
      "cases": [{ "case_id": "paris", "runs_passed": 3, "runs_total": 4 }],
      "by_category": { "capital": { "runs_passed": 3, "runs_total": 4 } }
    }
  ],
  "tests": [{ "name": "mostly_passes", "status": "passed", "runs_passed": 20, "runs_total": 20 }]
}
"#;

const DOTENV: &str = "# keys\nOPENAI_API_KEY=sk-test-0123456789\nexport ANTHROPIC_API_KEY=\"sk-ant-0123456789\"\nMULTI='one\ntwo'\nREF=${OPENAI_API_KEY}\nEMPTY=\n";
