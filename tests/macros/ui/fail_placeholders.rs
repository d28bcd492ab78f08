// A literal prompt's placeholder without a value in `target_prompt_vars` is an error at the prompt, as
// a suite's placeholder without an input is (braces that are no placeholder, such as JSON's, are text).
use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Summarise {text} for {reader}; answer as {\"summary\": \"...\"}",
    target_prompt_vars(text = "Alice leads Project Phoenix."),
)]
async fn a_placeholder_has_no_value(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hello {name}")]
async fn no_vars_at_all(_run: PromptRun) {}

fn main() {}
