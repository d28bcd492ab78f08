//! `#[prompt_test]` registers what the attribute says: checked through the same inventory the harness reads.
//! The forms here compile without warnings in a crate that forbids unsafe code, like tests/macros/ui/pass.rs.
#![forbid(unsafe_code)]
#![deny(warnings)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use prompt_tester::__private::{
    Defaults, PromptSource, RustTest, SamplingKeys, TestSpec, Written, inventory,
};
use prompt_tester::ToolSpec;
use prompt_tester::prelude::*;

const PROMPT: &str = "Reply with {word}.";
const RUNS: u32 = 4;

fn weather_tool() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "get_weather".to_string(),
        description: "Weather of a city".to_string(),
        input_schema: Default::default(),
    }]
}

/// A custom executor that answers with what it was given, so the test can see the strings arrive.
async fn echo(prompt: &str, model: &str, max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(
        format!("{model}|{max_tokens}|{prompt}"),
        1,
        2,
    ))
}

const SUMMARY_LINE: u32 = line!() + 9;
#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    subject_model = "gemini-3.1-flash-lite",
    subject_provider = "google",
    target_prompt_vars(text = "Alice leads Project Phoenix.", n = 3),
    runs = 5,
    pass_threshold = 0.8
)]
async fn summary_mentions_alice(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.contains("Alice"), "no Alice in {:?}", run.output);
    Ok(())
}

#[prompt_test(
    target_prompt_file = "macros/fixtures/translate.md",
    subject_model = Model::ClaudeHaiku45,
    subject_provider = Provider::Anthropic,
    target_prompt_vars(language = "French", r#text = 1.5),
    max_tokens = 64,
    judge_prompt_cache,
    judge_samples = 3,
    temperature = 0,
    system = String::from("You translate."),
    tools = weather_tool(),
)]
fn sync_translation(_: PromptRun) {}

#[prompt_test(
    target_prompt = "Hi",
    pass_rate = 0.9,
    confidence = 0.9,
    max_runs = 60,
    indifference = 0.05,
    seed = 42
)]
fn adaptive(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", runs = 5, pass_threshold = 0.8, early_stop)]
fn early(_run: PromptRun) {}

#[prompt_test(target_prompt = PROMPT, target_prompt_vars(word = "yes"), runs = RUNS, run_fn = echo, pass_threshold = 1)]
async fn custom_executor(run: PromptRun) -> Result<(), std::io::Error> {
    if run.output.is_empty() {
        Err(std::io::Error::other("empty"))
    } else {
        Ok(())
    }
}

/// The third form: the whole sample.
async fn from_sample(sample: SampleContext) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(
        format!(
            "{}|{}|{}|{}",
            sample.model(),
            sample.max_tokens(),
            sample.prompt(),
            sample.run()
        ),
        1,
        2,
    ))
}

#[prompt_test(target_prompt = "Hi", run_fn = from_sample)]
async fn sample_executor(_run: PromptRun) -> anyhow::Result<()> {
    Ok(())
}

mod nested {
    use prompt_tester::prelude::*;

    #[prompt_test(target_prompt = "Hi", judge_prompt_cache = false)]
    pub fn r#type(_run: PromptRun) -> Result<(), std::fmt::Error> {
        Ok(())
    }
}

fn registered(name: &str) -> &'static RustTest {
    let found: Vec<&RustTest> = inventory::iter::<RustTest>
        .into_iter()
        .filter(|t| t.name == name)
        .collect();
    assert_eq!(found.len(), 1, "`{name}` should be registered once");
    found[0]
}

// A suite's names for the prompt, its values and the subject, as a suite user writes them.
#[prompt_test(
    prompt = "Summarise: {text}",
    inputs(text = "Alice"),
    model = "gemini-3.1-flash-lite",
    provider = "google"
)]
fn in_suite_words(_: PromptRun) {}

fn vars(spec: &TestSpec) -> Vec<(&str, &str)> {
    spec.target_prompt_vars
        .iter()
        .map(|(k, v)| (k.as_str(), v.text().expect("a text value")))
        .collect()
}

#[test]
fn registers_each_function_once() {
    let mut names: Vec<&str> = inventory::iter::<RustTest>
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "adaptive",
            "custom_executor",
            "early",
            "in_suite_words",
            "sample_executor",
            "summary_mentions_alice",
            "sync_translation",
            "type"
        ]
    );
}

#[test]
fn records_where_the_function_is() {
    let test = registered("summary_mentions_alice");
    assert_eq!(test.module_path, "macro_registry");
    assert_eq!(test.trial_name(), "summary_mentions_alice");
    assert_eq!(test.manifest_dir, env!("CARGO_MANIFEST_DIR"));
    assert_eq!(test.file, file!());
    assert_eq!(test.line, SUMMARY_LINE);
    let nested = registered("type");
    assert_eq!(nested.module_path, "macro_registry::nested");
    assert_eq!(nested.trial_name(), "nested::type");
}

/// The template of an inline `target_prompt`, `None` for a prompt file.
fn inline_prompt(spec: &TestSpec) -> Option<&'static str> {
    match spec.target_prompt {
        PromptSource::Inline(text) => Some(text),
        PromptSource::File { .. } => None,
    }
}

/// `prompt`, `inputs`, `model` and `provider` are `target_prompt`, `target_prompt_vars`,
/// `subject_model` and `subject_provider`.
#[test]
fn a_suite_s_names_fill_the_same_spec() {
    let spec = (registered("in_suite_words").spec)();
    assert_eq!(inline_prompt(&spec), Some("Summarise: {text}"));
    assert_eq!(vars(&spec), [("text", "Alice")]);
    assert_eq!(
        (
            spec.request.call.provider.as_deref(),
            spec.request.call.model.as_deref()
        ),
        (Some("google"), Some("gemini-3.1-flash-lite"))
    );
}

#[test]
fn literal_keys_fill_the_spec() {
    let spec = (registered("summary_mentions_alice").spec)();
    assert_eq!(
        inline_prompt(&spec),
        Some("Summarise in one sentence: {text}")
    );
    // Only the provider and the model: max_tokens, system, temperature and tools are left to defaults.
    assert_eq!(
        spec.request,
        Written {
            call: Defaults {
                provider: Some("google".into()),
                model: Some("gemini-3.1-flash-lite".into()),
                ..Defaults::default()
            },
            ..Written::default()
        }
    );
    assert_eq!(
        vars(&spec),
        [("text", "Alice leads Project Phoenix."), ("n", "3")]
    );
    assert_eq!(spec.sampling.runs, Some(5));
    assert_eq!(spec.sampling.pass_threshold, Some(0.8));
    assert!(!spec.judge_prompt_cache);
    assert!(spec.run_fn.is_none());
}

#[test]
fn expressions_enums_and_prompt_files_fill_the_spec() {
    let spec = (registered("sync_translation").spec)();
    match spec.target_prompt {
        PromptSource::File { path, text } => {
            assert_eq!(path, "macros/fixtures/translate.md");
            assert_eq!(text, include_str!("fixtures/translate.md"));
        }
        PromptSource::Inline(text) => panic!("expected the prompt file, got inline {text:?}"),
    }
    assert_eq!(spec.request.call.model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(spec.request.call.provider.as_deref(), Some("anthropic"));
    assert_eq!(vars(&spec), [("language", "French"), ("text", "1.5")]);
    assert_eq!(spec.request.call.max_tokens, Some(64));
    assert!(spec.judge_prompt_cache);
    assert_eq!(spec.judge_samples, Some(3));
    assert_eq!(spec.request.call.temperature, Some(0.0));
    assert_eq!(spec.request.system.as_deref(), Some("You translate."));
    let tools = spec.request.tools.as_deref().unwrap_or_default();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "get_weather");
    assert_eq!(spec.sampling, SamplingKeys::default(), "defaults");

    let spec = (registered("type").spec)();
    assert_eq!(inline_prompt(&spec), Some("Hi"));
    assert!(!spec.judge_prompt_cache);
    assert_eq!(spec.judge_samples, None, "[judge]'s applies");
    assert_eq!(spec.request.call.model, None);
}

#[test]
fn sampling_keys_and_the_seed_fill_the_spec() {
    let spec = (registered("adaptive").spec)();
    assert_eq!(
        spec.sampling,
        SamplingKeys {
            pass_rate: Some(0.9),
            confidence: Some(0.9),
            max_runs: Some(60),
            indifference: Some(0.05),
            ..SamplingKeys::default()
        }
    );
    assert_eq!(spec.request.call.seed, Some(42));
    let spec = (registered("early").spec)();
    assert_eq!(spec.sampling.early_stop, Some(true));
    assert_eq!(spec.request.call.seed, None);
}

#[test]
fn run_fn_receives_the_prompt_model_and_max_tokens() {
    let spec = (registered("custom_executor").spec)();
    assert_eq!(inline_prompt(&spec), Some("Reply with {word}."));
    assert_eq!(spec.sampling.runs, Some(RUNS));
    assert_eq!(spec.sampling.pass_threshold, Some(1.0));
    let run_fn = spec.run_fn.expect("run_fn is registered");
    // `echo` never waits, so one poll finishes it; no runtime needed.
    let request = prompt_tester::CompletionRequest::new("m-1", "Reply with yes.", 7);
    let engine = prompt_tester::testing::TestEngine::new(
        prompt_tester::Config::defaults(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))),
        prompt_tester::CassetteMode::Off,
    );
    let mut future = pin!(run_fn(engine.sample("custom_executor", request)));
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => {
            let result = result.expect("echo succeeds");
            assert_eq!(result.text, "m-1|7|Reply with yes.");
            assert_eq!((result.input_tokens, result.output_tokens), (1, 2));
        }
        Poll::Pending => panic!("echo should finish on the first poll"),
    }
}

#[test]
fn run_fn_s_third_form_receives_the_sample() {
    let run_fn = (registered("sample_executor").spec)()
        .run_fn
        .expect("run_fn is registered");
    let engine = prompt_tester::testing::TestEngine::new(
        prompt_tester::Config::defaults(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))),
        prompt_tester::CassetteMode::Off,
    );
    let request = prompt_tester::CompletionRequest::new("m-2", "Say hi.", 9);
    let mut future = pin!(run_fn(engine.sample("sample_executor", request)));
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => assert_eq!(result.expect("it succeeds").text, "m-2|9|Say hi.|1"),
        Poll::Pending => panic!("from_sample should finish on the first poll"),
    }
}

#[test]
fn functions_stay_callable_as_written() {
    let _: fn(PromptRun) = sync_translation;
    let _: fn(PromptRun) -> Result<(), std::fmt::Error> = nested::r#type;
    let _ = summary_mentions_alice;
    let _ = custom_executor;
}

/// Two harnesses in one process keep their own records: no static holds the data of a run.
#[test]
fn two_harnesses_in_one_process_report_only_their_own_trials() {
    let dir = std::env::temp_dir().join(format!("pt-two-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trial = registered("custom_executor").trial_name();
    let run = |filter: &str, report: &std::path::Path| {
        let args = [
            "registry",
            "--no-cassette",
            "--exact",
            filter,
            "--include-ignored",
            "--report",
        ]
        .map(String::from)
        .into_iter()
        .chain([report.display().to_string()]);
        prompt_tester::Harness::new()
            .configure(|c| {
                c.defaults.provider = Some("openai".into());
                c.defaults.model = Some("m-1".into());
            })
            .run_with_args(args)
    };
    let names = |report: &std::path::Path| {
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        json["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let (first, second) = (dir.join("first.json"), dir.join("second.json"));
    let single = format!("{trial}::run_2");
    assert_eq!(run(&trial, &first), std::process::ExitCode::SUCCESS);
    assert_eq!(run(&single, &second), std::process::ExitCode::SUCCESS);
    assert_eq!(names(&first), [trial.as_str()]);
    assert_eq!(names(&second), [single]);
    let _ = std::fs::remove_dir_all(&dir);
}
