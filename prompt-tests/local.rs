//! Examples against the local model (provider `local`, see prompt-tester.toml). A 135M-parameter
//! model is weak: these assert what it does (a simple fact, a list, a greeting, the call's metadata, a
//! follow-up), not more.

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "What is the capital of {country}? Answer in one word.",
    target_prompt_vars(country = "France"),
    max_tokens = 30
)]
async fn capital_of_france(run: PromptRun) -> anyhow::Result<()> {
    names_paris(&run)
}

/// The check of the capital-of-France examples (this one and those of `sampling`): the answer names
/// Paris.
pub fn names_paris(run: &PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.output.contains("Paris"),
        "expected Paris in {:?}",
        run.output
    );
    Ok(())
}

#[prompt_test(target_prompt = "List three colours, one per line.", max_tokens = 40)]
fn three_colours_as_a_list(run: PromptRun) {
    let items = run.output.lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(items, 3, "expected three lines, got {:?}", run.output);
}

/// The check is what a correct translation must contain, which is necessary, not sufficient: the
/// recorded answer, "Je suis bonjour." ("I am good morning"), passes it without being a translation.
/// This model translates nothing else (translate_variants.evals.toml measures it: 1 of 12 phrases).
#[prompt_test(
    target_prompt = "Translate to French: {phrase}",
    target_prompt_vars(phrase = "Good morning"),
    max_tokens = 60
)]
fn french_greeting(run: PromptRun) {
    assert!(
        run.output.to_lowercase().contains("bonjour"),
        "no bonjour in {:?}",
        run.output
    );
}

/// The accounting and metadata of a call come from the server: tokens, the model it reports, its
/// request id; the cost is $0 because the `local` endpoint is `free = true` (a model with no known price
/// elsewhere has `cost_usd: None`, never a silent $0).
#[prompt_test(target_prompt = "Say hello.", max_tokens = 20)]
async fn call_metadata(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.input_tokens > 0 && run.output_tokens > 0,
        "no token counts: {run:?}"
    );
    anyhow::ensure!(
        run.output_tokens <= 20,
        "max_tokens not applied: {}",
        run.output_tokens
    );
    anyhow::ensure!(
        run.model_used.as_deref() == Some("SmolLM2-135M-Instruct"),
        "model_used {:?}",
        run.model_used
    );
    anyhow::ensure!(
        run.request_id
            .as_deref()
            .is_some_and(|id| id.starts_with("chatcmpl-")),
        "request id {:?}",
        run.request_id
    );
    anyhow::ensure!(
        run.cost_usd == Some(0.0),
        "the free local endpoint costs $0, got {:?}",
        run.cost_usd
    );
    anyhow::ensure!(!run.latency.is_zero());
    Ok(())
}

/// A follow-up continues the conversation: the city the first answer names is the subject of the next
/// turn, which is sent with the question and that answer before it (two calls, both recorded).
#[prompt_test(
    target_prompt = "What is the capital of {country}? Answer in one word.",
    target_prompt_vars(country = "France"),
    max_tokens = 60
)]
async fn a_sentence_about_the_capital(run: PromptRun) -> anyhow::Result<()> {
    names_paris(&run)?;
    // The answer's last word, without its full stop: "The capital of France is Paris." gives "Paris".
    let city = run
        .output
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .trim_matches(|c: char| !c.is_alphanumeric());
    let sentence = run
        .follow_up(&format!("Write one sentence about {city}."))
        .await?;
    anyhow::ensure!(
        sentence.output.contains(city),
        "no {city} in {:?}",
        sentence.output
    );
    // The conversation so far: the question, the answer, the follow-up and its reply.
    anyhow::ensure!(sentence.transcript.len() == 4 && sentence.turns().len() == 2);
    Ok(())
}
