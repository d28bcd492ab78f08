// Function shapes the harness cannot call.
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "Hi")]
async fn generic<T: Default>(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi")]
async fn no_argument() {}

#[prompt_test(target_prompt = "Hi")]
async fn two_arguments(_run: PromptRun, extra: u32) {}

#[prompt_test(target_prompt = "Hi")]
async fn impl_trait(_run: impl Into<PromptRun>) {}

#[prompt_test(target_prompt = "Hi")]
unsafe fn not_safe(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi")]
#[test]
fn also_a_test(_run: PromptRun) {}

struct Suite;

impl Suite {
    #[prompt_test(target_prompt = "Hi")]
    async fn method(&self, _run: PromptRun) {}
}

#[prompt_test(target_prompt = "Hi")]
struct NotAFunction;

fn main() {}
