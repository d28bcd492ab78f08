// Type errors the compiler finds in the expansion point at the user's code.
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "Hi")]
async fn returns_a_number(_run: PromptRun) -> i32 {
    1
}

#[prompt_test(target_prompt = "Hi")]
fn takes_a_string(_run: String) {}

#[prompt_test(target_prompt = "{a}", target_prompt_vars(a = vec![1, 2]), subject_model = Some("x"))]
fn not_display(_run: PromptRun) {}

async fn wrong_executor(prompt: String) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(prompt, 0, 0))
}

const RUNS: u64 = 2;

#[prompt_test(target_prompt = "Hi", run_fn = wrong_executor, runs = RUNS, tools = vec!["search"])]
fn bad_run_fn(_run: PromptRun) {}

fn not_a_toolbox() -> Vec<ToolSpec> {
    Vec::new()
}

#[prompt_test(target_prompt = "Hi", agent = not_a_toolbox)]
fn bad_agent(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", agent = "weather")]
fn literal_agent(_run: PromptRun) {}

fn main() {}
