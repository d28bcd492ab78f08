//! A prompt-test binary whose tests pass and fail on purpose, in known ways. The harness's own tests
//! (`tests/harness.rs`) run it with arguments and check libtest's output, exit codes and messages.
//!
//! Try it: `cargo run --example harness_fixture -- --list`.
//! Tests named `fake_*` call an OpenAI-compatible server at `OPENAI_BASE_URL` (the tests start one).

use std::process::ExitCode;

use prompt_tester::prelude::*;

/// A deterministic executor: the "model" answers with the prompt, upper-cased.
async fn shout(prompt: &str, _model: &str, _max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(
        prompt.to_uppercase(),
        prompt.len() as u64,
        7,
    ))
}

#[prompt_test(
    target_prompt = "Summarise: {text}",
    subject_model = "echo-model",
    subject_provider = "openai",
    target_prompt_vars(text = "alice leads project phoenix"),
    run_fn = shout,
)]
async fn summary_passes(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(run.output.contains("ALICE"), "no ALICE in {:?}", run.output);
    Ok(())
}

// Runs 3 and 5 fail: 3/5 pass, 4 are needed.
#[prompt_test(
    target_prompt = "Say hi",
    subject_model = "echo-model",
    subject_provider = "openai",
    runs = 5,
    pass_threshold = 0.8,
    run_fn = shout,
)]
async fn flaky(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.run_index != 3 && run.run_index != 5,
        "run {} said {:?}",
        run.run_index,
        run.output
    );
    Ok(())
}

// Run 2 fails, but 2/3 is enough at 0.6.
#[prompt_test(
    target_prompt = "Say hi",
    subject_model = "echo-model",
    subject_provider = "openai",
    runs = 3,
    pass_threshold = 0.6,
    run_fn = shout,
)]
fn tolerant(run: PromptRun) {
    assert_ne!(run.run_index, 2, "run 2 is the bad one");
}

#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai", run_fn = shout)]
fn panics(_run: PromptRun) {
    panic!("boom from the body");
}

#[prompt_test(target_prompt = "Hello {name} and {missing}", subject_model = "echo-model",
    subject_provider = "openai", target_prompt_vars(name = "Bob"), run_fn = shout)]
fn placeholder_warning(run: PromptRun) {
    assert_eq!(run.output, "HELLO BOB AND {MISSING}");
}

#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai", run_fn = shout)]
async fn needs_judge(run: PromptRun) -> anyhow::Result<()> {
    run.ask("Is it good?").await?;
    Ok(())
}

/// A custom executor that panics: a panic outside the body.
async fn broken_executor(
    _prompt: &str,
    _model: &str,
    _max_tokens: u32,
) -> anyhow::Result<CompletionResult> {
    panic!("the executor broke")
}

#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai",
    run_fn = broken_executor)]
fn executor_panics(_run: PromptRun) {}

// Five calls to OPENAI_BASE_URL; a test makes the server fail one of them through every retry.
// `enable_cache` runs the first sample alone, so the failing attempts are all that sample's.
#[prompt_test(
    target_prompt = "Name a colour.",
    subject_model = "fake-model",
    subject_provider = "openai",
    runs = 5,
    pass_threshold = 0.8,
    enable_cache = true
)]
async fn fake_outage(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(!run.output.is_empty(), "empty output");
    Ok(())
}

// The judge at OPENAI_BASE_URL: a test makes it leave the second question unanswered. A missing
// verdict must never read as "no".
#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai", run_fn = shout)]
async fn fake_judge_skips_a_question(run: PromptRun) -> anyhow::Result<()> {
    let verdicts = run.ask_all(&["Is it loud?", "Does it whisper?"]).await?;
    anyhow::ensure!(verdicts[0].passed && !verdicts[1].passed, "{verdicts:?}");
    Ok(())
}

mod nested {
    use prompt_tester::prelude::*;

    #[prompt_test(
        target_prompt = "Name a colour.",
        subject_model = "fake-model",
        subject_provider = "openai"
    )]
    async fn fake_colour(run: PromptRun) -> anyhow::Result<()> {
        anyhow::ensure!(!run.output.is_empty(), "empty output");
        anyhow::ensure!(
            run.input_tokens > 0 && run.output_tokens > 0,
            "no usage: {run:?}"
        );
        Ok(())
    }

    #[prompt_test(
        target_prompt = "Name a colour.",
        subject_model = "claude-haiku-4-5",
        subject_provider = "anthropic"
    )]
    async fn fake_anthropic(run: PromptRun) -> anyhow::Result<()> {
        anyhow::ensure!(
            run.output.contains("Name a colour."),
            "not the echo: {:?}",
            run.output
        );
        anyhow::ensure!(
            run.cost_usd.is_some_and(|c| c > 0.0),
            "claude-haiku-4-5 is priced: {run:?}"
        );
        Ok(())
    }

    #[prompt_test(
        target_prompt = "Name a colour.",
        subject_model = "gemini-2.5-flash",
        subject_provider = "google"
    )]
    async fn fake_google(run: PromptRun) -> anyhow::Result<()> {
        anyhow::ensure!(
            run.output.contains("Name a colour."),
            "not the echo: {:?}",
            run.output
        );
        anyhow::ensure!(
            run.cost_usd.is_some_and(|c| c > 0.0),
            "gemini-2.5-flash is priced: {run:?}"
        );
        Ok(())
    }
}

/// Calls the `fake` endpoint of the scratch configuration (its key, if set, is `FAKE_API_KEY`); the
/// prompt's input comes from `FIXTURE_THING` so a test can change it between runs.
#[prompt_test(
    target_prompt = "Name a {thing}.",
    target_prompt_vars(thing = std::env::var("FIXTURE_THING").unwrap_or_else(|_| "colour".into())),
    subject_model = "fake-model",
    subject_provider = "fake",
    runs = 2,
)]
async fn fake_recorded(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(!run.output.is_empty(), "empty output");
    println!("replayed={} output={}", run.replayed, run.output);
    Ok(())
}

// Twelve samples: a filter naming `many::run_1` must not also select `run_10`..`run_12`.
#[prompt_test(
    target_prompt = "Say hi",
    subject_model = "echo-model",
    subject_provider = "openai",
    runs = 12,
    run_fn = shout,
)]
fn many(run: PromptRun) {
    println!("many ran sample {}", run.run_index);
}

fn no_runs() -> u32 {
    0
}

// `runs` and `pass_threshold` may be any expression; these evaluate out of range.
#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai",
    runs = no_runs(), run_fn = shout)]
fn bad_runs(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", subject_model = "echo-model", subject_provider = "openai",
    runs = 2, pass_threshold = f64::NAN, run_fn = shout)]
fn bad_threshold(_run: PromptRun) {}

/// Meant only for live runs, against the `fake` endpoint of the scratch configuration.
#[prompt_test(
    target_prompt = "Name a shape.",
    subject_model = "fake-model",
    subject_provider = "fake",
    live_only
)]
async fn fake_live_only(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(!run.output.is_empty(), "empty output");
    Ok(())
}

fn main() -> ExitCode {
    prompt_tester::main()
}
