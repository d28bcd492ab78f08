//! The files `cargo prompt-tester init` writes: the README's quick start (its test, its judge) and the
//! same test as a suite case, so a new crate has one of each front end to copy.

/// `prompt-tests/main.rs`: the quick start's test and the harness's `main` (the README's block, checked
/// by the walkthrough test).
pub const MAIN_RS: &str = r#"use std::process::ExitCode;
use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    subject_model = "gemini-3.1-flash-lite",        // or Model::Gemini31FlashLite
    subject_provider = "google",                   // or Provider::Google
    target_prompt_vars(text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3."),
    runs = 5,
    pass_threshold = 0.8,
)]
async fn summary_mentions_alice(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(!run.output.is_empty());
    run.ask("Is Alice mentioned in the output?").await?.require()?;
    Ok(())
}

fn main() -> ExitCode {
    prompt_tester::main()
}
"#;

/// `prompt-tester.toml` at the crate root: the quick start's judge.
pub const CONFIG: &str = r#"[judge]
provider = "anthropic"
model = "claude-haiku-4-5"
"#;

/// The suite's path, under the default suite root.
pub const SUITE_PATH: &str = "prompt-tests/summary.evals.toml";

/// `prompt-tests/summary.evals.toml`: the same test as a suite case (`summary::mentions_alice`).
pub const SUITE: &str = r#"# The test of main.rs as a suite case: every case runs the prompt with its inputs and checks the answer.
prompt = "Summarise in one sentence: {text}"
provider = "google"
model = "gemini-3.1-flash-lite"
runs = 5
pass_threshold = 0.8

[[cases]]
name = "mentions_alice"
inputs = { text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3." }
assert = [
  { max_words = 40 },
  { judge = "Alice is mentioned in the output." },
]
"#;

/// The nextest test group's comment, above the group in a new `.config/nextest.toml`.
pub const NEXTEST_COMMENT: &str = "\
# nextest runs each trial in its own process, so prompt-tester's per-endpoint in-flight limit (which
# lives in one process) cannot hold across them. This group caps how many prompt-test processes run at
# once; a trial still takes its `runs` samples concurrently.
";

/// The nextest test group's name.
pub const TEST_GROUP: &str = "prompt-tests";

/// How many of the target's processes nextest runs at once.
pub const MAX_THREADS: i64 = 4;
