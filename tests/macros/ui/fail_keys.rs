// Key mistakes: all reported at once, each at its key.
use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Hi",
    run = 5,
    model = "gemini-2.5-flash", // a suite's name for `subject_model`: taken
    timeout = 30,
    threshold = 0.9, // a suite's key: the error says what the attribute does instead
    runs = 1,
    runs = 2,
    target_prompt_file = "prompts/hi.md",
)]
async fn typos_repeats_and_two_prompts(_run: PromptRun) {}

#[prompt_test(runs = 2)]
async fn no_prompt(_run: PromptRun) {}

#[prompt_test]
fn no_arguments_at_all(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", runs 3)]
fn syntax_error(_run: PromptRun) {}

async fn executor(prompt: &str, _model: &str, _max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(prompt, 0, 0))
}

fn agent() -> Toolbox {
    Toolbox::new()
}

#[prompt_test(target_prompt = "Hi", agent = agent, run_fn = executor, tools = Vec::new())]
fn agent_with_run_fn_and_tools(_run: PromptRun) {}

fn main() {}
