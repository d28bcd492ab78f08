// The documented forms compile without warnings in a crate that forbids unsafe code, and register.
// (The quick-start form is `summary_mentions_alice` in tests/macros/registry.rs, under the same lints.)
#![forbid(unsafe_code)]
#![deny(warnings)]

use prompt_tester::prelude::*;
use prompt_tester::ToolSpec;

#[prompt_test(
    target_prompt = "Say {word}",
    subject_model = Model::Gemini31FlashLite,
    subject_provider = Provider::Google,
    target_prompt_vars(word = String::from("hi")),
    max_tokens = 16,
    temperature = 0.2,
    system = "Be brief.",
    judge_prompt_cache = true,
    live_only,
)]
fn sync_unit_body(_run: PromptRun) {}

async fn executor(prompt: &str, model: &str, max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(format!("{model} {max_tokens} {prompt}"), 0, 0))
}

const SUBJECTS: [&str; 2] = ["local/SmolLM2-135M-Instruct", "anthropic/claude-haiku-4-5"];

#[prompt_test(target_prompt = "x", subject_models = ["local/SmolLM2-135M-Instruct", "anthropic/claude-haiku-4-5"])]
fn model_matrix(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", subject_models = SUBJECTS, runs = 2)]
fn model_matrix_from_a_constant(_run: PromptRun) {}

fn no_tools() -> Vec<ToolSpec> {
    Vec::new()
}

#[prompt_test(target_prompt = "x", run_fn = executor, tools = no_tools(), runs = 2 + 1, live_only = false)]
async fn with_run_fn(PromptRun { output, .. }: PromptRun) -> Result<(), std::io::Error> {
    if output.is_empty() { Err(std::io::Error::other("empty")) } else { Ok(()) }
}

fn weather_agent() -> Toolbox {
    Toolbox::new()
        .tool(Tool::new("get_weather", "Weather in a city", json!({"type": "object"}), |_args| async {
            Ok::<_, String>("sunny")
        }))
        .max_turns(3)
}

#[prompt_test(target_prompt = "Weather in Paris?", agent = weather_agent)]
fn with_agent_fn(run: PromptRun) {
    assert!(run.called("get_weather"));
}

#[prompt_test(target_prompt = "Weather in Paris?", agent = weather_agent().max_turns(2))]
fn with_agent_value(_run: PromptRun) {}

const EXAMPLE: &str = "Loved it.";

async fn whole_request(request: CompletionRequest) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(format!("{} turns", request.messages.len()), 0, 0))
}

#[prompt_test(
    target_prompt = "Label: {review}",
    target_prompt_vars(review = "Dull."),
    messages = [
        system("Label reviews."),
        user(format!("Label: {EXAMPLE}")),
        assistant("positive"),
    ],
    run_fn = whole_request,
)]
fn with_messages(_run: PromptRun) {}

// An application test: no prompt; any test's keys.
#[prompt_test(runs = 5, pass_threshold = 0.8, early_stop, budget = 0.5, judge_samples = 3, live_only)]
async fn app_test(run: AppRun) -> anyhow::Result<()> {
    let _url: Result<String, _> = run.base_url("openai");
    let _ = (run.run_index(), run.runs(), run.test_name());
    Ok(())
}

fn main() {
    let tests: Vec<_> = prompt_tester::__private::inventory::iter::<prompt_tester::__private::RustTest>
        .into_iter()
        .collect();
    assert_eq!(tests.len(), 8);
    let app = tests.iter().find(|t| t.name == "app_test").unwrap();
    assert!(matches!(app.body, prompt_tester::__private::Body::App(_)));
    let spec = (app.spec)();
    assert_eq!((spec.sampling.runs, spec.judge_samples, spec.live_only), (Some(5), Some(3), true));
    for name in ["model_matrix", "model_matrix_from_a_constant"] {
        let spec = (tests.iter().find(|t| t.name == name).unwrap().spec)();
        assert_eq!(spec.subject_models.as_deref(), Some(&SUBJECTS.map(String::from)[..]));
    }
    let with_run_fn = tests.iter().find(|t| t.name == "with_run_fn").unwrap();
    let spec = (with_run_fn.spec)();
    assert_eq!(spec.sampling.runs, Some(3));
    assert!(spec.run_fn.is_some());
    assert!(!spec.live_only);
    let sync_unit_body_spec = (tests.iter().find(|t| t.name == "sync_unit_body").unwrap().spec)();
    assert!(sync_unit_body_spec.live_only, "a bare `live_only` sets it");
    for (name, turns) in [("with_agent_fn", 3), ("with_agent_value", 2)] {
        let spec = (tests.iter().find(|t| t.name == name).unwrap().spec)();
        let toolbox = spec.toolbox.expect("agent sets the toolbox");
        assert_eq!((toolbox.turn_limit(), toolbox.rust_tools()[0].name()), (turns, "get_weather"));
    }
    let spec = (tests.iter().find(|t| t.name == "with_messages").unwrap().spec)();
    assert_eq!(
        spec.request.messages.as_deref(),
        Some(&[Turn::system("Label reviews."), Turn::user("Label: Loved it."), Turn::assistant("positive")][..])
    );
    assert!(spec.run_fn.is_some());
    // Still ordinary functions.
    let _: fn(PromptRun) = sync_unit_body;
}
