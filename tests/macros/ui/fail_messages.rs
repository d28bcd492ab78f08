// `messages`: each turn's role by name, and the order every provider takes, checked at compile time.
use prompt_tester::prelude::*;

#[prompt_test(target_prompt = "Hi", messages = [user("Hi"), model("Hello.")])]
fn unknown_role(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [usr("Hi"), assistant("Hello.")])]
fn misspelt_role(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [user("Hi"), user("Again"), assistant("Hello.")])]
fn two_user_turns(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [system("Be brief."), user("Hi")])]
fn ends_with_the_user(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [user("Hi"), system("Be brief."), assistant("Hello.")])]
fn late_system_turn(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", system = "Be brief.", messages = [system("Be terse."), user("Hi"), assistant("Hello.")])]
fn system_twice(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [user(""), assistant("Hello.")])]
fn empty_turn(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = [Turn::user("Hi")])]
fn not_a_role_call(_run: PromptRun) {}

#[prompt_test(target_prompt = "Hi", messages = vec![1, 2])]
fn not_turns(_run: PromptRun) {}

async fn takes_nothing() -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new("", 0, 0))
}

#[prompt_test(target_prompt = "Hi", run_fn = takes_nothing)]
fn run_fn_of_neither_form(_run: PromptRun) {}

fn main() {}
