//! TOML suites end to end: a temporary crate with suite files and cassettes holding canned answers,
//! run by the real harness in a child process (the engine is one per process), then checked through
//! the exit code, the console, the JSON report and the JUnit XML.

use std::collections::BTreeMap;
use std::path::PathBuf;

use prompt_tester::cassette::{Entry, entry_key};
use prompt_tester::{CompletionRequest, CompletionResult, PromptRun, toml};
use prompt_tester_testkit::child::{self, Child};
use prompt_tester_testkit::{FakeProvider, Reply, Wire};
use serde_json::{Value, json};

/// Set in the child process: the harness arguments, as JSON.
const CHILD_ARGS: &str = "PT_SUITES_CHILD_ARGS";

/// In the child process this test is the whole program: it runs the harness and exits with its code.
#[test]
#[ignore = "helper: the other tests run it in a child process"]
fn child_harness() {
    child::run_as_child(CHILD_ARGS, |args| {
        prompt_tester::Harness::new().run_with_args(args)
    });
}

/// A custom assertion: `{ min_sentences = N }`.
fn min_sentences(run: &PromptRun, value: &toml::Value) -> Result<(), String> {
    let want = value
        .as_integer()
        .ok_or("min_sentences needs a whole number")? as usize;
    let seen = run.output.matches(['.', '!', '?']).count();
    if seen >= want {
        Ok(())
    } else {
        Err(format!(
            "expected at least {want} sentences, counted {seen}"
        ))
    }
}
prompt_tester::register_assertion!("min_sentences", min_sentences);

const PROVIDER: &str = "fake";
const MODEL: &str = "fake-model";
const MAX_TOKENS: u32 = 64;
const JUDGE_MODEL: &str = "judge-model";
const SECRET: &str = "sk-test-0123456789abcdef";

/// A throwaway crate root with `prompt-tester.toml`, suites and cassettes.
struct Fixture {
    root: PathBuf,
    cassettes: BTreeMap<String, Vec<Entry>>,
    /// `PROMPT_TESTER_CASSETTE` for the child: `replay` unless a test calls a server.
    mode: &'static str,
    /// More variables for the child (set after the inherited ones are removed).
    env: Vec<(&'static str, &'static str)>,
}

/// What a child run left.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    report: Option<Value>,
    junit: Option<String>,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let root = std::env::temp_dir().join(format!("pt-suites-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("prompt-tests")).unwrap();
        let fixture = Self {
            root,
            cassettes: BTreeMap::new(),
            mode: "replay",
            env: Vec::new(),
        };
        fixture.configure("http://127.0.0.1:9/v1");
        fixture
    }

    /// Writes `prompt-tester.toml` with the `fake` provider at `base_url` (one attempt per call), which
    /// also judges with `judge-model`.
    fn configure(&self, base_url: &str) {
        self.file(
            "prompt-tester.toml",
            &format!(
                r#"
[retry]
max_attempts = 1

[defaults]
provider = "{PROVIDER}"
model = "{MODEL}"
max_tokens = {MAX_TOKENS}

[judge]
provider = "{PROVIDER}"
model = "{JUDGE_MODEL}"

[providers.{PROVIDER}]
base_url = "{base_url}"

[prices."{MODEL}"]
input_mtok = 1.0
output_mtok = 2.0
"#
            ),
        );
    }

    fn file(&self, relative: &str, text: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Records `result` as the answer to `prompt` (sent as-is) for run `run` of a case of `suite`.
    fn answer_with(
        &mut self,
        suite: &str,
        request: CompletionRequest,
        run: u32,
        result: CompletionResult,
        latency_ms: u64,
    ) {
        let entry = Entry {
            key: entry_key(PROVIDER, &request, run),
            test: suite.to_string(),
            run,
            role: "subject".into(),
            provider: PROVIDER.into(),
            model: request.model.clone(),
            request,
            response: result,
            latency_ms,
            recorded_at: "2025-01-01T00:00:00Z".into(),
        };
        self.cassettes
            .entry(suite.to_string())
            .or_default()
            .push(entry);
    }

    /// The usual answer: the default model and settings, 10 tokens in, 20 out, 500 ms.
    fn answer(&mut self, suite: &str, prompt: &str, run: u32, output: &str) {
        let request = CompletionRequest::new(MODEL, prompt, MAX_TOKENS);
        self.answer_with(
            suite,
            request,
            run,
            CompletionResult::new(output, 10, 20),
            500,
        );
    }

    fn run(&self, args: &[&str]) -> Outcome {
        for (suite, entries) in &self.cassettes {
            let body = json!({ "version": 1, "entries": entries });
            let stem = suite.replace("::", ".");
            self.file(
                &format!("prompt-tests/cassettes/{stem}.cassette.json"),
                &serde_json::to_string_pretty(&body).unwrap(),
            );
        }
        let report = self.root.join("out/report.json");
        let junit = self.root.join("out/junit.xml");
        let _ = std::fs::remove_file(&report);
        let _ = std::fs::remove_file(&junit);
        let mut argv = vec!["prompts".to_string()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv.extend([
            "--report".into(),
            report.display().to_string(),
            "--junit".into(),
            junit.display().to_string(),
        ]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        // The clean environment drops `CI` too: `auto` never records under CI, and these tests choose
        // their mode themselves.
        let run = Child::harness(CHILD_ARGS, &argv)
            .root(&self.root)
            .env("PROMPT_TESTER_CASSETTE", self.mode)
            .env("PT_FAKE_API_KEY", SECRET)
            .envs(&self.env)
            .run();
        Outcome {
            code: run.code().unwrap_or(-1),
            // The child's own libtest prints `test child_harness ... ` before the harness takes over.
            stdout: run.stdout().replace("test child_harness ... ", "\n"),
            stderr: run.stderr(),
            report: std::fs::read_to_string(&report)
                .ok()
                .map(|t| serde_json::from_str(&t).expect("the report is JSON")),
            junit: std::fs::read_to_string(&junit).ok(),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl Outcome {
    /// The console line of a trial: `ok`, `FAILED` or `ignored...`.
    fn status_of(&self, trial: &str) -> String {
        child::outcome(&self.stdout, trial)
            .unwrap_or_else(|| panic!("no line for {trial} in:\n{}", self.stdout))
    }

    fn suite(&self, name: &str) -> &Value {
        let report = self.report.as_ref().expect("a JSON report was written");
        report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["suite"] == name)
            .unwrap_or_else(|| panic!("no suite {name} in the report: {report:#}"))
    }

    fn failure(&self, suite: &str, case: &str) -> String {
        let failures = self.suite(suite)["failures"].as_array().unwrap();
        failures
            .iter()
            .find(|f| f["case_id"] == case)
            .unwrap_or_else(|| {
                panic!(
                    "no failure {case} in {suite}: {failures:#?}\n{}",
                    self.stdout
                )
            })["failure_reason"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn context(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// One case of the assertion-kinds suite: its assertions, the canned answer, and what must come out.
struct Kind {
    case: &'static str,
    category: &'static str,
    extra: &'static str,
    assert: &'static str,
    output: &'static str,
    pass: bool,
    says: &'static [&'static str],
}

const fn kind(
    case: &'static str,
    category: &'static str,
    assert: &'static str,
    output: &'static str,
    pass: bool,
    says: &'static [&'static str],
) -> Kind {
    Kind {
        case,
        category,
        extra: "",
        assert,
        output,
        pass,
        says,
    }
}

const KINDS: &[Kind] = &[
    kind(
        "contains_pass",
        "text",
        r#"{ contains = ["Paris", "France"] }"#,
        "Paris is in France.",
        true,
        &[],
    ),
    kind(
        "contains_fail",
        "text",
        r#"{ contains = ["Paris", "Lyon"] }"#,
        "Paris is in France.",
        false,
        &[
            r#"contains: expected the output to contain all of "Paris", "Lyon" (missing "Lyon"); saw "Paris is in France.""#,
        ],
    ),
    kind(
        "not_contains_pass",
        "text",
        r#"{ not_contains = ["banana", "kiwi"] }"#,
        "Paris is in France.",
        true,
        &[],
    ),
    kind(
        "not_contains_fail",
        "text",
        r#"{ not_contains = "France" }"#,
        "Paris is in France.",
        false,
        &[
            r#"not_contains: expected the output not to contain "France"; saw "France" at character 13"#,
        ],
    ),
    kind(
        "icontains_pass",
        "text",
        r#"{ icontains = "PARIS" }"#,
        "paris is lovely",
        true,
        &[],
    ),
    kind(
        "icontains_fail",
        "text",
        r#"{ icontains = "berlin" }"#,
        "paris is lovely",
        false,
        &[r#"icontains: expected the output to contain "berlin" ignoring case (missing "berlin")"#],
    ),
    kind(
        "regex_pass",
        "text",
        r#"{ regex = '^Paris\b' }"#,
        "Intro line\nParis is lovely",
        true,
        &[],
    ),
    kind(
        "regex_fail",
        "text",
        r#"{ regex = '^\d+$' }"#,
        "forty-two",
        false,
        &[r#"regex: expected a match for /^\d+$/; saw "forty-two""#],
    ),
    kind(
        "equals_pass",
        "text",
        r#"{ equals = "42" }"#,
        "  42\n",
        true,
        &[],
    ),
    kind(
        "equals_fail",
        "text",
        r#"{ equals = "41" }"#,
        "42",
        false,
        &[r#"equals: expected exactly "41" (output stripped of surrounding whitespace); saw "42""#],
    ),
    kind(
        "starts_with_pass",
        "text",
        r#"{ starts_with = "Dear" }"#,
        "\n Dear Ann, hello.",
        true,
        &[],
    ),
    kind(
        "starts_with_fail",
        "text",
        r#"{ starts_with = "Dear" }"#,
        "Hi Ann",
        false,
        &[r#"starts_with: expected the output to start with "Dear"; saw "Hi Ann""#],
    ),
    kind(
        "ends_with_pass",
        "text",
        r#"{ ends_with = "Regards." }"#,
        "Thanks. Regards.\n",
        true,
        &[],
    ),
    kind(
        "ends_with_fail",
        "text",
        r#"{ ends_with = "Regards." }"#,
        "Thanks. Bye.",
        false,
        &[r#"ends_with: expected the output to end with "Regards."; saw "Thanks. Bye.""#],
    ),
    kind(
        "is_json_pass",
        "json",
        "{ is_json = true }",
        r#"{"a": 1}"#,
        true,
        &[],
    ),
    kind(
        "is_json_fail",
        "json",
        "{ is_json = true }",
        "```json\n{}\n```",
        false,
        &[
            "is_json: expected the output to be JSON; saw",
            "(the JSON is wrapped in a ``` code fence)",
        ],
    ),
    kind(
        "not_json_pass",
        "json",
        "{ is_json = false }",
        "hello there",
        true,
        &[],
    ),
    kind(
        "not_json_fail",
        "json",
        "{ is_json = false }",
        "[1, 2]",
        false,
        &[r#"is_json: expected output that is not JSON; saw valid JSON: "[1, 2]""#],
    ),
    kind(
        "schema_pass",
        "json",
        r#"{ json_schema = { type = "object", required = ["answer"], properties = { answer = { type = "string" } } } }"#,
        r#"{"answer": "yes"}"#,
        true,
        &[],
    ),
    kind(
        "schema_fail",
        "json",
        r#"{ json_schema = { type = "object", required = ["answer"], properties = { answer = { type = "string" } } } }"#,
        r#"{"answer": 3}"#,
        false,
        &[
            r#"json_schema: expected JSON that follows the schema; saw /answer: 3 is not of type "string""#,
        ],
    ),
    kind(
        "schema_file_pass",
        "json",
        r#"{ json_schema = "schemas/answer.json" }"#,
        r#"{"answer": "yes"}"#,
        true,
        &[],
    ),
    kind(
        "schema_file_fail",
        "json",
        r#"{ json_schema = "schemas/answer.json" }"#,
        "no json",
        false,
        &["json_schema: expected JSON that follows the schema; saw output that is not JSON"],
    ),
    kind(
        "latency_pass",
        "limits",
        "{ max_latency = 2 }",
        "fast",
        true,
        &[],
    ),
    kind(
        "latency_fail",
        "limits",
        "{ max_latency = 0.25 }",
        "slow",
        false,
        &["max_latency: expected at most 0.25s; saw 0.500s (recorded latency)"],
    ),
    // 10 tokens in at $1/M and 20 out at $2/M: $0.00005.
    kind(
        "cost_pass",
        "limits",
        "{ max_cost = 0.001 }",
        "cheap",
        true,
        &[],
    ),
    kind(
        "cost_fail",
        "limits",
        "{ max_cost = 0.00001 }",
        "dear",
        false,
        &["max_cost: expected at most $0.00001; saw $0.000050"],
    ),
    Kind {
        case: "cost_unpriced",
        category: "limits",
        extra: "model = \"unpriced-model\"\n",
        assert: "{ max_cost = 0.00001 }",
        output: "unknown price",
        pass: true,
        says: &[],
    },
    kind(
        "tokens_pass",
        "limits",
        "{ max_tokens = 20 }",
        "twenty tokens",
        true,
        &[],
    ),
    kind(
        "tokens_fail",
        "limits",
        "{ max_tokens = 19 }",
        "twenty tokens",
        false,
        &["max_tokens: expected at most 19 completion tokens; saw 20"],
    ),
    kind(
        "words_pass",
        "limits",
        "{ max_words = 3 }",
        "one two  three\n",
        true,
        &[],
    ),
    kind(
        "words_fail",
        "limits",
        "{ max_words = 2 }",
        "one two three",
        false,
        &[r#"max_words: expected at most 2 words; saw 3 words: "one two three""#],
    ),
    kind(
        "custom_pass",
        "custom",
        "{ min_sentences = 2 }",
        "One. Two!",
        true,
        &[],
    ),
    kind(
        "custom_fail",
        "custom",
        "{ min_sentences = 3 }",
        "One. Two!",
        false,
        &["min_sentences: expected at least 3 sentences, counted 2 (value 3)"],
    ),
    // The deterministic check fails, so the judge (none is configured) is not asked at all.
    kind(
        "judge_not_asked",
        "judge",
        r#"{ contains = "zzz" }, { judge = "The reply is polite." }"#,
        "Hello.",
        false,
        &[
            "2 of 2 assertions failed:",
            "judge: not asked, the case fails anyway",
        ],
    ),
    Kind {
        case: "weights_pass",
        category: "score",
        extra: "threshold = 0.7\n",
        assert: r#"{ contains = "Paris", weight = 3 }, { contains = "Lyon" }"#,
        output: "Paris",
        pass: true,
        says: &[],
    },
    Kind {
        case: "weights_fail",
        category: "score",
        extra: "threshold = 0.8\n",
        assert: r#"{ contains = "Paris", weight = 3 }, { contains = "Lyon" }"#,
        output: "Paris",
        pass: false,
        says: &[
            "score 0.75 is below the threshold 0.8 (1 of 2 assertions failed; weight 3 of 4 passed):",
            r#"contains: expected the output to contain "Lyon"; saw "Paris""#,
        ],
    },
    Kind {
        case: "zero_weight",
        category: "score",
        extra: "",
        assert: r#"{ contains = "Paris" }, { contains = "Lyon", weight = 0 }"#,
        output: "Paris",
        pass: false,
        says: &["1 of 2 assertions failed:"],
    },
];

const PROMPT: &str = "Answer the question: {question}";

fn kinds_suite(f: &mut Fixture) {
    let mut toml = format!(
        "prompt = {PROMPT:?}\nprompt_id = \"qa\"\nprompt_version = \"v2\"\ndataset_version = 7\n"
    );
    for k in KINDS {
        toml.push_str(&format!(
            "\n[[cases]]\nname = \"{}\"\ncategory = \"{}\"\ninputs = {{ question = \"{}\" }}\n{}assert = [{}]\n",
            k.case, k.category, k.case, k.extra, k.assert
        ));
        let prompt = PROMPT.replace("{question}", k.case);
        let model = if k.extra.contains("unpriced-model") {
            "unpriced-model"
        } else {
            MODEL
        };
        let request = CompletionRequest::new(model, prompt, MAX_TOKENS);
        let latency = if k.case == "latency_fail" { 500 } else { 100 };
        f.answer_with(
            "kinds",
            request,
            1,
            CompletionResult::new(k.output, 10, 20),
            latency,
        );
    }
    toml.push_str("\n[[cases]]\nname = \"later\"\ncategory = \"text\"\nskip = \"waiting on the new policy\"\n");
    f.file("prompt-tests/kinds.evals.toml", &toml);
    f.file(
        "prompt-tests/schemas/answer.json",
        r#"{ "type": "object", "required": ["answer"], "properties": { "answer": { "type": "string" } } }"#,
    );
}

#[test]
fn every_assertion_kind_passes_and_fails_with_its_message() {
    let mut f = Fixture::new("kinds");
    kinds_suite(&mut f);
    let out = f.run(&[]);
    assert_eq!(out.code, 101, "{}", out.context());
    for k in KINDS {
        let trial = format!("kinds::{}", k.case);
        let status = out.status_of(&trial);
        if k.pass {
            assert_eq!(status, "ok", "{trial} should pass\n{}", out.context());
        } else {
            assert_eq!(status, "FAILED", "{trial} should fail\n{}", out.context());
            let reason = out.failure("kinds", k.case);
            for says in k.says {
                assert!(reason.contains(says), "{trial}: {says:?} not in {reason:?}");
            }
            // Every failing assertion names the line of the suite where it is written.
            assert!(
                reason.contains("prompt-tests/kinds.evals.toml:"),
                "{reason}"
            );
        }
    }
    assert!(
        out.status_of("kinds::later").starts_with("ignored"),
        "{}",
        out.context()
    );
    assert!(
        out.stderr
            .contains("max_cost passes without a check: the price of unpriced-model is unknown"),
        "{}",
        out.context()
    );
    // The stderr summary lists the cases with their cost.
    assert!(
        out.stderr.contains("prompt-tester summary"),
        "{}",
        out.context()
    );
}

/// On a `free = true` endpoint every model costs $0, even one the price table does not know:
/// `max_cost` is checked without a warning, and neither the summary nor the report says "unpriced".
#[test]
fn a_free_endpoint_prices_every_model_at_zero() {
    let mut f = Fixture::new("free");
    f.file(
        "prompt-tester.toml",
        &format!(
            "[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"self-hosted-model\"\nmax_tokens = {MAX_TOKENS}\n\n\
             [providers.{PROVIDER}]\nbase_url = \"http://127.0.0.1:9/v1\"\nfree = true\n"
        ),
    );
    f.file(
        "prompt-tests/free.evals.toml",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"hi\"\nassert = [{ max_cost = 0.0 }]\n",
    );
    let request = CompletionRequest::new("self-hosted-model", "Say hi", MAX_TOKENS);
    f.answer_with("free", request, 1, CompletionResult::new("hi", 10, 20), 100);
    let out = f.run(&[]);
    assert_eq!(out.code, 0, "{}", out.context());
    assert_eq!(out.status_of("free::hi"), "ok", "{}", out.context());
    assert!(!out.stderr.contains("unpriced"), "{}", out.context());
    assert!(!out.stderr.contains("warning"), "{}", out.context());
    let row = out
        .stderr
        .lines()
        .find(|l| l.starts_with("free::hi "))
        .unwrap_or_else(|| panic!("no summary row: {}", out.context()));
    assert!(row.contains("$0.00000"), "{row}");
    let report = out.report.as_ref().expect("a JSON report");
    let usage = &report["suites"][0]["usage"];
    assert_eq!(usage["subject"]["cost_usd"], json!(0.0), "{usage}");
    assert_eq!(usage["unpriced"], json!([]), "{usage}");
}

#[test]
fn reports_hold_suites_categories_failures_and_junit_properties() {
    let mut f = Fixture::new("reports");
    kinds_suite(&mut f);
    // A second suite whose answer quotes a secret: the reports must not.
    f.file(
        "prompt-tests/leak.evals.toml",
        "prompt = \"Repeat the key\"\n[[cases]]\nname = \"quote\"\nassert = [{ contains = \"nothing\" }]\n",
    );
    f.answer("leak", "Repeat the key", 1, &format!("the key is {SECRET}"));
    let out = f.run(&[]);
    let report = out
        .report
        .as_ref()
        .unwrap_or_else(|| panic!("no report\n{}", out.context()));
    let raw = serde_json::to_string(report).unwrap();
    assert!(!raw.contains(SECRET), "the JSON report leaks the key");
    assert!(raw.contains("[REDACTED:PT_FAKE_API_KEY]"), "{raw}");

    let kinds = out.suite("kinds");
    let passed = KINDS.iter().filter(|k| k.pass).count();
    assert_eq!(kinds["prompt_id"], "qa");
    assert_eq!(kinds["prompt_version"], "v2");
    assert_eq!(kinds["dataset_version"], "7");
    assert_eq!(kinds["file"], "prompt-tests/kinds.evals.toml");
    assert_eq!(kinds["passed"], passed);
    assert_eq!(kinds["total"], KINDS.len());
    assert_eq!(kinds["skipped"], 1);
    let rate = kinds["pass_rate"].as_f64().unwrap();
    assert!((rate - passed as f64 / KINDS.len() as f64).abs() < 1e-9);
    assert!(kinds["timestamp"].as_str().unwrap().ends_with('Z'));
    for category in ["text", "json", "limits", "custom", "judge", "score"] {
        let of: Vec<&Kind> = KINDS.iter().filter(|k| k.category == category).collect();
        let entry = &kinds["by_category"][category];
        assert_eq!(entry["count"], of.len(), "{category}");
        let want = of.iter().filter(|k| k.pass).count() as f64 / of.len() as f64;
        assert!(
            (entry["pass_rate"].as_f64().unwrap() - want).abs() < 1e-9,
            "{category}: {entry}"
        );
    }
    let failures = kinds["failures"].as_array().unwrap();
    assert_eq!(failures.len(), KINDS.iter().filter(|k| !k.pass).count());
    let words = failures
        .iter()
        .find(|f| f["case_id"] == "words_fail")
        .unwrap();
    assert_eq!(words["category"], "limits");
    assert_eq!(words["output_preview"], "one two three");
    assert_eq!(kinds["usage"]["subject"]["calls"], KINDS.len());
    assert_eq!(kinds["usage"]["subject"]["replayed"], KINDS.len());
    assert_eq!(
        report["tests"].as_array().unwrap().len(),
        0,
        "no #[prompt_test] in this binary"
    );
    assert_eq!(report["totals"]["ignored"], 1);
    assert_eq!(report["totals"]["passed"], passed);

    let xml = out.junit.as_deref().expect("a JUnit report was written");
    assert!(!xml.contains(SECRET), "the JUnit report leaks the key");
    let junit = quick_junit::Report::deserialize_from_str(xml).expect("valid JUnit XML");
    let suite = junit
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "kinds")
        .expect("a kinds testsuite");
    assert_eq!(suite.test_cases.len(), KINDS.len() + 1);
    let case = |name: &str| {
        suite
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap()
    };
    let prop = |c: &quick_junit::TestCase, name: &str| {
        c.properties
            .iter()
            .find(|p| p.name.as_str() == name)
            .map(|p| p.value.as_str().to_string())
    };
    let cost = case("kinds::cost_pass");
    assert!(matches!(
        cost.status,
        quick_junit::TestCaseStatus::Success { .. }
    ));
    assert_eq!(prop(cost, "runs").as_deref(), Some("1"));
    assert_eq!(prop(cost, "pass_rate").as_deref(), Some("1.0000"));
    assert_eq!(prop(cost, "subject_input_tokens").as_deref(), Some("10"));
    assert_eq!(prop(cost, "subject_output_tokens").as_deref(), Some("20"));
    assert_eq!(prop(cost, "subject_cost_usd").as_deref(), Some("0.000050"));
    assert_eq!(prop(cost, "category").as_deref(), Some("limits"));
    // An unpriced model's cost is unknown: absent, never 0.000000.
    let unpriced = case("kinds::cost_unpriced");
    assert_eq!(prop(unpriced, "subject_cost_usd"), None);
    assert_eq!(
        prop(unpriced, "unpriced_models").as_deref(),
        Some("fake/unpriced-model")
    );
    assert_eq!(prop(unpriced, "subject_calls").as_deref(), Some("1"));
    match &case("kinds::regex_fail").status {
        quick_junit::TestCaseStatus::NonSuccess {
            kind, description, ..
        } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Failure);
            assert!(
                description
                    .as_ref()
                    .unwrap()
                    .as_str()
                    .contains("regex: expected a match")
            );
        }
        other => panic!("regex_fail is {other:?}"),
    }
    match &case("kinds::later").status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => {
            assert_eq!(
                message.as_ref().unwrap().as_str(),
                "waiting on the new policy"
            )
        }
        other => panic!("later is {other:?}"),
    }
    assert!(junit.test_suites.iter().any(|s| s.name.as_str() == "leak"));
}

#[test]
fn runs_and_pass_threshold_make_one_trial_with_single_run_trials() {
    let mut f = Fixture::new("runs");
    f.file(
        "prompt-tests/runs.evals.toml",
        r#"prompt = "Say yes: {n}"
runs = 3
pass_threshold = 0.6

[[cases]]
name = "mostly"
inputs = { n = "1" }
assert = [{ contains = "yes" }]

[[cases]]
name = "rarely"
inputs = { n = "2" }
assert = [{ contains = "yes" }]

[[cases]]
name = "once"
runs = 1
inputs = { n = "3" }
assert = [{ contains = "yes" }]
"#,
    );
    for (run, output) in [(1, "yes"), (2, "no"), (3, "yes")] {
        f.answer("runs", "Say yes: 1", run, output);
    }
    for (run, output) in [(1, "no"), (2, "nope"), (3, "yes")] {
        f.answer("runs", "Say yes: 2", run, output);
    }
    f.answer("runs", "Say yes: 3", 1, "yes");

    let list = f.run(&["--list"]);
    for trial in [
        "runs::mostly: test",
        "runs::mostly::run_1: test",
        "runs::mostly::run_3: test",
        "runs::once: test",
    ] {
        assert!(
            list.stdout.lines().any(|l| l == trial),
            "{trial} not listed\n{}",
            list.context()
        );
    }
    assert!(
        !list.stdout.contains("runs::once::run_1"),
        "{}",
        list.context()
    );

    let out = f.run(&[]);
    assert_eq!(out.status_of("runs::mostly"), "ok", "{}", out.context());
    assert_eq!(out.status_of("runs::once"), "ok");
    assert_eq!(out.status_of("runs::rarely"), "FAILED");
    assert!(out.status_of("runs::mostly::run_2").starts_with("ignored"));
    let reason = out.failure("runs", "rarely");
    assert!(
        reason.contains("[run 1/3] FAILED: 1 of 1 assertion failed:"),
        "{reason}"
    );
    assert!(reason.contains("[run 2/3] FAILED"), "{reason}");
    assert!(
        reason.contains("1/3 runs passed (need 2, threshold 60%)"),
        "{reason}"
    );

    // A single run named exactly runs alone, and only that trial is built.
    let one = f.run(&["--exact", "runs::rarely::run_3"]);
    assert_eq!(one.code, 0, "{}", one.context());
    assert_eq!(one.status_of("runs::rarely::run_3"), "ok");
    assert!(
        one.stdout.contains("1 passed; 0 failed"),
        "{}",
        one.context()
    );
    let two = f.run(&["--exact", "runs::rarely::run_2"]);
    assert_eq!(two.code, 101, "{}", two.context());
}

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
         ends_with, is_json, json_schema, max_latency, max_cost, max_tokens, max_words, tool_called, not_tool_called, judge; custom: min_sentences",
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
        "bad_key",
        "promt = \"Say hi\"\n[[cases]]\nname = \"a\"\n",
        "prompt-tests/bad_key.evals.toml:1:1: `promt`: unknown key `promt`",
        "promt",
        "did you mean `prompt`?",
    ),
];

#[test]
fn a_broken_suite_is_one_failing_trial_that_locates_the_problem() {
    let mut f = Fixture::new("broken");
    for (name, text, ..) in BROKEN {
        f.file(&format!("prompt-tests/{name}.evals.toml"), text);
    }
    f.file(
        "prompt-tests/good.evals.toml",
        "prompt = \"Say hi\"\n[[cases]]\nname = \"hi\"\nassert = [{ icontains = \"hi\" }]\n",
    );
    f.answer("good", "Say hi", 1, "Hi!");
    let out = f.run(&[]);
    assert_eq!(out.code, 101, "{}", out.context());
    // Other suites run normally.
    assert_eq!(out.status_of("good::hi"), "ok", "{}", out.context());
    for (name, _, location, key, fix) in BROKEN {
        let trial = format!("{name}::suite_file_error");
        assert_eq!(out.status_of(&trial), "FAILED", "{}", out.context());
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
            out.stdout.contains(location),
            "{name}: not on the console\n{}",
            out.stdout
        );
    }
}

#[test]
fn exact_builds_only_the_requested_trial_even_when_another_suite_is_broken() {
    let mut f = Fixture::new("exact");
    f.file("prompt-tests/broken.evals.toml", "prompt = 3\n");
    f.file(
        "prompt-tests/nested/deep.evals.toml",
        "prompt = \"Deep {x}\"\n[[cases]]\nname = \"one\"\ninputs = { x = \"1\" }\nassert = [{ contains = \"ok\" }]\n\
         [[cases]]\nname = \"two\"\ninputs = { x = \"2\" }\nassert = [{ contains = \"ok\" }]\n",
    );
    f.answer("nested::deep", "Deep 1", 1, "ok");
    f.answer("nested::deep", "Deep 2", 1, "ok");
    let out = f.run(&["--exact", "nested::deep::one"]);
    assert_eq!(out.code, 0, "{}", out.context());
    assert_eq!(out.status_of("nested::deep::one"), "ok");
    assert!(
        out.stdout.contains("1 passed; 0 failed"),
        "{}",
        out.context()
    );
    assert!(!out.stdout.contains("broken"), "{}", out.context());

    // Asked by name, a case of a broken suite fails with the suite's problems instead of vanishing.
    let out = f.run(&["--exact", "broken::anything"]);
    assert_eq!(out.code, 101, "{}", out.context());
    assert_eq!(out.status_of("broken::anything"), "FAILED");
    assert!(
        out.stdout.contains(
            "prompt-tests/broken.evals.toml:1:10: `prompt`: expected a string, found an integer"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_recording_fails_its_case_and_the_others_still_run() {
    let mut f = Fixture::new("missing");
    f.file(
        "prompt-tests/partial.evals.toml",
        "prompt = \"Q {q}\"\n[[cases]]\nname = \"recorded\"\ninputs = { q = \"1\" }\nassert = [{ contains = \"a\" }]\n\
         [[cases]]\nname = \"changed\"\ninputs = { q = \"2\" }\nassert = [{ contains = \"a\" }]\n",
    );
    f.answer("partial", "Q 1", 1, "a");
    let out = f.run(&[]);
    assert_eq!(
        out.status_of("partial::recorded"),
        "ok",
        "{}",
        out.context()
    );
    assert_eq!(out.status_of("partial::changed"), "FAILED");
    let reason = out.failure("partial", "changed");
    assert!(
        reason.contains(
            "model call failed: partial.cassette.json has 1 recording(s) but none for this call"
        ),
        "{reason}"
    );
    assert!(
        reason.contains("-- partial"),
        "the re-record command filters on the suite: {reason}"
    );
}

#[test]
fn live_only_suites_and_cases_without_recordings_are_ignored_in_ci_while_others_fail() {
    let mut f = Fixture::new("liveonly");
    f.mode = "auto";
    f.env.push(("CI", "true"));
    f.file(
        "prompt-tests/live.evals.toml",
        "prompt = \"Q {q}\"\nlive_only = true\n\
         [[cases]]\nname = \"recorded\"\ninputs = { q = \"1\" }\nassert = [{ contains = \"a\" }]\n\
         [[cases]]\nname = \"unrecorded\"\ninputs = { q = \"2\" }\nassert = [{ contains = \"a\" }]\n\
         [[cases]]\nname = \"not_live\"\nlive_only = false\ninputs = { q = \"3\" }\nassert = [{ contains = \"a\" }]\n",
    );
    f.file(
        "prompt-tests/fresh.evals.toml",
        "prompt = \"New {q}\"\n[[cases]]\nname = \"nobody_recorded\"\ninputs = { q = \"1\" }\nassert = [{ contains = \"a\" }]\n",
    );
    f.answer("live", "Q 1", 1, "a");
    let out = f.run(&[]);
    assert_eq!(out.code, 101, "{}", out.context());
    // A recorded live-only case replays.
    assert_eq!(out.status_of("live::recorded"), "ok", "{}", out.context());
    let ignored = out.status_of("live::unrecorded");
    assert!(
        ignored.starts_with(
            "ignored (live only, not run: no recording in prompt-tests/cassettes/live.cassette.json"
        ),
        "{ignored}"
    );
    // A case may opt out of its suite's `live_only`: then, like any case nobody recorded, it fails
    // under CI (the suite's cassette has other recordings: it says the prompt changed).
    assert_eq!(out.status_of("live::not_live"), "FAILED");
    assert_eq!(out.status_of("fresh::nobody_recorded"), "FAILED");
    let reason = out.failure("fresh", "nobody_recorded");
    assert!(
        reason.contains("Under CI, auto mode never calls a provider for a missing recording")
            && reason.contains("PROMPT_TESTER_CASSETTE=record cargo test --test prompts -- fresh"),
        "{reason}"
    );
    assert!(
        out.stderr.contains("live only, not run: live::unrecorded"),
        "{}",
        out.context()
    );
    let live = out.suite("live");
    assert_eq!(
        (live["skipped"].as_u64(), live["total"].as_u64()),
        (Some(1), Some(2))
    );
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
    assert_eq!(out.status_of("lone::a"), "FAILED", "{}", out.context());
    let reason = out.failure("lone", "a");
    assert!(
        reason.contains(
            "case `lone::a` names no provider and model: add `provider = \"...\"` and `model = \"...\"` to \
             prompt-tests/lone.evals.toml"
        ),
        "{reason}"
    );
}

#[test]
fn custom_assertions_are_listed_in_unknown_assertion_messages() {
    let f = Fixture::new("custom");
    f.file(
        "prompt-tests/c.evals.toml",
        "prompt = \"Hi\"\n[[cases]]\nname = \"a\"\nassert = [{ min_sentence = 1 }]\n",
    );
    let out = f.run(&[]);
    let error = out.suite("c")["error"].as_str().unwrap().to_string();
    assert!(error.contains("did you mean `min_sentences`?"), "{error}");
    assert!(error.contains("custom: min_sentences"), "{error}");
}

#[test]
fn the_shipped_example_suites_are_valid() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Child::harness(CHILD_ARGS, &["prompts", "--list"])
        .root(&root)
        .run();
    let stdout = out.stdout();
    assert!(out.success(), "{}", out.context());
    assert!(!stdout.contains("suite_file_error"), "{stdout}");
    for trial in [
        "assertions::france_sentence",
        "assertions::france_json",
        "assertions::italy_sentence::run_3",
    ] {
        assert!(
            stdout.contains(&format!("{trial}: test")),
            "{trial} not listed:\n{stdout}"
        );
    }
    // The showcase uses every built-in assertion kind.
    let text = std::fs::read_to_string(root.join("prompt-tests/assertions.evals.toml")).unwrap();
    for kind in [
        "contains",
        "not_contains",
        "icontains",
        "regex",
        "equals",
        "starts_with",
        "ends_with",
        "is_json",
        "json_schema",
        "max_latency",
        "max_cost",
        "max_tokens",
        "max_words",
        "judge",
    ] {
        assert!(
            text.contains(&format!("{{ {kind} = ")),
            "the example does not use {kind}"
        );
    }
}

const GEO: &str = r#"prompt = "Capital of {country}?"

[[cases]]
name = "france"
inputs = { country = "France" }
assert = [{ contains = "Paris" }, { max_words = 10 }]

[[cases]]
name = "spain"
inputs = { country = "Spain" }
assert = [{ contains = "Madrid" }]

[[cases]]
name = "nowhere"
inputs = { country = "Nowhere" }
assert = [{ contains = "x" }]
"#;

/// Answers the capital of France, refuses Nowhere with a provider error, and knows nothing else.
fn geo_server() -> FakeProvider {
    FakeProvider::builder()
        .respond_with(|request| match request.last_user_text().as_deref() {
            Some("Capital of France?") => Reply::answer(request, "Paris is the capital."),
            Some("Capital of Nowhere?") => Reply::error(
                Wire::OpenAi,
                400,
                "invalid_request_error",
                "no such country: Nowhere",
            ),
            _ => Reply::answer(request, "I do not know."),
        })
        .start()
}

#[test]
fn suites_call_an_http_provider_and_a_provider_error_fails_only_its_case() {
    let fake = geo_server();
    let mut f = Fixture::new("http");
    f.configure(&fake.base_url(Wire::OpenAi));
    f.mode = "off";
    f.file("prompt-tests/geo.evals.toml", GEO);
    let out = f.run(&[]);
    assert_eq!(out.code, 101, "{}", out.context());
    assert_eq!(out.status_of("geo::france"), "ok", "{}", out.context());
    assert_eq!(out.status_of("geo::spain"), "FAILED");
    assert!(
        out.failure("geo", "spain")
            .contains(r#"contains: expected the output to contain "Madrid"; saw "I do not know.""#)
    );
    let reason = out.failure("geo", "nowhere");
    assert!(reason.starts_with("model call failed:"), "{reason}");
    assert!(reason.contains("no such country: Nowhere"), "{reason}");

    // What went over the wire: the rendered prompt, the model and the options of the suite.
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    let france = requests
        .iter()
        .find(|r| r.last_user_text().as_deref() == Some("Capital of France?"))
        .unwrap();
    let body = france.json.as_ref().unwrap();
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["max_tokens"], MAX_TOKENS);
    assert!(
        f.root.join("prompt-tests/cassettes").read_dir().is_err(),
        "cassettes are off: nothing recorded"
    );
    let suite = out.suite("geo");
    assert_eq!(
        (suite["passed"].as_u64(), suite["total"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(
        suite["usage"]["subject"]["calls"], 2,
        "the failed call is not counted as an answer"
    );
}

#[test]
fn a_suite_records_one_cassette_then_replays_it_offline() {
    let fake = geo_server();
    let mut f = Fixture::new("record");
    f.configure(&fake.base_url(Wire::OpenAi));
    f.mode = "auto";
    f.file("prompt-tests/geo.evals.toml", GEO);
    let first = f.run(&["--skip", "geo::nowhere"]);
    assert_eq!(fake.request_count(), 2, "{}", first.context());
    let cassette = f.root.join("prompt-tests/cassettes/geo.cassette.json");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let entries = recorded["entries"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        2,
        "one cassette per suite, one entry per call"
    );
    assert!(
        entries
            .iter()
            .all(|e| e["provider"] == PROVIDER && e["role"] == "subject")
    );
    drop(fake);

    // The server is gone: replaying needs only the cassette.
    f.mode = "replay";
    let again = f.run(&["--skip", "geo::nowhere"]);
    assert_eq!(again.status_of("geo::france"), "ok", "{}", again.context());
    assert_eq!(again.status_of("geo::spain"), "FAILED");
    assert!(
        again.stderr.contains("(2 replayed from cassettes)"),
        "{}",
        again.context()
    );
    assert_eq!(again.suite("geo")["usage"]["subject"]["replayed"], 2);
}

const JUDGED: &str = r#"prompt = "Serve {thing}"

[[cases]]
name = "tea"
inputs = { thing = "tea" }
assert = [{ contains = "tea" }, { judge = "Is it polite?" }, { judge = "Does it mention milk?" }]

[[cases]]
name = "coffee"
inputs = { thing = "coffee" }
assert = [{ judge = "Is it polite?" }]

[[cases]]
name = "juice"
inputs = { thing = "juice" }
threshold = 0.5
assert = [{ contains = "juice", weight = 1 }, { judge = "Is it polite?", weight = 1 }]
"#;

/// One verdict of the judge's structured answer.
fn verdict(index: u32, answer: &str, reasoning: &str) -> Value {
    json!({"index": index, "question_type": "factual_presence", "reasoning": reasoning, "snippet": null, "answer": answer})
}

#[test]
fn judge_assertions_share_one_judge_call_per_run() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                let polite = !body.contains("coffee") && !body.contains("juice");
                let mut verdicts = vec![if polite {
                    verdict(1, "yes", "It says please.")
                } else {
                    verdict(1, "no", "It barks an order.")
                }];
                if body.contains("Does it mention milk?") {
                    verdicts.push(verdict(2, "yes", "Milk is offered."));
                }
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": verdicts }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            let answer = match request.last_user_text().as_deref() {
                Some("Serve tea") => "Here is your tea with milk, please enjoy.",
                Some("Serve coffee") => "Coffee. Now.",
                _ => "Fresh juice. Take it.",
            };
            Reply::answer(request, answer)
        })
        .start();
    let mut f = Fixture::new("judge");
    f.configure(&fake.base_url(Wire::OpenAi));
    f.mode = "off";
    f.file("prompt-tests/judged.evals.toml", JUDGED);
    let out = f.run(&[]);
    assert_eq!(out.status_of("judged::tea"), "ok", "{}", out.context());
    assert_eq!(out.status_of("judged::coffee"), "FAILED");
    assert_eq!(
        out.status_of("judged::juice"),
        "ok",
        "the judge's no weighs 1 of 2, the threshold is 0.5"
    );
    let reason = out.failure("judged", "coffee");
    assert!(
        reason.contains(
            r#"judge: expected the judge to confirm "Is it polite?"; saw "no": It barks an order."#
        ),
        "{reason}"
    );
    // Both questions of `tea` went in one judge call; three judge calls in all.
    let judge_calls: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(judge_calls.len(), 3);
    assert_eq!(
        judge_calls
            .iter()
            .filter(|b| b.contains("Does it mention milk?") && b.contains("Is it polite?"))
            .count(),
        1
    );
    let suite = out.suite("judged");
    assert_eq!(suite["usage"]["judge"]["calls"], 3);
    assert_eq!(suite["usage"]["subject"]["calls"], 3);
    let junit = quick_junit::Report::deserialize_from_str(out.junit.as_deref().unwrap()).unwrap();
    let tea = junit.test_suites[0]
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "judged::tea")
        .unwrap();
    let judge_calls = tea
        .properties
        .iter()
        .find(|p| p.name.as_str() == "judge_calls")
        .unwrap();
    assert_eq!(judge_calls.value.as_str(), "1");
}

#[test]
fn a_judge_assertion_without_a_configured_judge_fails_with_how_to_configure_one() {
    let fake = FakeProvider::builder().echo_text("Tea. Please.").start();
    let mut f = Fixture::new("nojudge");
    f.mode = "off";
    f.file(
        "prompt-tester.toml",
        &format!("[defaults]\nprovider = \"{PROVIDER}\"\nmodel = \"{MODEL}\"\n[providers.{PROVIDER}]\nbase_url = \"{}\"\n", fake.base_url(Wire::OpenAi)),
    );
    f.file("prompt-tests/j.evals.toml", "prompt = \"Serve tea\"\n[[cases]]\nname = \"a\"\nassert = [{ judge = \"Is it polite?\", weight = 0 }]\nthreshold = 0\n");
    let out = f.run(&[]);
    assert_eq!(out.status_of("j::a"), "FAILED", "{}", out.context());
    let reason = out.failure("j", "a");
    assert!(reason.starts_with("judge: "), "{reason}");
    assert!(
        reason.contains("[judge]"),
        "the message says how to configure the judge: {reason}"
    );
}

/// Serves tea: the third subject call (whichever run makes it) answers "III"; the judge answers every
/// question yes, except about that answer, where it writes prose with no verdict.
fn tea_server() -> FakeProvider {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let teas = AtomicUsize::new(0);
    FakeProvider::builder()
        .respond_with(move |request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                if body.contains("III") {
                    return Reply::text(
                        Wire::OpenAi,
                        JUDGE_MODEL,
                        "Hard to say.",
                        prompt_tester_testkit::Usage::new(50, 4),
                    );
                }
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [verdict(1, "yes", "Fine.")] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            let answer = match request.last_user_text().as_deref() {
                Some("Serve tea") if teas.fetch_add(1, Ordering::SeqCst) == 2 => "Your tea. III",
                Some("Serve tea") => "Your tea, please.",
                Some("Serve water") => "Water, please.",
                _ => "No.",
            };
            Reply::answer(request, answer)
        })
        .start()
}

/// A judge with no verdict is an error, not a weighed failure, and an errored run fails its case
/// whatever `pass_threshold` and `threshold`: 4/5 runs would pass at 0.8, and the judge's assertion
/// weighs only half the score. Errors are counted apart in the console, the summary and both reports.
#[test]
fn a_judge_without_a_verdict_errors_the_run_whatever_the_thresholds() {
    let fake = tea_server();
    let mut f = Fixture::new("errored");
    f.configure(&fake.base_url(Wire::OpenAi));
    f.mode = "off";
    f.file(
        "prompt-tests/drinks.evals.toml",
        r#"prompt = "Serve {thing}"

[[cases]]
name = "tea"
inputs = { thing = "tea" }
runs = 5
pass_threshold = 0.8
threshold = 0.5
assert = [{ contains = "tea", weight = 1 }, { judge = "Is it polite?", weight = 1 }]

[[cases]]
name = "coffee"
inputs = { thing = "coffee" }
assert = [{ contains = "coffee" }]

[[cases]]
name = "water"
inputs = { thing = "water" }
assert = [{ contains = "Water" }]
"#,
    );
    let out = f.run(&[]);
    assert_eq!(out.code, 101, "{}", out.context());
    assert_eq!(out.status_of("drinks::tea"), "FAILED", "{}", out.context());
    assert_eq!(out.status_of("drinks::coffee"), "FAILED");
    assert_eq!(out.status_of("drinks::water"), "ok");
    let reason = out.failure("drinks", "tea");
    assert!(
        reason.contains("] ERROR: judge: judge returned no verdict: "),
        "{reason}"
    );
    assert!(reason.contains("Hard to say."), "{reason}");
    assert!(!reason.contains("FAILED"), "{reason}");
    assert!(
        reason.contains("4/5 runs passed, 1 errored (need 4, threshold 80%)"),
        "{reason}"
    );
    assert!(
        out.stderr
            .contains("1 passed, 1 failed, 1 errored, 0 ignored"),
        "{}",
        out.context()
    );

    let suite = out.suite("drinks");
    assert_eq!(suite["passed"], 1, "{suite:#}");
    assert_eq!(suite["errors"], 1, "{suite:#}");
    assert_eq!(suite["total"], 3, "an errored case counts in total");
    let status = |case: &str, list: &str| {
        suite[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["case_id"] == case)
            .unwrap_or_else(|| panic!("no {case} in {list}: {suite:#}"))["status"]
            .clone()
    };
    assert_eq!(status("tea", "failures"), "errored");
    assert_eq!(status("coffee", "failures"), "failed");
    assert_eq!(status("tea", "cases"), "errored");
    assert_eq!(status("coffee", "cases"), "failed");
    assert_eq!(status("water", "cases"), "passed");
    let report = out.report.as_ref().unwrap();
    assert_eq!(report["totals"]["errors"], 1, "{report:#}");
    assert_eq!(report["totals"]["failed"], 1, "{report:#}");
    assert_eq!(report["totals"]["passed"], 1, "{report:#}");

    let junit = quick_junit::Report::deserialize_from_str(out.junit.as_deref().unwrap()).unwrap();
    let kind_of = |name: &str| {
        let case = junit.test_suites[0]
            .test_cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap();
        match &case.status {
            quick_junit::TestCaseStatus::NonSuccess { kind, .. } => Some(*kind),
            _ => None,
        }
    };
    assert_eq!(
        kind_of("drinks::tea"),
        Some(quick_junit::NonSuccessKind::Error)
    );
    assert_eq!(
        kind_of("drinks::coffee"),
        Some(quick_junit::NonSuccessKind::Failure)
    );
    assert_eq!(kind_of("drinks::water"), None);
}

/// A reply that leaves a judge question unanswered is followed by one call asking only that
/// question; both judge calls are recorded and replay offline.
#[test]
fn a_missing_verdict_is_asked_again_and_the_cassette_replays_both_calls() {
    let fake = FakeProvider::builder()
        .respond_with(|request| {
            let user = request.last_user_text().unwrap_or_default();
            if request.model().as_deref() == Some(JUDGE_MODEL) {
                // The first call numbers both questions; the second asks about milk alone.
                let reasoning = if user.contains("2. Does it mention milk?") {
                    "It says please."
                } else {
                    "Milk is offered."
                };
                return Reply::text(
                    Wire::OpenAi,
                    JUDGE_MODEL,
                    &json!({ "verdicts": [verdict(1, "yes", reasoning)] }).to_string(),
                    prompt_tester_testkit::Usage::new(100, 10),
                );
            }
            Reply::answer(request, "Here is your tea with milk, please enjoy.")
        })
        .start();
    let mut f = Fixture::new("reask");
    f.configure(&fake.base_url(Wire::OpenAi));
    f.mode = "auto";
    f.file(
        "prompt-tests/tea.evals.toml",
        "prompt = \"Serve tea\"\n[[cases]]\nname = \"milk\"\nassert = [{ judge = \"Is it polite?\" }, { judge = \"Does it mention milk?\" }]\n",
    );
    let first = f.run(&[]);
    assert_eq!(first.status_of("tea::milk"), "ok", "{}", first.context());
    let judge_calls: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.model().as_deref() == Some(JUDGE_MODEL))
        .map(|r| r.last_user_text().unwrap_or_default())
        .collect();
    assert_eq!(judge_calls.len(), 2, "{judge_calls:#?}");
    assert!(
        judge_calls[1].contains("1. Does it mention milk?"),
        "{}",
        judge_calls[1]
    );
    assert!(
        !judge_calls[1].contains("Is it polite?"),
        "{}",
        judge_calls[1]
    );
    let cassette = f.root.join("prompt-tests/cassettes/tea.cassette.json");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).unwrap()).unwrap();
    let roles: Vec<&str> = recorded["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| **r == "judge").count(),
        2,
        "{roles:?}"
    );
    drop(fake);

    f.mode = "replay";
    let again = f.run(&[]);
    assert_eq!(again.status_of("tea::milk"), "ok", "{}", again.context());
    assert!(
        again.stderr.contains("(3 replayed from cassettes)"),
        "{}",
        again.context()
    );
}
