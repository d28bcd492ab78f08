// Literal values outside their range, or of the wrong kind: all reported at once, each at its value.
use prompt_tester::prelude::*;

const PATH: &str = "prompts/hi.md";

#[prompt_test(
    target_prompt = 42,
    runs = 0,
    pass_threshold = 1.5,
    max_tokens = 0,
    temperature = -0.5,
    judge_prompt_cache = "yes",
    subject_model = "",
)]
async fn out_of_range(_run: PromptRun) {}

#[prompt_test(
    target_prompt_file = PATH,
    runs = "5",
    pass_threshold = 0,
    max_tokens = 5000000000,
    run_fn = "my_executor",
)]
async fn wrong_kinds(_run: PromptRun) {}

#[prompt_test(
    target_prompt_file = "/etc/prompt.md",
    target_prompt_vars = "Alice",
    runs(3),
    max_tokens,
)]
async fn wrong_forms(_run: PromptRun) {}

#[prompt_test(target_prompt = "{a}", target_prompt_vars(a = 1, a = 2))]
async fn repeated_var(_run: PromptRun) {}

#[prompt_test(target_prompt = "{a}", target_prompt_vars(a))]
async fn var_without_value(_run: PromptRun) {}

#[prompt_test(target_prompt_file = "prompts/does-not-exist.md")]
fn missing_file(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", live_only = "no")]
fn live_only_not_a_boolean(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", live_only(true))]
fn live_only_as_a_list(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", subject_models = ["local/a", "claude-haiku-4-5", "local/a"])]
fn subject_models_entries(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", subject_models = "local/a")]
fn subject_models_not_a_list(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", subject_model = "m", subject_models = ["local/a", "fake/b"])]
fn subject_models_beside_subject_model(_run: PromptRun) {}

// An even number of judge answers could split evenly; 0 asks nothing.
#[prompt_test(target_prompt = "x", judge_samples = 2)]
fn judge_samples_even(_run: PromptRun) {}

#[prompt_test(target_prompt = "x", judge_samples = 0)]
fn judge_samples_zero(_run: PromptRun) {}

fn main() {}
