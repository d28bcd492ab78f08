//! TOML suites end to end: a temporary crate with suite files and cassettes holding canned answers,
//! run by the real harness in a child process (a whole test target, as `cargo test` runs it: its own crate
//! root, environment and exit code), then checked through
//! the exit code, the console, the JSON report and the JUnit XML.
//!
//! This file holds the child harness, the custom assertion the suites use and the throwaway crate
//! ([`Fixture`]); the tests are grouped by concern: assertion kinds (`assertions`), broken and shipped
//! suites (`parsing`), running against recordings and HTTP providers (`running`), a hostile provider
//! and the secrets it sends back (`hostile`), reports (`reports`)
//! and judge assertions (`judge`).

use prompt_tester::testing::cassette::{Entry, entry_key};
use prompt_tester::{CompletionRequest, CompletionResult, PromptRun, toml};
use prompt_tester_testkit::child::{self, Child};
use prompt_tester_testkit::{FakeProvider, Wire};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod assertions;
#[path = "../common/big_report.rs"]
mod big_report;
mod budget;
mod calibration;
mod conversation;
mod conversations;
mod datasets;
mod escapes;
mod gates;
mod hostile;
mod html;
mod judge;
mod labels;
mod matrix;
mod parsing;
#[path = "../prereq/mod.rs"]
mod prereq;
mod reports;
mod running;
mod similar;
#[path = "../common/tmux.rs"]
mod tmux;
mod trust;
mod yaml;

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

/// What a child run left: the process's output, with its helpers, and the reports it wrote.
struct Outcome {
    run: child::Run,
    report: Option<Value>,
    junit: Option<String>,
}

impl std::ops::Deref for Outcome {
    type Target = child::Run;

    fn deref(&self) -> &child::Run {
        &self.run
    }
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

    /// A crate whose `fake` provider is `fake`'s OpenAI-compatible endpoint, run in cassette `mode`.
    fn calling(name: &str, fake: &FakeProvider, mode: &'static str) -> Self {
        let mut fixture = Self::new(name);
        fixture.configure(&fake.base_url(Wire::OpenAi));
        fixture.mode = mode;
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

    /// Writes the suite `name` kept in `tests/suites/data/` into the crate root's `prompt-tests/`.
    fn suite(&self, name: &str) {
        let file = format!("{name}.evals.toml");
        let data = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("suites/data")
            .join(&file);
        let text =
            std::fs::read_to_string(&data).unwrap_or_else(|e| panic!("{}: {e}", data.display()));
        self.file(&format!("prompt-tests/{file}"), &text);
    }

    /// Writes `text` as the suite `suite` (`a::b` is `prompt-tests/a/b.evals.toml`) and records each
    /// `(prompt, output)` of `answers` as the usual answer to the first run of that prompt.
    fn recorded_suite(&mut self, suite: &str, text: &str, answers: &[(&str, &str)]) {
        let path = suite.replace("::", "/");
        self.file(&format!("prompt-tests/{path}.evals.toml"), text);
        for (prompt, output) in answers {
            self.answer(suite, prompt, 1, output);
        }
    }

    /// Writes the suite `suite`, asking `Q {q}` with the suite keys `keys` (TOML lines), a case for each
    /// `(name, q, more keys)` expecting an `a`, and records `a` as the answer to `Q 1`.
    fn q_suite(&mut self, suite: &str, keys: &str, cases: &[(&str, &str, &str)]) {
        let mut text = format!("prompt = \"Q {{q}}\"\n{keys}");
        for (name, q, more) in cases {
            text += &format!(
                "[[cases]]\nname = \"{name}\"\n{more}inputs = {{ q = \"{q}\" }}\nassert = [{{ contains = \"a\" }}]\n"
            );
        }
        self.recorded_suite(suite, &text, &[("Q 1", "a")]);
    }

    /// A crate whose suite `golden` (`text`, asking `Capital of {country}?`) reads its rows from
    /// `prompt-tests/golden/capitals.jsonl` (`rows`), with the usual answer to the first run of each
    /// country's question recorded: `(country, answer)` in `capitals`.
    fn golden(name: &str, text: &str, rows: &str, capitals: &[(&str, &str)]) -> Self {
        let mut f = Self::new(name);
        f.recorded_suite("golden", text, &[]);
        for (country, answer) in capitals {
            f.answer("golden", &format!("Capital of {country}?"), 1, answer);
        }
        f.file("prompt-tests/golden/capitals.jsonl", rows);
        f
    }

    /// The entries of the cassette of `suite` (`a::b` is `prompt-tests/cassettes/a.b.cassette.json`)
    /// as the run left it.
    fn recorded(&self, suite: &str) -> Vec<Value> {
        let path = self.root.join(format!(
            "prompt-tests/cassettes/{}.cassette.json",
            suite.replace("::", ".")
        ));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cassette: Value = serde_json::from_str(&text).unwrap();
        cassette["entries"].as_array().unwrap().clone()
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
            target: None,
            run,
            role: prompt_tester::testing::cassette::CallRole::Subject,
            provider: PROVIDER.into(),
            model: request.model.clone(),
            call: prompt_tester::testing::cassette::Exchange::Completion {
                request,
                response: result,
            },
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
            let body = json!({ "version": prompt_tester::testing::cassette::FORMAT_VERSION, "entries": entries });
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
        let mut run = Child::harness(CHILD_ARGS, &argv)
            .root(&self.root)
            .env("PROMPT_TESTER_CASSETTE", self.mode)
            .env("PT_FAKE_API_KEY", SECRET)
            .envs(&self.env)
            .run();
        // The child's own libtest prints `test child_harness ... ` before the harness takes over.
        run.0.stdout = run
            .stdout()
            .replace("test child_harness ... ", "\n")
            .into_bytes();
        Outcome {
            run,
            report: std::fs::read_to_string(&report)
                .ok()
                .map(|t| serde_json::from_str(&t).expect("the report is JSON")),
            junit: std::fs::read_to_string(&junit).ok(),
        }
    }
}

/// A fake where model `a` answers Paris and model `b` Lyon, whatever the prompt (any other model
/// echoes it).
fn paris_and_lyon() -> FakeProvider {
    FakeProvider::builder()
        .answer_model("a", "Paris, of course.")
        .answer_model("b", "I believe it is Lyon.")
        .start()
}

/// Runs a crate holding the default configuration and `text` in `prompt-tests/<file>`, nothing more.
fn run_with_file(name: &str, file: &str, text: &str) -> Outcome {
    let f = Fixture::new(name);
    f.file(&format!("prompt-tests/{file}"), text);
    f.run(&[])
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl Outcome {
    fn suite(&self, name: &str) -> &Value {
        let report = self.report.as_ref().expect("a JSON report was written");
        child::entry(&report["suites"], "suite", name)
    }

    fn failure(&self, suite: &str, case: &str) -> String {
        let failures = self.suite(suite)["failures"].as_array().unwrap();
        failures
            .iter()
            .find(|f| f["case_id"] == case)
            .unwrap_or_else(|| {
                panic!(
                    "no failure {case} in {suite}: {failures:#?}\n{}",
                    self.context()
                )
            })["failure_reason"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Panics with the whole output unless each trial's console line reads as given.
    #[track_caller]
    fn assert_statuses(&self, expected: &[(&str, &str)]) {
        for (trial, status) in expected {
            assert_eq!(self.outcome(trial), *status, "{trial}:\n{}", self.context());
        }
    }

    /// Panics with the whole output unless the run failed (exit 101) with `trial` failing and the
    /// console saying each of `says`.
    #[track_caller]
    fn assert_fails_at(&self, trial: &str, says: &[&str]) {
        self.assert_code(101);
        self.assert_statuses(&[(trial, "FAILED")]);
        for text in says {
            self.assert_stdout_has(text);
        }
    }

    /// Panics with the reason unless the failure of case `case` of `suite` contains each of `parts`.
    #[track_caller]
    fn assert_failure_has(&self, suite: &str, case: &str, parts: &[&str]) {
        child::assert_contains(&self.failure(suite, case), parts);
    }

    /// Panics unless case `case` of `suite` failed: its console line says FAILED and the report's
    /// failure reason contains each of `parts`.
    #[track_caller]
    fn assert_case_failed(&self, suite: &str, case: &str, parts: &[&str]) {
        self.assert_statuses(&[(&format!("{suite}::{case}"), "FAILED")]);
        self.assert_failure_has(suite, case, parts);
    }
}
