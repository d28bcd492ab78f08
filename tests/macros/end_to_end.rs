//! `#[prompt_test]` functions run by the real harness, with a `run_fn` standing in for the provider (no
//! network): the registered body, spec and executor are wired as the attribute says. The binary runs itself
//! as a child for each scenario, because a failing trial ends the harness's process with an error code.

use std::process::{Command, ExitCode};

use prompt_tester::prelude::*;

/// Set in the child: run the harness instead of the scenarios.
const CHILD: &str = "PROMPT_TESTER_MACROS_E2E_CHILD";

/// Answers with what it was given, so bodies can check that the prompt, model and max_tokens arrived.
async fn echo(prompt: &str, model: &str, max_tokens: u32) -> anyhow::Result<CompletionResult> {
    Ok(CompletionResult::new(
        format!("{model}|{max_tokens}|{prompt}"),
        3,
        4,
    ))
}

/// Answers with the whole request it was given: the system prompt, then each turn as `role: text`.
async fn whole(request: CompletionRequest) -> anyhow::Result<CompletionResult> {
    let mut lines = vec![format!("system: {}", request.system.unwrap_or_default())];
    for message in &request.messages {
        let role = serde_json::to_value(message.role)?;
        let text = serde_json::to_value(&message.content)?;
        lines.push(format!(
            "{}: {}",
            role.as_str().unwrap_or_default(),
            text[0]["text"]
        ));
    }
    lines.push(format!("max_tokens: {}", request.max_tokens));
    Ok(CompletionResult::new(lines.join("\n"), 1, 1))
}

/// A conversation given as an expression: checked when the trials are built.
fn few_shot() -> Vec<Turn> {
    vec![Turn::user("2 + 2?"), Turn::assistant("4")]
}

/// A conversation no provider takes: it ends with the user's turn, and the prompt follows.
fn ends_with_the_user() -> Vec<Turn> {
    vec![Turn::user("marker: the last turn")]
}

async fn broken_executor(
    _prompt: &str,
    _model: &str,
    _max_tokens: u32,
) -> anyhow::Result<CompletionResult> {
    anyhow::bail!("marker: the executor is down")
}

mod passes {
    use super::{echo, few_shot, whole};
    use prompt_tester::prelude::*;

    const WHO: &str = "Bob";

    #[prompt_test(
        target_prompt = "Say {word} to {who}",
        target_prompt_vars(word = "hello", who = WHO),
        subject_model = Model::Gpt4oMini,
        subject_provider = Provider::OpenAi,
        max_tokens = 12,
        run_fn = echo,
    )]
    async fn async_body_sees_the_rendered_prompt(run: PromptRun) -> anyhow::Result<()> {
        anyhow::ensure!(
            run.output == "gpt-4o-mini|12|Say hello to Bob",
            "output {:?}",
            run.output
        );
        anyhow::ensure!(run.prompt == "Say hello to Bob", "prompt {:?}", run.prompt);
        anyhow::ensure!((run.model.as_str(), run.provider.as_str()) == ("gpt-4o-mini", "openai"));
        anyhow::ensure!(run.target_prompt_vars.get("who").map(String::as_str) == Some("Bob"));
        anyhow::ensure!((run.input_tokens, run.output_tokens) == (3, 4));
        Ok(())
    }

    #[prompt_test(target_prompt = "{n} apples", target_prompt_vars(n = 2 + 1), subject_model = "m-1", subject_provider = "local", run_fn = echo)]
    fn sync_unit_body(run: PromptRun) {
        assert_eq!(
            run.output, "m-1|2048|3 apples",
            "the default max_tokens reaches run_fn"
        );
    }

    /// `messages` reach a `run_fn` that takes the whole request: the system turn as the system prompt,
    /// the turns with their placeholders filled, then the prompt.
    #[prompt_test(
        target_prompt = "Label: {review}",
        target_prompt_vars(review = "Dull.", thing = "film"),
        subject_model = "m",
        subject_provider = "local",
        max_tokens = 9,
        messages = [system("Label {thing} reviews."), user("Label: Loved it."), assistant("positive")],
        run_fn = whole,
    )]
    fn messages_reach_the_whole_request(run: PromptRun) {
        assert_eq!(
            run.output,
            "system: Label film reviews.\nuser: \"Label: Loved it.\"\nassistant: \"positive\"\nuser: \"Label: Dull.\"\nmax_tokens: 9"
        );
        assert_eq!(run.prompt, "Label: Dull.");
    }

    /// `messages` as an expression, beside a `system` key; the three-argument `run_fn` gets the prompt.
    #[prompt_test(target_prompt = "3 + 3?", subject_model = "m", subject_provider = "local", system = "Be terse.", messages = few_shot(), run_fn = echo)]
    fn messages_from_an_expression(run: PromptRun) {
        assert_eq!(run.output, "m|2048|3 + 3?");
    }

    /// The first of three samples fails: 2/3 passes a threshold of 0.6.
    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", runs = 3, pass_threshold = 0.6, run_fn = echo)]
    async fn threshold_allows_one_failure(run: PromptRun) -> Result<(), std::io::Error> {
        assert_eq!(run.runs, 3);
        if run.run_index == 1 {
            Err(std::io::Error::other("the first sample fails on purpose"))
        } else {
            Ok(())
        }
    }
}

mod fails {
    use super::{broken_executor, echo, ends_with_the_user};
    use prompt_tester::prelude::*;

    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", run_fn = echo)]
    async fn error_result(_run: PromptRun) -> anyhow::Result<()> {
        anyhow::bail!("marker: the body said no")
    }

    /// The first of three samples fails: 2/3 misses a threshold of 0.7.
    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", runs = 3, pass_threshold = 0.7, run_fn = echo)]
    async fn threshold_misses(run: PromptRun) -> Result<(), std::io::Error> {
        if run.run_index == 1 {
            Err(std::io::Error::other("marker: first sample"))
        } else {
            Ok(())
        }
    }

    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", run_fn = echo)]
    fn sync_panic(_run: PromptRun) {
        panic!("marker: the sync body panicked");
    }

    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", run_fn = broken_executor)]
    async fn executor_error(_run: PromptRun) {}

    #[prompt_test(target_prompt = "x", subject_model = "m", subject_provider = "local", messages = ends_with_the_user(), run_fn = echo)]
    fn messages_out_of_order(_run: PromptRun) {}
}

/// Runs this binary's harness with `args`; the exit code and everything it printed.
fn child(args: &[&str]) -> (Option<i32>, String) {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let out = Command::new(exe)
        .args(args)
        .env(CHILD, "1")
        .env_remove("PROMPT_TESTER_CASSETTE")
        .output()
        .expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// The outcome libtest-mimic printed for `trial` (`ok`, `FAILED`, `ignored`); names are padded to align.
fn outcome<'a>(out: &'a str, trial: &str) -> Option<&'a str> {
    out.lines().find_map(|line| {
        let rest = line.strip_prefix("test ")?.strip_prefix(trial)?;
        rest.trim_start().strip_prefix("... ").map(str::trim)
    })
}

fn scenarios() -> Vec<String> {
    let mut problems = Vec::new();
    let (code, out) = child(&["passes::"]);
    if code != Some(0) {
        problems.push(format!(
            "`passes::` should pass, exit code {code:?}:\n{out}"
        ));
    }
    for name in [
        "async_body_sees_the_rendered_prompt",
        "sync_unit_body",
        "threshold_allows_one_failure",
        "messages_reach_the_whole_request",
        "messages_from_an_expression",
    ] {
        if outcome(&out, &format!("passes::{name}")) != Some("ok") {
            problems.push(format!("`passes::{name}` did not pass:\n{out}"));
        }
    }
    for (name, marker) in [
        ("error_result", "marker: the body said no"),
        ("threshold_misses", "marker: first sample"),
        ("sync_panic", "marker: the sync body panicked"),
        ("executor_error", "marker: the executor is down"),
        (
            "messages_out_of_order",
            "test `fails::messages_out_of_order` (tests/macros/end_to_end.rs:",
        ),
        (
            "messages_out_of_order",
            "`messages[0]`: the last turn (1) is a `user` turn, and the prompt follows as another; end with the \
             `assistant` turn that answers it",
        ),
    ] {
        let trial = format!("fails::{name}");
        let (code, out) = child(&[&trial, "--exact"]);
        if code != Some(101) || outcome(&out, &trial) != Some("FAILED") || !out.contains(marker) {
            problems.push(format!(
                "`{trial}` should fail with {marker:?}, exit code {code:?}:\n{out}"
            ));
        }
    }
    problems
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return prompt_tester::main();
    }
    let problems = scenarios();
    if problems.is_empty() {
        println!("end_to_end: the harness ran every #[prompt_test] scenario as expected");
        ExitCode::SUCCESS
    } else {
        for problem in &problems {
            eprintln!("FAILED: {problem}\n");
        }
        ExitCode::FAILURE
    }
}
