//! The safety net of restructurings: every report of one fixed run, compared byte for byte with the
//! files committed in `tests/snapshots/expected/`.
//!
//! The run: a scratch crate (suites with assertions, a judge whose verdicts are advisory, a matrix of
//! two models and two prompt variants, a gated dataset, a calibration set, an earlier run to compare
//! with, a budget; and this binary's own `#[prompt_test]`s)
//! recorded once against a deterministic fake provider on 127.0.0.1, then replayed under `CI` with every
//! report asked for. Compared: the JSON report, JUnit, the HTML page, the Markdown summary, the summary
//! on stderr, and the cassettes the recording run wrote. Only what legitimately varies between two runs
//! is redacted before the comparison (`redact.rs`, each rule with its reason); every other byte is
//! compared.
//!
//! When a snapshot differs the test fails with a diff of each file and the command that writes them
//! anew: `PROMPT_TESTER_SNAPSHOTS=overwrite cargo test -p prompt-tester-tests --test snapshots`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use prompt_tester::prelude::*;
use prompt_tester_testkit::child::{self, Child, Scratch};
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage, Wire};
use serde_json::json;

mod compare;
mod redact;

use compare::{Mode, Snapshot};

/// Set in the child process: the harness arguments, as JSON.
const CHILD_ARGS: &str = "PT_SNAPSHOTS_CHILD_ARGS";

/// In the child process this test is the whole program: it runs the harness and exits with its code.
#[test]
#[ignore = "helper: the other tests run it in a child process"]
fn child_harness() {
    child::run_as_child(CHILD_ARGS, |args| {
        prompt_tester::Harness::new().run_with_args(args)
    });
}

// The Rust tests of the fixed run (the harness in the child finds them through the inventory): a
// passing one over three samples, a failing one, a judge's advisory "yes" and a judge answer without
// a verdict (an errored sample).

#[prompt_test(target_prompt = "Name a colour.", runs = 3, pass_threshold = 0.6)]
async fn colour_named(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.contains("Blue"), "no Blue in {:?}", run.output);
    Ok(())
}

#[prompt_test(target_prompt = "Name a warm colour.", runs = 2)]
async fn colour_is_red(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.contains("Red"), "no Red in {:?}", run.output);
    Ok(())
}

#[prompt_test(target_prompt = "Greet {guest}.", target_prompt_vars(guest = "Alice"))]
async fn greeting_is_polite(run: PromptRun) -> anyhow::Result<()> {
    run.ask("Is it polite?").await?.require()?;
    Ok(())
}

#[prompt_test(target_prompt = "Say something vague.")]
async fn vague_is_judged(run: PromptRun) -> anyhow::Result<()> {
    run.ask("Is it muddled?").await?.require()?;
    Ok(())
}

/// The configuration: every call to the fake at `base_url`, one attempt each, priced (model `b`
/// left unpriced on purpose: an unpriced model is a report's case too).
fn config(base_url: &str) -> String {
    format!(
        r#"[retry]
max_attempts = 1

[defaults]
provider = "fake"
model = "fake-model"
max_tokens = 64

[judge]
provider = "fake"
model = "judge-model"

[providers.fake]
base_url = "{base_url}"

[prices."fake-model"]
input_mtok = 1.0
output_mtok = 2.0

[prices."judge-model"]
input_mtok = 0.5
output_mtok = 1.5

[prices.a]
input_mtok = 3.0
output_mtok = 15.0
"#
    )
}

/// Assertions that pass and fail, judge verdicts (advisory: no calibration measures this judge) that
/// pass, fail and have no verdict, and a skipped case.
const TEA: &str = r#"prompt = "Serve {drink} to {guest}."
prompt_id = "tea"
prompt_version = "v3"

[[cases]]
name = "greets"
category = "manners"
inputs = { drink = "tea", guest = "Alice" }
assert = [{ contains = "Alice" }, { regex = "(?i)tea" }, { max_words = 20 }, { max_cost = 0.01 }]

[[cases]]
name = "names_price"
category = "prices"
inputs = { drink = "coffee", guest = "Bob" }
assert = [{ contains = "$" }, { not_contains = "Bob" }]

[[cases]]
name = "polite"
category = "manners"
inputs = { drink = "tea", guest = "Carol" }
assert = [{ judge = "Is it polite?" }]

[[cases]]
name = "avoids_prices"
category = "prices"
inputs = { drink = "coffee", guest = "Dan" }
assert = [{ judge = "Does it avoid prices?" }]

[[cases]]
name = "muddled"
inputs = { drink = "water", guest = "Eve" }
assert = [{ judge = "Is it muddled?" }]

[[cases]]
name = "later"
skip = "not asked yet"
inputs = { drink = "milk", guest = "Fay" }
assert = [{ contains = "milk" }]
"#;

/// Two prompt variants across two models: `a` knows capitals, `b` does not.
const GEO: &str = r#"prompts = ["capital_v1.md", "capital_v2.md"]
models = ["fake/a", "fake/b"]

[[cases]]
name = "france"
inputs = { country = "France" }
assert = [{ contains = "Paris" }]
"#;

/// A gated dataset: Europe fails its gate (one of two), the Americas pass theirs, the whole passes.
const GOLDEN: &str = r#"prompt = "Capital of {country}?"
cases_file = "golden/capitals.jsonl"
assert = [{ equals = "{expected}" }]

[gate]
pass_threshold = 0.5

[gate.categories]
europe = 1
americas = 1
"#;

const CAPITALS: &str = r#"{"id": "france", "category": "europe", "expected": "Paris", "country": "France"}
{"id": "italy", "category": "europe", "expected": "Rome", "country": "Italy"}
{"id": "peru", "category": "americas", "expected": "Lima", "country": "Peru"}
"#;

/// A calibration set the judge gets two of three right on (it says "yes" to Carol).
const FACTS: &str = r#"[[items]]
name = "alice_named"
type = "factual_presence"
response = "Alice leads the project."
question = "Is Alice mentioned?"
expected = "yes"

[[items]]
name = "bob_named"
type = "factual_presence"
response = "Alice leads the project."
question = "Is Bob mentioned?"
expected = "no"

[[items]]
name = "carol_named"
type = "factual_presence"
response = "Alice leads the project."
question = "Is Carol mentioned?"
expected = "no"
"#;

/// An earlier run to compare with (`--baseline`): `colour_is_red` passed all its samples then (a
/// regression now), `colour_named` as now, and a test since removed.
const BASELINE: &str = r#"{
  "suites": [],
  "tests": [
    { "name": "colour_is_red", "status": "passed", "runs_passed": 20, "runs_total": 20 },
    { "name": "colour_named", "status": "passed", "runs_passed": 3, "runs_total": 3 },
    { "name": "removed_since", "status": "passed", "runs_passed": 1, "runs_total": 1 }
  ]
}"#;

/// The fake provider's answer to `request`: a function of the request alone, so every run records
/// the same bytes. Usage is fixed per answer, so costs are too.
fn answer(request: &CapturedRequest) -> Reply {
    let model = request.model().unwrap_or_default();
    let user = request.last_user_text().unwrap_or_default();
    if model.contains("judge") {
        let reply = Reply::text(Wire::OpenAi, &model, &verdicts(&user), Usage::new(120, 30));
        return pinned(reply, &model, &user);
    }
    let text = match (model.as_str(), user.as_str()) {
        ("a", _) => "Paris, of course.",
        ("b", _) => "I believe it is Lyon.",
        (_, "Name a colour.") => "Blue.",
        (_, "Name a warm colour.") => "Orange.",
        (_, "Greet Alice.") => "Good morning, Alice.",
        (_, "Say something vague.") => "Perhaps, in a way.",
        (_, "Serve tea to Alice.") => "Here is your tea, Alice.",
        (_, "Serve coffee to Bob.") => "Your coffee, Bob.",
        (_, "Serve tea to Carol.") => "Your tea, Carol, with pleasure.",
        (_, "Serve coffee to Dan.") => "Coffee for Dan: $3.",
        (_, "Serve water to Eve.") => "Water. Or not.",
        (_, "Capital of France?") => "Paris",
        (_, "Capital of Italy?") => "Milan",
        (_, "Capital of Peru?") => "Lima",
        (_, other) => panic!("the snapshot fixture has no answer to {other:?}"),
    };
    let reply = Reply::text(Wire::OpenAi, &model, text, Usage::new(user.len() as u64, 7));
    pinned(reply, &model, &user)
}

/// `reply` with an id made of what was asked, in place of the fake's counter: the recordings keep the
/// id, and the counter's order is the order the concurrent samples happened to call in.
fn pinned(mut reply: Reply, model: &str, user: &str) -> Reply {
    // FNV-1a: a few stable hex digits, whatever the platform.
    let hash = format!("{model}\n{user}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let id = format!("{hash:016x}");
    let mut body: serde_json::Value =
        serde_json::from_slice(&reply.body).expect("the fake answers JSON");
    body["id"] = json!(format!("chatcmpl-fake-{id}"));
    reply.body = serde_json::to_vec(&body).expect("JSON");
    reply.headers.retain(|(name, _)| name != "x-request-id");
    reply.with_header("x-request-id", &format!("req_fake_{id}"))
}

/// The judge: "no" to avoiding prices and to Bob, "yes" to anything else, and no verdict at all to
/// "muddled" (an errored sample). One question or several (`QUESTIONS (`), as the judge asks.
fn verdicts(user: &str) -> String {
    let question = user.rsplit("QUESTION").next().unwrap_or_default();
    if question.contains("muddled") {
        return "I would rather not say.".to_string();
    }
    let answer = if question.contains("avoid") || question.contains("Bob") {
        "no"
    } else {
        "yes"
    };
    let kind = if question.contains("mentioned") {
        "factual_presence"
    } else {
        "tone"
    };
    let mut one = json!({
        "question_type": kind,
        "reasoning": "Read it once.",
        "snippet": null,
        "answer": answer,
    });
    if user.contains("QUESTIONS (") {
        one["index"] = json!(1);
        json!({ "verdicts": [one] }).to_string()
    } else {
        one.to_string()
    }
}

/// The scratch crate of the fixed run, its configuration pointing at `base_url`.
fn fixture_crate(scratch: &Scratch, base_url: &str) {
    // Only for `cargo prompt-tester`, which finds the crate by its manifest.
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"snapshots\"\nversion = \"0.0.0\"\nedition = \"2024\"\n",
    );
    scratch.config(&config(base_url));
    scratch.file("prompt-tests/tea.evals.toml", TEA);
    scratch.file("prompt-tests/geo.evals.toml", GEO);
    scratch.file("prompt-tests/capital_v1.md", "Capital of {country}?");
    scratch.file(
        "prompt-tests/capital_v2.md",
        "Name the capital city of {country}.",
    );
    scratch.file("prompt-tests/golden.evals.toml", GOLDEN);
    scratch.file("prompt-tests/golden/capitals.jsonl", CAPITALS);
    scratch.file("prompt-tests/facts.calibration.toml", FACTS);
    scratch.file("baseline.json", BASELINE);
}

/// The harness of this binary in a child process in `root`, with `args` after the program's name.
fn harness(root: &Path, args: &[&str]) -> Child {
    let mut argv = vec!["snapshots"];
    argv.extend_from_slice(args);
    // One trial at a time: a gated dataset's rows run once per process, and their calls count in the
    // usage of whichever gate ran them first, which trials at once make a race.
    argv.push("--test-threads=1");
    Child::harness(CHILD_ARGS, &argv).root(root)
}

/// The expected snapshots' folder.
fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/expected")
}

#[test]
fn every_report_of_a_fixed_run_matches_its_snapshot() {
    let mode = Mode::from_env().unwrap_or_else(|problem| panic!("{problem}"));
    let scratch = Scratch::new("snapshots", "run");
    let root = scratch.path().to_path_buf();

    // Record once against the fake.
    let fake = FakeProvider::builder().respond_with(answer).start();
    fixture_crate(&scratch, &fake.base_url(Wire::OpenAi));
    let recorded = harness(&root, &[])
        .env("PROMPT_TESTER_CASSETTE", "record")
        .run();
    recorded.assert_code(101);
    let mut snapshots = cassettes(&scratch.cassettes(), &root);
    drop(fake);
    pin_latencies(&scratch.cassettes());

    // Replay under CI, the provider gone, every report asked for.
    let out = root.join("out");
    let mut args = report_args(&out);
    args.extend(["--budget".to_string(), "0.50".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let replayed = harness(&root, &args)
        .env("CI", "true")
        // The commit the HTML report names: fixed, instead of whatever git says of the temporary folder.
        .env("GITHUB_SHA", "0123456789abcdef")
        .run();
    replayed.assert_code(101);
    snapshots.extend(reports("", &out, &root, &replayed));
    snapshots.push(Snapshot::new(
        "stderr.txt",
        redact::stderr(&replayed.stderr(), &root),
    ));
    let result = "facts.calibration.result.json";
    let text = std::fs::read_to_string(root.join("prompt-tests").join(result)).unwrap();
    snapshots.push(Snapshot::new(&format!("calibration/{result}"), text));

    // The same reports rendered by `cargo prompt-tester report` from the results the replay left: the
    // other way to them, which a nextest run and a CI matrix take.
    let merged = root.join("merged");
    let args = report_args(&merged);
    let report = Child::new(report_command())
        .root(&root)
        .args(["prompt-tester", "report"])
        .args(&args)
        .run();
    report.assert_success();
    snapshots.extend(reports("report-command/", &merged, &root, &report));
    snapshots.push(Snapshot::new(
        "report-command/stderr.txt",
        redact::report_command(&report.stderr(), &root),
    ));
    compare::check(mode, &expected_dir(), &snapshots);
}

/// The flags that ask for every report, written in `out`, and the comparison with the baseline.
fn report_args(out: &Path) -> Vec<String> {
    let path = |name: &str| out.join(name).display().to_string();
    [
        ("--report", path("report.json")),
        ("--junit", path("junit.xml")),
        ("--html", path("report.html")),
        ("--markdown", path("summary.md")),
        ("--baseline", "baseline.json".to_string()),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_string(), value])
    .collect()
}

/// The reports `run` wrote in `out`, each a snapshot named `<prefix><file>`.
fn reports(prefix: &str, out: &Path, root: &Path, run: &child::Run) -> Vec<Snapshot> {
    let read = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", run.context()))
    };
    let redacted: [(&str, redact::Redaction); 4] = [
        ("report.json", redact::report),
        ("junit.xml", redact::junit),
        ("report.html", redact::report),
        ("summary.md", redact::markdown),
    ];
    redacted
        .into_iter()
        .map(|(name, redact)| Snapshot::new(&format!("{prefix}{name}"), redact(&read(name), root)))
        .collect()
}

/// The `cargo prompt-tester` binary, built now (once per process) so that it is never stale.
fn report_command() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
            child::built_binary("cargo-prompt-tester", &workspace)
        })
        .clone()
}

/// The cassettes the recording run wrote (not the work folder's locks beside them), by file name.
fn cassettes(dir: &Path, root: &Path) -> Vec<Snapshot> {
    let files: Vec<String> = compare::files_under(dir)
        .into_iter()
        .filter(|name| is_cassette(name))
        .collect();
    assert!(!files.is_empty(), "the recording run wrote no cassette");
    files
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            Snapshot::new(&format!("cassettes/{name}"), redact::cassette(&text, root))
        })
        .collect()
}

/// Whether `name`, a path in the cassette folder, is a cassette (not in its work folder).
fn is_cassette(name: &str) -> bool {
    !name.contains('/') && name.ends_with(".cassette.json")
}

/// Every recorded latency set to 250 ms before the replay, so that the latencies the reports show
/// (each sample's, the matrix's means) are fixed and compared rather than redacted: a loopback call
/// takes 0 to a few milliseconds, as the machine allows.
fn pin_latencies(dir: &Path) {
    let latency = regex::Regex::new(r#""latency_ms": \d+"#).unwrap();
    for name in compare::files_under(dir) {
        if is_cassette(&name) {
            let path = dir.join(&name);
            let text = std::fs::read_to_string(&path).unwrap();
            let pinned = latency.replace_all(&text, r#""latency_ms": 250"#);
            std::fs::write(&path, pinned.as_bytes()).unwrap();
        }
    }
}
