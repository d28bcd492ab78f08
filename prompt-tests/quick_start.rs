//! The quick start: a one-sentence summary that must mention Alice, five samples, 80% must pass.
//!
//! The subject and the judge are both SmolLM2-135M here (see prompt-tester.toml). The summary is
//! sampled at temperature 0.5 with `seed = 42`: sample k sends seed 42 + k − 1, so the five samples
//! differ from each other yet are the same on every live run (llama-server reproduces a seeded sample,
//! also under concurrent requests), and the threshold decides. The mention itself is checked with a
//! plain string test: all five recorded summaries name Alice.
//!
//! The judge is the same 135M model, and judge_basics.calibration.toml measures it: 55% accuracy over
//! 42 items, and on factual-presence questions such as "Is Alice mentioned?" it answered "no" to all
//! six (three of them wrong). In the recordings it says "no" to four of the five summaries, each of
//! which names Alice. A verdict from a judge that calibration has not shown accurate on the question
//! is not evidence: each verdict says so itself (`verdict.advisory`: six items a type measure this
//! judge, and even six right of six leave the lower end of the accuracy's interval, 61%, below
//! `[judge] min_accuracy`), so this example gates only on a verdict that is not advisory, and reports
//! the others. With a judge whose calibration is good on
//! the question, `run.ask(question).await?.require()?` is the whole check (the README's quick start;
//! `assertions.evals.toml` asks the one question type this judge gets right).

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    target_prompt_vars(text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3."),
    max_tokens = 60,
    runs = 5,
    pass_threshold = 0.8,
    temperature = 0.5,
    seed = 42
)]
async fn summary_mentions_alice(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(!run.output.is_empty(), "empty summary");
    anyhow::ensure!(
        run.output.contains("Alice"),
        "the summary does not mention Alice: {:?}",
        run.output
    );
    // What matters, asked of the judge: its verdict, reasoning and snippet go into the reports. It
    // decides only when its judge is measured well enough on such questions (see the top of this file).
    let verdict = run.ask("Is Alice mentioned in the output?").await?;
    anyhow::ensure!(
        verdict.reasoning.as_deref().is_some_and(|r| !r.is_empty()),
        "no reasoning: {verdict:?}"
    );
    if verdict.advisory.is_none() {
        verdict.require()?;
    }
    Ok(())
}

/// `ask_all` puts several questions to the judge in one call and returns one verdict per question,
/// in the order asked, each with its reasoning. A question the reply leaves without a verdict is asked
/// again once, then is an error (never a "no"). That is what this test checks. It does not assert the
/// verdicts: its calibration asks one question a call, so verdicts given together are not measured
/// (here it answers "yes" to both), and a verdict it has not been measured on is not evidence either
/// way.
#[prompt_test(
    target_prompt = "Summarise in one sentence: {text}",
    target_prompt_vars(text = "Alice leads Project Phoenix. Budget: $2M. Deadline: Q3."),
    max_tokens = 60
)]
async fn judge_answers_every_question(run: PromptRun) -> anyhow::Result<()> {
    let questions = ["Is Alice mentioned?", "Is the response a single sentence?"];
    let verdicts = run.ask_all(&questions).await?;
    anyhow::ensure!(
        verdicts.len() == questions.len(),
        "{} verdicts for 2 questions",
        verdicts.len()
    );
    for (verdict, question) in verdicts.iter().zip(questions) {
        anyhow::ensure!(
            verdict.question == question,
            "verdicts out of order: {verdict:?}"
        );
        anyhow::ensure!(
            verdict.reasoning.as_deref().is_some_and(|r| !r.is_empty()),
            "no reasoning: {verdict:?}"
        );
        anyhow::ensure!(verdict.judge_model == "SmolLM2-135M-Instruct");
    }
    Ok(())
}
