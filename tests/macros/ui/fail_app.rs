// An application test (its body takes `AppRun`) calls the application itself: the keys of the
// harness's own call are errors at the key, naming the other form; a prompt test without a prompt
// says it could take an `AppRun`.
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "Hi", runs = 2)]
async fn with_a_prompt(_run: AppRun) {}

#[prompt_test(subject_model = "gpt-4o-mini", subject_provider = "openai", max_tokens = 5)]
async fn with_a_subject(_run: AppRun) {}

#[prompt_test(system = "Be brief.", run_fn = executor, target_prompt_vars(x = 1))]
async fn with_the_request(_run: prompt_tester::AppRun) {}

async fn executor(prompt: &str, _model: &str, _max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(prompt, 0, 0))
}

#[prompt_test(runs = 2)]
async fn no_prompt(_run: PromptRun) {}

// `app_env` is for an application test, and decided at compile time.
#[prompt_test(target_prompt = "Hi", app_env)]
async fn app_env_on_a_prompt(_run: PromptRun) {}

const SET: bool = true;

#[prompt_test(app_env = SET)]
async fn app_env_from_an_expression(_run: AppRun) {}

fn main() {}
