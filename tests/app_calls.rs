//! The application's own model calls through the harness's recording endpoint, end to end, as a user
//! meets them: `run_fn`s written with a real third-party client (async-openai: a chat, a stream, a
//! tool call round trip) and with raw reqwest (Anthropic and Gemini, streams included) record against
//! the loopback fake provider, then replay with it stopped, under `CI`, with no key; their tokens and
//! cost are counted; no key reaches a file or the output; a changed request goes pending and
//! `cargo prompt-tester accept` takes it; with neither recording nor key the trial is ignored; two
//! trials of five samples each record at once and every sample replays its own calls; an image in
//! each API's shape is stored once beside the cassettes, which name it, and replays offline.
//!
//! The fixture is `tests/fixtures/app_calls_fixture.rs`, run in child processes in scratch roots.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use prompt_tester_testkit::child::{self, Run, Scratch};
use prompt_tester_testkit::{CapturedRequest, Echo, FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

const FIXTURE: &str = "app_calls_fixture";

const OPENAI_KEY: &str = "sk-fake-openai-5d1c9e27a4";
const ANTHROPIC_KEY: &str = "sk-ant-fake-83b0f6e1c2";
const GOOGLE_KEY: &str = "AIzaFake-google-4e7a19d0b3";
const KEYS: [(&str, &str); 3] = [
    ("OPENAI_API_KEY", OPENAI_KEY),
    ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
    ("GOOGLE_API_KEY", GOOGLE_KEY),
];

/// Every answer of the fake reports these counts.
const USAGE: Usage = Usage {
    input_tokens: 11,
    output_tokens: 4,
    cached_input_tokens: 0,
    thoughts_tokens: 0,
};

/// The prompt of the concurrency tests: each answer to it is numbered, so no two are alike.
const COUNT: &str = "Count with me.";

/// The fake: the echo (fixed usage; the tool the request offers called with `{"city": "Paris"}`),
/// numbered answers to [`COUNT`] after `latency`, and the caller's `Authorization` sent back to
/// "Repeat my key." (a provider echoing a secret).
fn fake(latency: Duration) -> FakeProvider {
    let echo = Echo {
        usage: Some(USAGE),
        tool_arguments: Some(json!({"city": "Paris"})),
        ..Echo::default()
    };
    let counter = Arc::new(AtomicUsize::new(0));
    FakeProvider::builder()
        .respond_with(move |request: &CapturedRequest| {
            let model = request.model().unwrap_or_default();
            if request.wants_structured() {
                return judge(request);
            }
            match request.last_user_text().as_deref() {
                Some(COUNT) => {
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    Reply::text(Wire::OpenAi, &model, &format!("answer {n}"), USAGE)
                        .delayed(latency)
                }
                Some("Repeat my key.") => {
                    let sent = request.header("authorization").unwrap_or("nothing");
                    Reply::text(Wire::OpenAi, &model, &format!("you sent {sent}"), USAGE)
                }
                _ => echo.reply(request),
            }
        })
        .start()
}

/// The judge's verdict: on a trajectory, yes quoting its first step; else always yes.
fn judge(request: &CapturedRequest) -> Reply {
    if request
        .last_user_text()
        .is_some_and(|t| t.contains("TRAJECTORY"))
    {
        let verdict = json!({
            "question_type": "multi_part",
            "reasoning": "It asked for the weather, then answered.",
            "snippet": "requested weather({\"city\":\"Paris\"})",
            "answer": "yes",
        });
        return Reply::structured(request, &verdict);
    }
    static JUDGE: std::sync::OnceLock<prompt_tester_testkit::Responder> =
        std::sync::OnceLock::new();
    JUDGE.get_or_init(|| prompt_tester_testkit::judge_cycling(&["yes"]))(request)
}

/// The fixture in `scratch`, built now if it is stale (`cargo test --test app_calls` alone builds no
/// example).
fn fixture(scratch: &Scratch) -> child::Child {
    scratch.child(child::fresh_example_binary(
        FIXTURE,
        Path::new(env!("CARGO_MANIFEST_DIR")),
    ))
}

/// Runs the fixture in `scratch` with `args`; with `fake`, the providers' base URLs point at it and
/// the keys are set (a developer recording); without, neither is (CI replaying).
fn run(scratch: &Scratch, args: &[&str], env: &[(&str, &str)], fake: Option<&FakeProvider>) -> Run {
    let mut child = fixture(scratch).args(args).envs(env);
    if let Some(fake) = fake {
        child = child.base_urls(fake).envs(&KEYS);
    }
    child.run()
}

/// The trials of the fixture that the record-and-replay test runs, and the calls each makes.
const TRIALS: [(&str, u64); 9] = [
    ("openai_chat", 1),
    ("openai_stream", 1),
    ("openai_tool_round_trip", 2),
    ("openai_second_stage", 2),
    ("openai_key_echoed", 1),
    ("anthropic_messages", 1),
    ("anthropic_streamed", 1),
    ("gemini_generate", 1),
    ("gemini_streamed", 1),
];

/// Every file under `dir`, with its path relative to it.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    found
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path.strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

/// Panics naming the place unless no key value is in a file under `dir` or in the runs' output.
fn assert_no_key(dir: &Path, runs: &[&Run]) {
    let files = files(dir);
    assert!(!files.is_empty());
    for (_, key) in KEYS {
        for (path, bytes) in &files {
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{key} is in {}:\n{}",
                path.display(),
                String::from_utf8_lossy(bytes)
            );
        }
        for run in runs {
            child::assert_lacks(&run.stdout(), key);
            child::assert_lacks(&run.stderr(), key);
        }
    }
}

fn report(scratch: &Scratch) -> Value {
    let text = std::fs::read_to_string(scratch.path().join("report.json")).expect("a JSON report");
    serde_json::from_str(&text).unwrap()
}

/// The subject calls, input and output tokens and cost the report counts for `test`.
fn usage_of(report: &Value, test: &str) -> (u64, u64, u64, f64) {
    let subject = &child::entry(&report["tests"], "name", test)["usage"]["subject"];
    (
        subject["calls"].as_u64().unwrap(),
        subject["input_tokens"].as_u64().unwrap(),
        subject["output_tokens"].as_u64().unwrap(),
        subject["cost_usd"].as_f64().unwrap(),
    )
}

/// USD per call of [`USAGE`] at the price table's rates per million tokens.
fn cost(input_per_million: f64, output_per_million: f64) -> f64 {
    (11.0 * input_per_million + 4.0 * output_per_million) / 1e6
}

#[test]
fn every_client_records_then_replays_offline_under_ci_with_no_key() {
    let fake = fake(Duration::ZERO);
    let scratch = Scratch::new("app-calls", "record");
    let mut filters = vec!["--report", "report.json", "--nocapture"];
    filters.extend(child::skipping(&[
        "concurrent_",
        "app_",
        "trajectory_",
        "media_",
    ]));
    let record = run(&scratch, &filters, &[], Some(&fake));
    record.assert_success();
    let names: Vec<&str> = TRIALS.iter().map(|(name, _)| *name).collect();
    record.assert_outcomes(&names, "ok");
    let calls: u64 = TRIALS.iter().map(|(_, calls)| calls).sum();
    assert_eq!(
        fake.request_count() as u64,
        calls,
        "one request upstream per call"
    );

    // Upstream got each client's own credentials, and neither the endpoint's secret nor its port.
    let requests = fake.requests();
    let sent = |path_part: &str| -> Vec<&CapturedRequest> {
        requests
            .iter()
            .filter(|r| r.path.contains(path_part))
            .collect()
    };
    for request in sent("/v1/chat/completions") {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {OPENAI_KEY}").as_str())
        );
        assert_eq!(request.path, "/v1/chat/completions");
    }
    for request in sent("/v1/messages") {
        assert_eq!(request.header("x-api-key"), Some(ANTHROPIC_KEY));
        assert_eq!(request.path, "/v1/messages");
    }
    // The key the application put in the query (`?key=`) goes upstream in Gemini's header instead,
    // so that no URL carries it.
    let generate = sent(":generateContent");
    assert_eq!(
        generate[0].path,
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(generate[0].header("x-goog-api-key"), Some(GOOGLE_KEY));
    let streamed = sent(":streamGenerateContent");
    assert_eq!(
        streamed[0].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(streamed[0].header("x-goog-api-key"), Some(GOOGLE_KEY));

    // Tokens and cost are what the provider reported on the wire, streams included, each call once:
    // `openai_tool_round_trip`'s run_fn returns its own sum, which is not added on top.
    let recorded = report(&scratch);
    let prices = [
        ("openai", cost(0.15, 0.6)),
        ("anthropic", cost(3.0, 15.0)),
        ("gemini", cost(0.3, 2.5)),
    ];
    for (test, calls) in TRIALS {
        let (counted, input, output, usd) = usage_of(&recorded, test);
        assert_eq!(
            (counted, input, output),
            (calls, 11 * calls, 4 * calls),
            "{test}: {:#}",
            recorded["tests"]
        );
        let per_call = prices.iter().find(|(p, _)| test.starts_with(p)).unwrap().1;
        assert!(
            (usd - per_call * calls as f64).abs() < 1e-9,
            "{test}: ${usd}, expected ${}",
            per_call * calls as f64
        );
    }
    let totals = &recorded["totals"]["usage"]["subject"];
    assert_eq!(totals["calls"], calls);
    assert_eq!(totals["input_tokens"], 11 * calls);
    record.assert_stderr_has(&format!("{calls} model calls (0 replayed from cassettes"));

    // Replay: the server gone, no key, no base URL, under CI.
    drop(fake);
    let replay = run(&scratch, &filters, &[("CI", "1")], None);
    replay.assert_success();
    replay.assert_outcomes(&names, "ok");
    replay.assert_stderr_has(&format!(
        "{calls} model calls ({calls} replayed from cassettes"
    ));
    let replayed = report(&scratch);
    for (test, calls) in TRIALS {
        let (counted, input, output, _) = usage_of(&replayed, test);
        assert_eq!(
            (counted, input, output),
            (calls, 11 * calls, 4 * calls),
            "{test}"
        );
    }

    assert_no_key(scratch.path(), &[&record, &replay]);
    let echoed =
        std::fs::read_to_string(scratch.cassettes().join("openai_key_echoed.cassette.json"))
            .expect("a cassette per test");
    assert!(echoed.contains("[REDACTED"), "{echoed}");
}

/// The `SAMPLE <trial> <run> <output>` lines the concurrency trials print, by trial and run. A
/// line may start after libtest's `test <name> ... `: with several test threads it writes a trial's
/// name and its outcome in two writes, and a sample of the other trial may print between them.
fn samples(run: &Run) -> BTreeMap<(String, u32), String> {
    run.stdout()
        .lines()
        .filter_map(|line| {
            let (_, sample) = line.split_once("SAMPLE ")?;
            let mut parts = sample.splitn(3, ' ');
            let trial = parts.next()?.to_string();
            let index = parts.next()?.parse().ok()?;
            Some(((trial, index), parts.next()?.to_string()))
        })
        .collect()
}

#[test]
fn two_trials_of_five_samples_record_at_once_and_each_sample_replays_its_own_calls() {
    let fake = fake(Duration::from_millis(150));
    let scratch = Scratch::new("app-calls", "concurrent");
    let args = ["concurrent_", "--nocapture", "--test-threads=2"];
    let record = run(&scratch, &args, &[], Some(&fake));
    record.assert_success();
    record.assert_outcomes(&["concurrent_a", "concurrent_b"], "ok");
    // Five samples of a trial at once are at most five calls: more means both trials were recording.
    assert!(
        fake.max_concurrent() > 5,
        "at most {} calls at once",
        fake.max_concurrent()
    );
    let recorded = samples(&record);
    assert_eq!(recorded.len(), 10, "{}", record.context());
    // Twenty calls, twenty different answers: no sample was served another's answer.
    assert_eq!(fake.request_count(), 20);
    let mut answers: Vec<u32> = Vec::new();
    for output in recorded.values() {
        let (first, second) = output.split_once(" | ").expect("two answers");
        let n = |a: &str| a.strip_prefix("answer ").unwrap().parse::<u32>().unwrap();
        assert!(
            n(first) < n(second),
            "a sample's calls are in order: {output}"
        );
        answers.extend([n(first), n(second)]);
    }
    answers.sort();
    answers.dedup();
    assert_eq!(answers.len(), 20, "{recorded:#?}");

    drop(fake);
    let replay = run(&scratch, &args, &[("CI", "1")], None);
    replay.assert_success();
    assert_eq!(
        samples(&replay),
        recorded,
        "each sample replays its own answers, in its order\n{}",
        replay.context()
    );
    replay.assert_stderr_has("20 model calls (20 replayed from cassettes");
}

/// `cargo prompt-tester`, built once per test process so it is never stale.
fn subcommand(scratch: &Scratch, args: &[&str]) -> Run {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let binary = BUILT.get_or_init(|| {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        child::built_binary("cargo-prompt-tester", &workspace)
    });
    let mut all = vec!["prompt-tester"];
    all.extend_from_slice(args);
    let mut command = scratch.child(binary).args(all).command();
    command.stdin(std::process::Stdio::null());
    Run(command.output().expect("cargo prompt-tester runs"))
}

#[test]
fn a_changed_request_fails_under_ci_goes_pending_locally_and_accepting_it_replays() {
    let fake = fake(Duration::ZERO);
    let scratch = Scratch::new("app-calls", "pending");
    // `cargo prompt-tester` finds the crate by its manifest.
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    );
    let test = ["openai_chat", "--exact"];
    run(&scratch, &test, &[], Some(&fake)).assert_success();
    let cassette = scratch.cassettes().join("openai_chat.cassette.json");
    let pending = scratch.cassettes().join("openai_chat.pending.json");
    let accepted = std::fs::read(&cassette).expect("recorded");

    // The application now sends another system message: under CI the request has no recording.
    let warm = [("FIXTURE_TONE", "warm")];
    let stale = run(&scratch, &test, &[warm[0], ("CI", "1")], None);
    assert_eq!(stale.code(), Some(101), "{}", stale.context());
    assert_eq!(stale.outcome("openai_chat"), "FAILED");
    child::assert_contains(
        &stale.stdout(),
        &[
            "openai_chat.cassette.json",
            "plain",
            "warm",
            "cargo test --test app_calls_fixture -- openai_chat",
            "cargo prompt-tester review",
        ],
    );
    // The message as the guide shows it: the end of the long system message on each side.
    let guide = std::fs::read_to_string(child::repo_root().join("src/guide/app_calls.md")).unwrap();
    let shown = guide
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("model call failed: openai_chat.cassette.json has"))
        .expect("the guide shows the message");
    stale.assert_stdout_has(shown);

    // Locally with no key at the vendor's URL, it is not made either: async-openai sends
    // `Authorization: Bearer ` (empty), which is no credential.
    let no_key = fixture(&scratch).args(test).envs(&warm).run();
    assert_eq!(no_key.code(), Some(101), "{}", no_key.context());
    child::assert_contains(
        &no_key.stdout(),
        &[
            "plain",
            "warm",
            "cargo test --test app_calls_fixture -- openai_chat",
        ],
    );
    child::assert_lacks(&no_key.stdout(), "upstream");

    // Locally, with the server and a key, the call is made and its answer waits for review.
    let calls = fake.request_count();
    let changed = run(&scratch, &test, &warm, Some(&fake));
    changed.assert_success();
    assert_eq!(fake.request_count(), calls + 1);
    assert_eq!(
        std::fs::read(&cassette).unwrap(),
        accepted,
        "the accepted cassette is byte-identical"
    );
    assert!(pending.exists(), "{}", changed.context());
    changed.assert_stderr_has("review them with `cargo prompt-tester review`");

    let listed = subcommand(&scratch, &["pending"]);
    listed.assert_success();
    listed.assert_stdout_has("openai_chat");
    let accept = subcommand(&scratch, &["accept", "openai_chat"]);
    accept.assert_success();
    accept.assert_stdout_has("accepted openai_chat (run 1)");
    assert!(!pending.exists(), "nothing left to review");

    drop(fake);
    let replay = run(&scratch, &test, &[warm[0], ("CI", "1")], None);
    replay.assert_success();
    replay.assert_stderr_has("(1 replayed from cassettes");
    // The sample's recordings were replaced as a whole: the old request is stale now.
    let old = run(&scratch, &test, &[("CI", "1")], None);
    assert_eq!(old.code(), Some(101), "{}", old.context());
    assert_no_key(scratch.path(), &[&stale, &no_key, &changed, &replay, &old]);
}

#[test]
fn with_neither_recording_nor_key_the_trial_is_ignored_and_under_ci_it_fails() {
    // The vendor's own URL (no base URL variable), where a key is needed, and no key. async-openai
    // still sends `Authorization: Bearer ` (empty): that is no credential, so nothing is sent.
    let scratch = Scratch::new("app-calls", "ignored");
    let test = ["openai_chat", "--exact"];
    let local = fixture(&scratch).args(test).run();
    local.assert_success();
    let outcome = local.outcome("openai_chat");
    assert!(outcome.starts_with("ignored"), "{}", local.context());
    assert!(outcome.contains("OPENAI_API_KEY"), "{}", local.context());
    assert!(
        !scratch
            .cassettes()
            .join("openai_chat.cassette.json")
            .exists()
    );

    let ci = fixture(&scratch).args(test).env("CI", "1").run();
    assert_eq!(ci.code(), Some(101), "{}", ci.context());
    assert_eq!(ci.outcome("openai_chat"), "FAILED");
}

/// An application test (`AppRun`, no prompt): its body calls async-openai through `run.base_url`,
/// then asks the judge. Recorded against the loopback fake, then replayed under CI with the fake gone:
/// both pass, the cassette holds the application's calls and the judge's, and the judge was told the
/// first user message the endpoint saw as the task.
#[test]
fn an_app_run_test_records_then_replays_and_its_judge_sees_the_task() {
    let fake = fake(Duration::ZERO);
    let scratch = Scratch::new("app-calls", "app-run");
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n");
    let args = [
        "app_weather",
        "--exact",
        "--nocapture",
        "--report",
        "report.json",
    ];
    let record = run(&scratch, &args, &[], Some(&fake));
    record.assert_success();
    record.assert_outcomes(&["app_weather"], "ok");
    record.assert_stdout_has("APP 1 of 2 app_weather");
    record.assert_stdout_has("APP 2 of 2 app_weather");
    let requests = fake.requests();
    let (judged, app): (Vec<&CapturedRequest>, Vec<&CapturedRequest>) =
        requests.iter().partition(|r| r.wants_structured());
    assert_eq!(
        (app.len(), judged.len()),
        (2, 2),
        "two samples, a call and a question each"
    );
    for request in &judged {
        let told = request.last_user_text().unwrap_or_default();
        assert!(
            told.contains("What is the weather in Paris?"),
            "the judge is told the task: {told}"
        );
        assert!(
            told.contains("echo: What is the weather in Paris?"),
            "and the answer: {told}"
        );
    }
    let recorded = report(&scratch);
    let test = child::entry(&recorded["tests"], "name", "app_weather");
    assert_eq!(test["usage"]["subject"]["calls"], 2, "{test:#}");
    assert_eq!(test["usage"]["judge"]["calls"], 2, "{test:#}");
    let cassette =
        std::fs::read_to_string(scratch.cassettes().join("app_weather.cassette.json")).unwrap();
    assert!(
        cassette.contains("Answer with today's weather."),
        "{cassette}"
    );
    assert!(
        cassette.contains("Does the answer mention Paris?"),
        "{cassette}"
    );

    drop(fake);
    let replay = run(&scratch, &args, &[("CI", "1")], None);
    replay.assert_success();
    replay.assert_outcomes(&["app_weather"], "ok");
    replay.assert_stderr_has("4 model calls (4 replayed from cassettes");
    assert_no_key(scratch.path(), &[&record, &replay]);
}

/// An application test that makes no model call through the endpoint fails, saying to build the
/// client with `run.base_url(..)`.
#[test]
fn an_app_run_test_that_makes_no_call_fails_naming_base_url() {
    let scratch = Scratch::new("app-calls", "app-no-call");
    let run = fixture(&scratch).args(["app_no_call", "--exact"]).run();
    assert_eq!(run.code(), Some(101), "{}", run.context());
    assert_eq!(run.outcome("app_no_call"), "FAILED");
    run.assert_stdout_has(
        "the test made no model call through the recording endpoint: build the application's client \
         with `run.base_url(\"openai\")`",
    );
}

/// `ask_trajectory` on a `PromptRun` (a `run_fn`'s agent loop) and on an `AppRun` (the application's
/// own): the judge is sent the task, each step and the final answer, framed as a trajectory; its
/// verdict keeps the quoted step; and the judge's call replays under CI like any other.
#[test]
fn ask_trajectory_sends_the_task_the_steps_and_the_answer_and_returns_the_verdict() {
    let fake = fake(Duration::ZERO);
    let scratch = Scratch::new("app-calls", "trajectory");
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n");
    let args = ["trajectory_judged_", "--nocapture", "--test-threads=1"];
    let record = run(&scratch, &args, &[], Some(&fake));
    record.assert_success();
    record.assert_outcomes(&["trajectory_judged_prompt", "trajectory_judged_app"], "ok");
    let requests = fake.requests();
    let told: Vec<String> = requests
        .iter()
        .filter(|r| r.wants_structured())
        .map(|r| r.last_user_text().unwrap_or_default())
        .collect();
    assert_eq!(told.len(), 2, "one question per test: {told:#?}");
    // The run_fn's prompt names Paris, the application's first user message Oslo.
    for task in [
        "What is the weather in Paris?",
        "What is the weather in Oslo?",
    ] {
        let text = told
            .iter()
            .find(|t| t.contains(task))
            .unwrap_or_else(|| panic!("no judge request told {task:?}: {told:#?}"));
        child::assert_contains(
            text,
            &[
                "the task the agent was given",
                "the agent's TRAJECTORY to judge",
                "Copy the snippet from one STEP line",
                "STEPS:\n1. openai/gpt-4o-mini requested weather({\"city\":\"Paris\"})\n2. openai/gpt-4o-mini (sent back: ",
                "\"18 degrees and sunny in Paris\") answered \"echo: 18 degrees and sunny in Paris\"",
                "FINAL ANSWER:\necho: 18 degrees and sunny in Paris\n",
                "QUESTION:\nDid the agent look the weather up before answering?",
            ],
        );
    }
    for form in ["prompt", "app"] {
        record.assert_stderr_has(&format!(
            "TRAJECTORY {form} yes Some(\"requested weather({{\\\"city\\\":\\\"Paris\\\"}})\") \
             Some(\"It asked for the weather, then answered.\")"
        ));
    }

    drop(fake);
    let replay = run(&scratch, &args, &[("CI", "1")], None);
    replay.assert_success();
    replay.assert_outcomes(&["trajectory_judged_prompt", "trajectory_judged_app"], "ok");
    replay.assert_stderr_has("TRAJECTORY app yes");
}

/// `app_env`: two tests whose client reads `OPENAI_BASE_URL` record at once, each sample its own call
/// (the samples take turns), then replay offline under CI; the harness's own calls still go where
/// `OPENAI_BASE_URL` pointed before (the fake), not to the endpoint. A run that selects no `app_env`
/// test is not started again.
#[test]
fn app_env_tests_record_and_replay_with_the_base_url_variables_pointing_at_the_endpoint() {
    let fake = fake(Duration::from_millis(30));
    let scratch = Scratch::new("app-calls", "app-env");
    scratch.config("[judge]\nprovider = \"openai\"\nmodel = \"gpt-4o-mini\"\n");
    let args = ["app_env_lyon", "app_env_oslo", "app_weather", "--nocapture"];
    let record = run(&scratch, &args, &[], Some(&fake));
    record.assert_success();
    record.assert_outcomes(&["app_env_lyon", "app_env_oslo", "app_weather"], "ok");
    for city in ["lyon", "oslo"] {
        for n in 1..=3 {
            record.assert_stdout_has(&format!("APP_ENV app_env_{city} {n}"));
        }
    }
    record.assert_stdout_has("app_weather (started again: true)");
    let asked: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| !r.wants_structured())
        .filter_map(|r| r.last_user_text())
        .collect();
    for city in ["Lyon", "Oslo"] {
        for n in 1..=3 {
            let question = format!("What is the weather in {city}, sample {n}?");
            assert_eq!(
                asked.iter().filter(|q| **q == question).count(),
                1,
                "{question} reached the provider once: {asked:?}"
            );
        }
    }

    drop(fake);
    let replay = run(&scratch, &args, &[("CI", "1")], None);
    replay.assert_success();
    replay.assert_outcomes(&["app_env_lyon", "app_env_oslo", "app_weather"], "ok");
    replay.assert_stderr_has("model calls (10 replayed from cassettes");
    assert_no_key(scratch.path(), &[&record, &replay]);

    let alone = run(
        &scratch,
        &["app_weather", "--exact", "--nocapture"],
        &[("CI", "1")],
        None,
    );
    alone.assert_success();
    alone.assert_stdout_has("app_weather (started again: false)");
}

/// An `app_env` test that makes no model call fails, naming the variables to build the client from.
#[test]
fn an_app_env_test_that_makes_no_call_fails_naming_the_variables() {
    let scratch = Scratch::new("app-calls", "app-env-no-call");
    let run = fixture(&scratch).args(["app_env_no_call", "--exact"]).run();
    assert_eq!(run.code(), Some(101), "{}", run.context());
    assert_eq!(run.outcome("app_env_no_call"), "FAILED");
    run.assert_stdout_has(
        "with `app_env`, build the application's client from `ANTHROPIC_BASE_URL`, \
         `GOOGLE_GEMINI_BASE_URL` or `OPENAI_BASE_URL`",
    );
}

/// Base64 that is not media, as the fixture's media trials send it (`KEPT` there): a thought's
/// signature, reasoning's encrypted content, a text that happens to be a data URL.
const KEPT: &str = "c2lnbmF0dXJlLW9mLWEtdGhvdWdodA==";

/// Base64 that is not media in the fake's answers to them.
const ANSWER_KEPT: &str = "YW5zd2VyLXNpZ25hdHVyZQ==";

/// The media trials, and the answer's own kept field each prints (none for chat).
const MEDIA_TRIALS: [(&str, &str); 4] = [
    ("media_chat", "-"),
    ("media_responses", ANSWER_KEPT),
    ("media_anthropic", ANSWER_KEPT),
    ("media_gemini", ANSWER_KEPT),
];

fn hex_sha256(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The fake of the media trials: it finds the image where each API carries it, and answers
/// `saw <its sha256>` beside a base64 field of the API's own that is not media.
fn media_fake() -> FakeProvider {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    FakeProvider::builder()
        .respond_with(|request: &CapturedRequest| {
            let body = request.json.clone().unwrap_or_default();
            let (at, answer): (&str, fn(String) -> Value) = match request.path.as_str() {
                p if p.ends_with("/chat/completions") => ("/messages/0/content/1/image_url/url", |text| {
                    json!({"choices": [{"message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 4}})
                }),
                p if p.ends_with("/responses") => ("/input/1/content/1/image_url", |text| {
                    json!({"output": [
                        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": ANSWER_KEPT},
                        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
                    ], "usage": {"input_tokens": 11, "output_tokens": 4}})
                }),
                p if p.ends_with("/messages") => ("/messages/2/content/0/source/data", |text| {
                    json!({"content": [
                        {"type": "thinking", "thinking": "A receipt.", "signature": ANSWER_KEPT},
                        {"type": "text", "text": text}
                    ], "usage": {"input_tokens": 11, "output_tokens": 4}})
                }),
                _ => ("/contents/2/parts/1/inlineData/data", |text| {
                    json!({"candidates": [{"content": {"role": "model",
                        "parts": [{"text": text, "thoughtSignature": ANSWER_KEPT}]}}],
                        "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 4}})
                }),
            };
            let data = body.pointer(at).and_then(Value::as_str).unwrap_or_default();
            let data = data.split_once(";base64,").map_or(data, |(_, d)| d);
            let seen = STANDARD.decode(data).or_else(|_| URL_SAFE.decode(data));
            let text = match seen {
                Ok(bytes) => format!("saw {}", hex_sha256(&bytes)),
                Err(e) => format!("no image at {at}: {e}"),
            };
            Reply::json(200, &answer(text))
        })
        .start()
}

/// The output of each media trial's sample, as the JSON report has it.
fn media_outputs(scratch: &Scratch) -> BTreeMap<String, String> {
    let report = report(scratch);
    MEDIA_TRIALS
        .iter()
        .map(|(trial, _)| {
            let sample = &child::entry(&report["tests"], "name", trial)["samples"][0];
            (
                trial.to_string(),
                sample["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_image_in_each_api_s_shape_is_stored_once_beside_the_cassettes_and_replays_offline() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    let png =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/media/receipt.png"))
            .unwrap();
    let sha = hex_sha256(&png);
    let fake = media_fake();
    let scratch = Scratch::new("app-calls", "media");
    // `cargo prompt-tester` finds the crate by its manifest.
    scratch.file(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    );
    std::fs::write(scratch.path().join("receipt.png"), &png).unwrap();
    let args = ["media_", "--report", "report.json"];
    let record = run(&scratch, &args, &[], Some(&fake));
    record.assert_success();
    let names: Vec<&str> = MEDIA_TRIALS.iter().map(|(name, _)| *name).collect();
    record.assert_outcomes(&names, "ok");
    // The provider got the image's bytes, not its reference, and the other base64 as it was sent.
    let recorded = media_outputs(&scratch);
    for (trial, kept) in MEDIA_TRIALS {
        assert_eq!(
            recorded.get(trial).map(String::as_str),
            Some(format!("saw {sha} kept={kept}").as_str()),
            "{}",
            record.context()
        );
    }
    assert_eq!(fake.request_count(), 4);
    for request in fake.requests() {
        let body = String::from_utf8(request.body.clone()).unwrap();
        assert!(body.contains(KEPT), "{}: {body}", request.path);
    }

    // Each cassette names the image by its file and holds none of its base64; the kept fields are
    // there as they were, in the request and in the answer.
    let cassettes = scratch.cassettes();
    let file = format!("{sha}.png");
    let encoded = [STANDARD.encode(&png), URL_SAFE.encode(&png)];
    for (trial, kept) in MEDIA_TRIALS {
        let path = cassettes.join(format!("{trial}.cassette.json"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(text.contains(&file), "{trial}: {text}");
        for base64 in &encoded {
            // Any run of 24 characters of it: no piece of the image is inline.
            for piece in base64.as_bytes().chunks(24).filter(|c| c.len() == 24) {
                let piece = std::str::from_utf8(piece).unwrap();
                assert!(!text.contains(piece), "{trial}: {piece} in {text}");
            }
        }
        assert!(text.contains(KEPT), "{trial}: {text}");
        if kept != "-" {
            assert!(text.contains(kept), "{trial}: {text}");
        }
    }
    // The store holds it once, as it was sent.
    let media: Vec<_> = std::fs::read_dir(cassettes.join("media"))
        .expect("a media folder beside the cassettes")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(media, vec![cassettes.join("media").join(&file)]);
    assert_eq!(std::fs::read(&media[0]).unwrap(), png);

    // Replay: the server gone, no key, under CI; the same answers, kept fields byte for byte.
    drop(fake);
    let replay = run(&scratch, &args, &[("CI", "1")], None);
    replay.assert_success();
    replay.assert_stderr_has("4 model calls (4 replayed from cassettes");
    assert_eq!(media_outputs(&scratch), recorded);

    // A changed image is another request: under CI it is a stale recording, not a replay.
    let mut changed = png.clone();
    *changed.last_mut().unwrap() ^= 1;
    std::fs::write(scratch.path().join("receipt.png"), &changed).unwrap();
    let stale = run(&scratch, &["media_chat", "--exact"], &[("CI", "1")], None);
    assert!(!stale.success(), "{}", stale.context());
    let said = format!("{}{}", stale.stdout(), stale.stderr());
    let new = format!("{}.png", hex_sha256(&changed));
    // Said as a harness part's change is: its place, the shortest hashes that differ, its sizes.
    let n = file
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count()
        + 1;
    let n = n.max(4);
    let expected = format!(
        "image messages[0].content[1].image_url.url changed (sha {}… -> {}…, 75 B -> 75 B)",
        &file[..n],
        &new[..n]
    );
    assert!(said.contains(&expected), "{expected}: {said}");

    // Locally it is made and waits for review, which shows the two references, never base64; the
    // store holds both images until a prune finds one no cassette names.
    let fake = media_fake();
    let test = ["media_chat", "--exact"];
    run(&scratch, &test, &[], Some(&fake)).assert_success();
    let pending = cassettes.join("media_chat.pending.json");
    let text = std::fs::read_to_string(&pending).expect("a pending recording");
    let changed_base64 = STANDARD.encode(&changed);
    assert!(
        text.contains(&new) && !text.contains(&changed_base64[..24]),
        "{text}"
    );
    let listed = subcommand(&scratch, &["pending", "--json"]);
    listed.assert_success();
    let changes = listed.stdout();
    // The same words as the stale message: the image's place, its hashes and sizes.
    assert!(changes.contains(&expected), "{expected}: {changes}");
    assert!(!changes.contains(&changed_base64[..24]), "{changes}");
    assert_eq!(
        std::fs::read(cassettes.join("media").join(&new)).unwrap(),
        changed
    );
    subcommand(&scratch, &["accept", "media_chat"]).assert_success();
    drop(fake);
    run(&scratch, &test, &[("CI", "1")], None).assert_success();
}
