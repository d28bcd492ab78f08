//! The judge over real HTTP: fake providers on 127.0.0.1 (one per test, each a named endpoint of one
//! engine, so tests run in parallel without sharing scripted replies) for the three wire formats, and
//! the real local model behind llama-server at `PROMPT_TESTER_LOCAL_BASE_URL` (see `tests/prereq`).

mod common;
mod prereq;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use prompt_tester::config::{AdvisoryPolicy, Config, EndpointConfig, JudgeConfig, WireFormat};
use prompt_tester::judge::Advisory;
use prompt_tester::testing::TestEngine;
use prompt_tester::{CassetteMode, JudgeVerdict, PromptRun, RunError};
use prompt_tester_testkit::child::assert_contains;
use prompt_tester_testkit::{CapturedRequest, FakeProvider, Reply, Usage, Wire};
use serde_json::{Value, json};

/// The endpoints of this binary's engine: one fake provider each.
const ENDPOINTS: &[(&str, Wire)] = &[
    ("anthropic_verdict", Wire::Anthropic),
    ("gemini_verdict", Wire::Gemini),
    ("openai_verdict", Wire::OpenAi),
    ("anthropic_all", Wire::Anthropic),
    ("gemini_all", Wire::Gemini),
    ("openai_all", Wire::OpenAi),
    ("anthropic_error", Wire::Anthropic),
    ("gemini_error", Wire::Gemini),
    ("openai_error", Wire::OpenAi),
    ("prose_then_json", Wire::OpenAi),
    ("prose_forever", Wire::OpenAi),
    ("parallel", Wire::OpenAi),
    ("configured", Wire::OpenAi),
    ("all_missing", Wire::OpenAi),
    ("all_duplicate", Wire::OpenAi),
    ("requiring", Wire::OpenAi),
];

const PROMPT: &str =
    "Summarise in one sentence: Alice leads Project Phoenix. Budget: $2M. Deadline: Q3.";
const OUTPUT: &str = "Alice leads Project Phoenix, a $2M project\ndue in Q3.";

struct Fixture {
    fakes: BTreeMap<&'static str, FakeProvider>,
    engine: TestEngine,
}

/// Starts the fakes and the engine once for the whole binary.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut config = Config::defaults(root);
        config.cassette_dir = std::env::temp_dir().join(format!("pt-judge-{}", std::process::id()));
        config.retry.max_attempts = 2;
        config.retry.initial_backoff = Duration::from_millis(1);
        config.retry.max_backoff = Duration::from_millis(5);
        let mut fakes = BTreeMap::new();
        for &(name, wire) in ENDPOINTS {
            let fake = FakeProvider::start();
            config
                .endpoints
                .insert(name.to_string(), common::endpoint(name, &fake, wire, 8));
            fakes.insert(name, fake);
        }
        if let Some(url) = prereq::local_base_url_var() {
            config.endpoints.insert(
                "local".to_string(),
                EndpointConfig {
                    name: "local".to_string(),
                    wire: WireFormat::OpenAi,
                    base_url: url,
                    api_key_env: Vec::new(),
                    max_in_flight: 4,
                },
            );
        }
        config.judge = Some(judge("configured"));
        Fixture {
            fakes,
            engine: TestEngine::new(config, CassetteMode::Off),
        }
    })
}

fn fake(name: &str) -> &'static FakeProvider {
    &fixture().fakes[name]
}

fn judge(provider: &str) -> JudgeConfig {
    JudgeConfig {
        max_tokens: 300,
        ..JudgeConfig::new(provider, "judge-model")
    }
}

/// Runs a future on the engine's runtime, where its HTTP client lives.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    fixture();
    fixture().engine.block_on(future)
}

/// The question most of these tests put to the judge, asked on `run` through `config`.
fn ask_alice(run: &PromptRun, config: &JudgeConfig) -> Result<JudgeVerdict, RunError> {
    block_on(run.__judge_with(config).ask("Is Alice mentioned?"))
}

fn run(test: &str, cache_judge: bool) -> PromptRun {
    fixture()
        .engine
        .prompt_run(test, PROMPT, OUTPUT, cache_judge)
}

fn verdict_json(reasoning: &str, snippet: Option<&str>, answer: &str) -> Value {
    json!({"question_type": "factual_presence", "reasoning": reasoning, "snippet": snippet, "answer": answer})
}

fn indexed(index: u64, reasoning: &str, answer: &str) -> Value {
    json!({"index": index, "question_type": "factual_presence", "reasoning": reasoning, "snippet": null, "answer": answer})
}

/// The structured answer `value` in `request`'s wire format, with fixed token counts.
fn structured(request: &CapturedRequest, value: &Value, usage: Usage) -> Reply {
    let wire = request.wire().expect("a known wire format");
    match wire {
        Wire::Anthropic => Reply::tool_call(
            wire,
            "judge-model",
            &request.forced_tool().expect("the verdict tool is forced"),
            value,
            usage,
        ),
        Wire::Gemini | Wire::OpenAi => Reply::text(wire, "judge-model", &value.to_string(), usage),
    }
}

/// The judge's answer `text` in plain text, over the OpenAI wire.
fn says(text: &str, usage: Usage) -> Reply {
    Reply::text(Wire::OpenAi, "judge-model", text, usage)
}

/// The fake `name`, answering every judge call with the structured `value`.
fn answering(name: &str, value: Value, usage: Usage) -> &'static FakeProvider {
    let fake = fake(name);
    fake.respond_with(move |request| structured(request, &value, usage));
    fake
}

/// What `ask_all` answers.
type Verdicts = Result<Vec<JudgeVerdict>, RunError>;

/// An `ask_all` of three `questions` on a fresh run of the test `name`, judged by the fake `name`,
/// which answers the three with the verdicts `first` and the questions asked again with `again`: the
/// fake, the run (its usage counts the judge calls) and the answer.
fn ask_three(
    name: &str,
    questions: [&str; 3],
    first: Value,
    again: Value,
    usage: Usage,
) -> (&'static FakeProvider, PromptRun, Verdicts) {
    let fake = fake(name);
    fake.respond_with(move |request| {
        let verdicts = if asked(request).len() == 3 {
            &first
        } else {
            &again
        };
        structured(request, &json!({ "verdicts": verdicts }), usage)
    });
    let run = run(name, false);
    let answer = block_on(run.__judge_with(&judge(name)).ask_all(&questions));
    (fake, run, answer)
}

fn only_request(fake: &FakeProvider) -> CapturedRequest {
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "one judge call expected: {requests:#?}");
    requests.into_iter().next().unwrap()
}

fn body(request: &CapturedRequest) -> &Value {
    request.json.as_ref().expect("a JSON body")
}

/// What every provider's request carries: the instructions apart from the data, the fenced response
/// and the question, the judge's model settings.
fn assert_judge_payload(request: &CapturedRequest, question: &str) {
    let user = request.last_user_text().expect("a user message");
    assert!(user.contains(OUTPUT), "{user}");
    assert!(user.contains(PROMPT), "{user}");
    assert!(user.contains("<<<RESPONSE "), "{user}");
    assert!(user.contains(question), "{user}");
    assert!(
        !user.contains("Classify each question"),
        "instructions stay in the system prompt: {user}"
    );
    let text = body(request).to_string();
    assert!(
        text.contains("Classify each question"),
        "the instructions are sent: {text}"
    );
    assert_eq!(request.model().as_deref(), Some("judge-model"));
}

fn assert_verdict_schema(schema: &Value) {
    let properties = schema["properties"].as_object().expect("schema properties");
    let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["question_type", "reasoning", "snippet", "answer"],
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["answer"]["enum"],
        json!(["yes", "no"]),
        "{schema}"
    );
}

#[test]
fn anthropic_forces_the_verdict_tool_and_caches_the_instructions_when_asked() {
    let fake = answering(
        "anthropic_verdict",
        verdict_json(
            "Alice is named as the lead.",
            Some("Alice leads Project Phoenix"),
            "yes",
        ),
        Usage::new(900, 40),
    );
    let cached = run("anthropic_cached", true);
    let config = judge("anthropic_verdict");
    let verdict = ask_alice(&cached, &config).unwrap();
    // Field by field: the verdict is `#[non_exhaustive]`, built only by the library.
    assert_eq!(verdict.question, "Is Alice mentioned?");
    assert_eq!(verdict.answer, "yes");
    assert!(verdict.passed);
    assert_eq!(
        verdict.snippet.as_deref(),
        Some("Alice leads Project Phoenix")
    );
    assert_eq!(
        verdict.reasoning.as_deref(),
        Some("Alice is named as the lead.")
    );
    assert_eq!(verdict.judge_model, "judge-model");
    assert_eq!(verdict.judge_provider, "anthropic_verdict");
    assert_eq!(
        (verdict.judge_input_tokens, verdict.judge_output_tokens),
        (900, 40)
    );
    assert_eq!(verdict.judge_cost_usd, None);
    assert_eq!(verdict.question_type.as_deref(), Some("factual_presence"));
    assert_eq!(verdict.measurement, None);
    // Nothing measures this judge.
    assert_eq!(
        verdict.advisory,
        Some(Advisory::Unmeasured {
            question_type: Some("factual_presence".into())
        })
    );
    assert_eq!(verdict.votes, None);
    assert_eq!(verdict.on_advisory, AdvisoryPolicy::Fail);
    let request = only_request(fake);
    assert_eq!(request.path, "/v1/messages");
    assert_judge_payload(&request, "Is Alice mentioned?");
    let b = body(&request);
    assert_eq!(request.forced_tool().as_deref(), Some("judge_verdict"));
    assert_eq!(b["tools"][0]["name"], "judge_verdict");
    assert_verdict_schema(&b["tools"][0]["input_schema"]);
    assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral", "{b}");
    assert_eq!(b["max_tokens"], 300);
    assert_eq!(b["temperature"], 0.0);
    // The judge call is accounted as a judge call, apart from the subject's.
    let usage = cached.__usage();
    assert_eq!(
        (
            usage.judge.calls,
            usage.judge.tokens.input,
            usage.judge.tokens.output
        ),
        (1, 900, 40)
    );
    assert_eq!(usage.subject.calls, 0);

    fake.reset();
    let uncached = run("anthropic_uncached", false);
    ask_alice(&uncached, &config).unwrap();
    let b = body(&only_request(fake)).clone();
    assert!(b.to_string().contains("Classify each question"));
    assert!(
        !b.to_string().contains("cache_control"),
        "no cache_control without judge_prompt_cache: {b}"
    );
}

#[test]
fn gemini_sends_a_response_schema_and_the_verdict_comes_back_as_text() {
    let fake = answering(
        "gemini_verdict",
        verdict_json("Bob is not named anywhere.", None, "yes"),
        Usage::new(800, 30),
    );
    let run = run("gemini", false);
    let config = judge("gemini_verdict");
    let verdict = block_on(
        run.__judge_with(&config)
            .ask("Does the response avoid mentioning Bob?"),
    )
    .unwrap();
    assert!(verdict.passed);
    assert_eq!(verdict.answer, "yes");
    assert_eq!(verdict.snippet, None);
    assert_eq!(
        (verdict.judge_input_tokens, verdict.judge_output_tokens),
        (800, 30)
    );
    let request = only_request(fake);
    assert_eq!(request.path, "/v1beta/models/judge-model:generateContent");
    assert_judge_payload(&request, "Does the response avoid mentioning Bob?");
    let generation = &body(&request)["generationConfig"];
    assert_eq!(
        generation["responseMimeType"], "application/json",
        "{generation}"
    );
    assert_verdict_schema(&generation["responseSchema"]);
    assert_eq!(
        generation["responseSchema"]["properties"]["snippet"]["nullable"], true,
        "{generation}"
    );
}

#[test]
fn openai_sends_a_json_schema_response_format() {
    // The judge quotes with straightened quotes and re-flowed lines; the snippet returned is the
    // output's own text.
    let fake = answering(
        "openai_verdict",
        verdict_json("The deadline is Q3.", Some("a $2M project due in Q3"), "no"),
        Usage::new(700, 20),
    );
    let run = run("openai", false);
    let config = judge("openai_verdict");
    let verdict = block_on(run.__judge_with(&config).ask("Is the deadline Q4?")).unwrap();
    assert!(!verdict.passed);
    assert_eq!(verdict.answer, "no");
    assert_eq!(verdict.snippet.as_deref(), Some("a $2M project\ndue in Q3"));
    let request = only_request(fake);
    assert_eq!(request.path, "/v1/chat/completions");
    assert_judge_payload(&request, "Is the deadline Q4?");
    let b = body(&request);
    assert_eq!(b["response_format"]["type"], "json_schema", "{b}");
    assert_eq!(b["response_format"]["json_schema"]["name"], "judge_verdict");
    assert_verdict_schema(&b["response_format"]["json_schema"]["schema"]);
    assert_eq!(b["messages"][0]["role"], "system");
}

/// The numbered questions of a judge request's user message, in order.
fn asked(request: &CapturedRequest) -> Vec<String> {
    let user = request.last_user_text().unwrap_or_default();
    user.lines()
        .filter_map(|l| l.split_once(". "))
        .filter(|(n, _)| n.parse::<u32>().is_ok())
        .map(|(_, q)| q.to_string())
        .collect()
}

/// `ask_all` on every wire format: verdicts matched by index whatever their order; the question the
/// reply has no verdict for is asked again, alone, and its verdict merged; every verdict carries the
/// tokens of both calls.
#[test]
fn ask_all_matches_verdicts_by_index_and_asks_again_for_a_missing_one() {
    for name in ["anthropic_all", "gemini_all", "openai_all"] {
        let (fake, run, verdicts) = ask_three(
            name,
            [
                "Is Alice mentioned?",
                "Is Bob mentioned?",
                "Is a price given?",
            ],
            json!([
                indexed(3, "No price is given.", "no"),
                indexed(1, "Alice is named.", "yes"),
            ]),
            json!([indexed(1, "Bob is not named.", "no")]),
            Usage::new(1000, 90),
        );
        let verdicts = verdicts.unwrap();
        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "{name}: one call, then one re-ask");
        let user = requests[0].last_user_text().unwrap();
        assert!(
            user.contains("1. Is Alice mentioned?\n2. Is Bob mentioned?\n3. Is a price given?"),
            "{user}"
        );
        assert_eq!(asked(&requests[1]), ["Is Bob mentioned?"], "{name}");
        for request in &requests {
            let schema_name = match request.wire().unwrap() {
                Wire::Anthropic => request.forced_tool().unwrap(),
                Wire::Gemini => {
                    let schema = &body(request)["generationConfig"]["responseSchema"];
                    assert_eq!(
                        schema["properties"]["verdicts"]["type"], "array",
                        "{schema}"
                    );
                    "judge_verdicts".to_string()
                }
                Wire::OpenAi => body(request)["response_format"]["json_schema"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            };
            assert_eq!(schema_name, "judge_verdicts", "{name}");
        }

        assert_eq!(verdicts.len(), 3, "{name}");
        let summary: Vec<(&str, &str, bool, Option<&str>)> = verdicts
            .iter()
            .map(|v| {
                (
                    v.question.as_str(),
                    v.answer.as_str(),
                    v.passed,
                    v.reasoning.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("Is Alice mentioned?", "yes", true, Some("Alice is named.")),
                ("Is Bob mentioned?", "no", false, Some("Bob is not named.")),
                ("Is a price given?", "no", false, Some("No price is given.")),
            ],
            "{name}"
        );
        for v in &verdicts {
            assert_eq!(
                (v.judge_input_tokens, v.judge_output_tokens),
                (2000, 180),
                "{name}"
            );
            assert_eq!(v.judge_provider, name);
        }
        assert_eq!(run.__usage().judge.calls, 2, "{name}");
    }
}

/// A question still without a verdict after the re-ask is an error that names it: no verdict is
/// ever filled in.
#[test]
fn ask_all_fails_naming_the_questions_still_without_a_verdict() {
    // The first reply answers question 1 only; asked again about 2 and 3, the judge answers 3 only.
    let (fake, _, answer) = ask_three(
        "all_missing",
        [
            "Is Alice mentioned?",
            "Is Bob mentioned?",
            "Is Q3 the deadline?",
        ],
        json!([indexed(1, "Alice is named.", "yes")]),
        json!([indexed(2, "Q3 is named.", "yes")]),
        Usage::new(10, 1),
    );
    let err = answer.unwrap_err();
    let message = err.to_string();
    assert_eq!(
        message,
        "judge returned no verdict for question 2 \"Is Bob mentioned?\", even when asked again"
    );
    assert!(
        matches!(&err, RunError::MissingVerdicts(q) if q == &[(2, "Is Bob mentioned?".to_string())]),
        "{err:?}"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "asked again once");
    assert_eq!(
        asked(&requests[1]),
        ["Is Bob mentioned?", "Is Q3 the deadline?"]
    );
}

/// Two verdicts numbered alike: neither can be trusted for that question, and one question lacks a
/// verdict; both are asked again.
#[test]
fn ask_all_asks_again_when_two_verdicts_share_a_number() {
    let (fake, _, answer) = ask_three(
        "all_duplicate",
        ["A?", "B?", "C?"],
        json!([
            indexed(1, "first", "yes"),
            indexed(1, "second", "no"),
            indexed(3, "third", "yes"),
        ]),
        json!([indexed(1, "again 1", "yes"), indexed(2, "again 2", "no")]),
        Usage::new(10, 1),
    );
    let verdicts = answer.unwrap();
    let reasons: Vec<Option<&str>> = verdicts.iter().map(|v| v.reasoning.as_deref()).collect();
    assert_eq!(reasons, [Some("again 1"), Some("again 2"), Some("third")]);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(asked(&requests[1]), ["A?", "B?"]);
}

#[test]
fn http_errors_are_call_errors_on_every_wire() {
    for (name, wire) in [
        ("anthropic_error", Wire::Anthropic),
        ("gemini_error", Wire::Gemini),
        ("openai_error", Wire::OpenAi),
    ] {
        let fake = fake(name);
        fake.push(Reply::error(
            wire,
            400,
            "invalid_request_error",
            "the schema is not supported",
        ));
        let run = run(name, false);
        let config = judge(name);
        let err = ask_alice(&run, &config).unwrap_err();
        let RunError::Call { error: message, .. } = &err else {
            panic!("{name}: a call error expected, got {err:?}")
        };
        assert_contains(
            &message.to_string(),
            &["the schema is not supported", "400"],
        );
        // The cause is typed: the provider's status, and that it was not retried.
        assert_eq!(
            message.kind(),
            &prompt_tester::CallErrorKind::Provider {
                status: Some(400),
                attempts: 1
            },
            "{name}"
        );
        assert!(!message.kind().retried(), "{name}");
        assert!(err.to_string().starts_with("judge call failed: "), "{err}");
        // A 400 is not retried, and a failed call is no verdict: nothing was guessed.
        assert_eq!(fake.request_count(), 1, "{name}");

        // A server error is retried by the provider client, then reported.
        fake.reset();
        fake.push_all([
            Reply::server_error(wire, 500),
            Reply::server_error(wire, 500),
        ]);
        let err = ask_alice(&run, &config).unwrap_err();
        assert!(
            matches!(&err, RunError::Call { error: m, .. } if m.to_string().contains("500")
                && m.kind().retried()
                && std::error::Error::source(m).is_some()),
            "{name}: {err:?}"
        );
        assert_eq!(fake.request_count(), 2, "{name}");
    }
}

#[test]
fn a_server_that_ignores_the_schema_gets_one_retry() {
    let fake = fake("prose_then_json");
    fake.push_all([
        says("Yes, Alice is clearly mentioned.", Usage::new(600, 10)),
        says(
            "Sure:\n```json\n{\"Reasoning\": \"Alice is named.\", \"snippet\": \"Alice leads\", \"Answer\": \"YES\"}\n```",
            Usage::new(650, 25),
        ),
    ]);
    let run = run("prose_then_json", false);
    // A priced model: the verdict's cost is both calls', at the model's list price.
    let config = JudgeConfig {
        model: "claude-haiku-4-5".into(),
        ..judge("prose_then_json")
    };
    let verdict = ask_alice(&run, &config).unwrap();
    assert!(verdict.passed);
    assert_eq!(verdict.answer, "yes");
    assert_eq!(verdict.snippet.as_deref(), Some("Alice leads"));
    // Both calls are on the verdict and in the judge's tally.
    assert_eq!(
        (verdict.judge_input_tokens, verdict.judge_output_tokens),
        (1250, 35)
    );
    let usage = run.__usage();
    assert_eq!(usage.judge.calls, 2);
    let expected = (1250.0 * 1.0 + 35.0 * 5.0) / 1e6;
    let cost = verdict.judge_cost_usd.expect("claude-haiku-4-5 is priced");
    assert!((cost - expected).abs() < 1e-12, "{cost} != {expected}");
    assert!((usage.judge.cost.priced_usd() - cost).abs() < 1e-12);
    assert_eq!(usage.subject.cost.priced_usd(), 0.0);
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let (first, second) = (
        requests[0].last_user_text().unwrap(),
        requests[1].last_user_text().unwrap(),
    );
    assert!(!first.contains("REMINDER"), "{first}");
    assert!(
        second.starts_with(&first) && second.contains("REMINDER"),
        "{second}"
    );
}

#[test]
fn a_reply_without_a_verdict_is_an_error_not_a_no() {
    let fake = fake("prose_forever");
    fake.respond_with(|_| says("I think the response is fine overall.", Usage::new(600, 9)));
    let run = run("prose_forever", false);
    let config = judge("prose_forever");
    let err = ask_alice(&run, &config).unwrap_err();
    let RunError::NoVerdict(what) = &err else {
        panic!("NoVerdict expected, got {err:?}")
    };
    assert_contains(what, &["I think the response is fine overall."]);
    assert!(
        err.to_string().starts_with("judge returned no verdict: "),
        "{err}"
    );
    assert_eq!(fake.request_count(), 2, "one retry");

    let err = block_on(run.__judge_with(&config).ask_all(&["A?", "B?"])).unwrap_err();
    assert!(matches!(err, RunError::NoVerdict(_)), "{err:?}");
}

/// Each question is its own call, all in flight together; a failure waits for the others, then one
/// error lists every failure in question order.
#[test]
fn ask_parallel_waits_for_every_call_and_lists_every_failure() {
    let fake = fake("parallel");
    fake.respond_with(|request| {
        let user = request.last_user_text().unwrap_or_default();
        let question = user
            .rsplit("QUESTION:\n")
            .next()
            .unwrap_or_default()
            .to_string();
        if question.contains("broken") {
            Reply::error(
                Wire::OpenAi,
                400,
                "invalid_request_error",
                "broken question",
            )
        } else if question.contains("mumble") {
            says("hmm", Usage::new(5, 1))
        } else {
            // Slow answers: the failures land first, and the calls overlap.
            structured(
                request,
                &verdict_json("ok", None, "yes"),
                Usage::new(100, 10),
            )
            .delayed(Duration::from_millis(300))
        }
    });
    let run = run("parallel", false);
    let config = judge("parallel");
    let judge = run.__judge_with(&config);

    let verdicts = block_on(judge.ask_parallel(&["First?", "Second?", "Third?"])).unwrap();
    assert_eq!(
        verdicts
            .iter()
            .map(|v| v.question.as_str())
            .collect::<Vec<_>>(),
        ["First?", "Second?", "Third?"]
    );
    assert!(
        verdicts
            .iter()
            .all(|v| v.passed && v.judge_input_tokens == 100)
    );
    assert_eq!(fake.max_concurrent(), 3, "the three calls overlap");

    fake.reset();
    let err = block_on(judge.ask_parallel(&[
        "Good one?",
        "A broken one?",
        "Another good one?",
        "A mumble?",
    ]))
    .unwrap_err();
    // Every call landed before the error came back.
    assert_eq!(fake.in_flight(), 0);
    assert_eq!(
        fake.request_count(),
        4 + 1,
        "four questions and the retry of the mumble"
    );
    let RunError::Several(failures) = &err else {
        panic!("Several expected, got {err:?}")
    };
    let failed: Vec<&str> = failures.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(failed, ["A broken one?", "A mumble?"]);
    assert!(
        matches!(&failures[0].1, RunError::Call { error: m, .. } if m.to_string().contains("broken question")),
        "{err}"
    );
    assert!(
        matches!(&failures[1].1, RunError::NoVerdict(m) if m.contains("hmm")),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with("2 judge question(s) failed:\n- \"A broken one?\": judge call failed:"),
        "{message}"
    );
    // Accounted: the three good calls, then two good ones and the mumble twice; the failed HTTP call
    // produced no usage.
    assert_eq!(run.__usage().judge.calls, 3 + 2 + 2);
}

/// `require()` passes a "yes" through and turns a "no" into an error that shows the question, the
/// answer, the reasoning, the snippet and, with nothing measuring the judge, that the verdict is
/// advisory; under `[judge] advisory = "warn"` an advisory "no" passes through, under `"error"` it errors.
#[test]
fn require_passes_a_yes_and_shows_everything_of_a_no() {
    let fake = fake("requiring");
    fake.respond_with(|request| {
        let question = request.last_user_text().unwrap_or_default();
        let value = if question.contains("Is Alice mentioned?") {
            verdict_json("Alice is named.", Some("Alice leads"), "yes")
        } else {
            json!({"question_type": "avoidance", "reasoning": "The budget is stated.", "snippet": "a $2M project", "answer": "no"})
        };
        structured(request, &value, Usage::new(50, 5))
    });
    let run = run("requiring", false);
    let config = judge("requiring");
    let yes = block_on(run.__judge_with(&config).ask("Is Alice mentioned?"))
        .unwrap()
        .require()
        .unwrap();
    assert_eq!(yes.answer, "yes");
    let question = "Does the summary avoid naming the budget?";
    let failed = block_on(run.__judge_with(&config).ask(question))
        .unwrap()
        .require()
        .unwrap_err();
    assert_eq!(
        failed.to_string(),
        "the judge answered \"no\" to \"Does the summary avoid naming the budget?\"\n  \
         reasoning: The budget is stated.\n  snippet: \"a $2M project\"\n  judge requiring/judge-model\n  \
         advisory: this judge is not measured on avoidance questions"
    );
    // "warn": the advisory "no" is returned as it is, and does not fail the body.
    let reported = JudgeConfig {
        advisory: AdvisoryPolicy::Warn,
        ..judge("requiring")
    };
    let no = block_on(run.__judge_with(&reported).ask(question))
        .unwrap()
        .require()
        .unwrap();
    assert_eq!((no.answer.as_str(), no.passed), ("no", false));
    assert!(no.advisory.is_some());
    let erroring = JudgeConfig {
        advisory: AdvisoryPolicy::Error,
        ..judge("requiring")
    };
    let failed = block_on(run.__judge_with(&erroring).ask(question))
        .unwrap()
        .require()
        .unwrap_err();
    assert!(
        failed.to_string().starts_with(
            "the judge is not measured on this kind of question ([judge] advisory = \"error\"), and it answered \"no\""
        ),
        "{failed}"
    );
}

/// The public methods use the configured judge.
#[test]
fn the_configured_judge_answers_ask_ask_all_and_ask_parallel() {
    let fake = fake("configured");
    fake.respond_with(|request| {
        let several = request
            .last_user_text()
            .unwrap_or_default()
            .contains("QUESTIONS");
        let value = if several {
            json!({"verdicts": [indexed(1, "a", "yes"), indexed(2, "b", "no")]})
        } else {
            verdict_json("one", None, "yes")
        };
        structured(request, &value, Usage::new(50, 5))
    });
    let run = run("configured", false);
    let one = block_on(run.ask("Is Alice mentioned?")).unwrap();
    assert_eq!(
        (
            one.judge_provider.as_str(),
            one.judge_model.as_str(),
            one.passed
        ),
        ("configured", "judge-model", true)
    );
    let all = block_on(run.ask_all(&["A?", "B?"])).unwrap();
    assert_eq!(
        all.iter().map(|v| v.passed).collect::<Vec<_>>(),
        [true, false]
    );
    let parallel = block_on(run.ask_parallel(&["A?", "B?"])).unwrap();
    assert_eq!(parallel.len(), 2);
    assert_eq!(fake.request_count(), 1 + 1 + 2);
    assert!(block_on(run.ask_all(&[])).unwrap().is_empty());
    assert!(block_on(run.ask_parallel(&[])).unwrap().is_empty());
    assert_eq!(fake.request_count(), 4, "empty lists make no call");
}

/// End to end against the real local model (SmolLM2-135M behind llama-server). It checks the verdicts
/// are well formed, not that a 135M model judges correctly.
#[test]
fn the_real_local_model_returns_well_formed_verdicts() {
    let Some(url) = prereq::local_base_url("the_real_local_model_returns_well_formed_verdicts")
    else {
        return;
    };
    let run = run("local_model", false);
    let config = JudgeConfig {
        max_tokens: 400,
        ..JudgeConfig::new("local", "SmolLM2-135M-Instruct")
    };
    let judge = run.__judge_with(&config);
    let check = |v: &JudgeVerdict| {
        assert!(v.answer == "yes" || v.answer == "no", "{v:?}");
        assert_eq!(v.passed, v.answer == "yes", "{v:?}");
        assert!(
            v.reasoning.as_deref().is_some_and(|r| !r.trim().is_empty()),
            "{v:?}"
        );
        if let Some(snippet) = &v.snippet {
            assert!(
                OUTPUT.contains(snippet.as_str()),
                "a kept snippet is verbatim: {v:?}"
            );
        }
        assert!(
            v.judge_input_tokens > 0 && v.judge_output_tokens > 0,
            "{v:?}"
        );
        assert_eq!(v.judge_provider, "local");
    };
    let one = block_on(judge.ask("Is Alice mentioned in the response?"))
        .unwrap_or_else(|e| panic!("ask against {url}: {e}"));
    check(&one);
    eprintln!("local ask: {}", serde_json::to_string(&one).unwrap());
    let questions = [
        "Is Alice mentioned?",
        "Does the response avoid mentioning Bob?",
        "Is the response one sentence?",
    ];
    let all = block_on(judge.ask_all(&questions))
        .unwrap_or_else(|e| panic!("ask_all against {url}: {e}"));
    assert_eq!(all.len(), 3);
    for (v, q) in all.iter().zip(questions) {
        assert_eq!(v.question, q);
        check(v);
        eprintln!("local ask_all: {}", serde_json::to_string(v).unwrap());
    }
    let usage = run.__usage();
    // Two calls, plus a retry each at most, and a re-ask of missing verdicts for `ask_all`.
    assert!((2..=5).contains(&usage.judge.calls), "{usage:?}");
}
