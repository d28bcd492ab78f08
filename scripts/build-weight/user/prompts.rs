//! The user crate of scripts/build-weight.sh: one prompt test, as the README's quick start writes it.

use std::process::ExitCode;

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    subject_model = "gemini-3.1-flash-lite",
    subject_provider = "google",
    target_prompt_vars(text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3."),
    runs = 5,
    pass_threshold = 0.8,
)]
async fn summary_mentions_alice(run: PromptRun) -> Result<(), prompt_tester::JudgeError> {
    // The rebuild's one-line edit changes this line.
    assert!(!run.output.is_empty(), "edit 0");
    let verdict = run.ask("Is Alice mentioned in the output?").await?;
    assert!(verdict.passed, "{}", verdict.reasoning.unwrap_or_default());
    Ok(())
}

fn main() -> ExitCode {
    prompt_tester::main()
}
