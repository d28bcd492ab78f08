//! Fewer calls for the same decision: early stop and adaptive sampling, with seeded samples at a
//! sampling temperature (run k sends seed + k − 1, so the samples differ and replay the same).

use prompt_tester::prelude::*;

/// `early_stop`: five runs at 80% need four passes, so four samples start; when all four pass the
/// fifth is never sent (the summary counts it as a run not needed). The verdict is the one all five
/// would give.
#[prompt_test(
    target_prompt = "What is the capital of {country}? Answer in one word.",
    target_prompt_vars(country = "France"),
    max_tokens = 30,
    runs = 5,
    pass_threshold = 0.8,
    early_stop,
    temperature = 0.5,
    seed = 7
)]
async fn capital_with_early_stop(run: PromptRun) -> anyhow::Result<()> {
    anyhow::ensure!(
        run.output.contains("Paris"),
        "expected Paris in {:?}",
        run.output
    );
    Ok(())
}

/// Adaptive sampling: sample until Wald's SPRT tells the pass rate apart from 80% — above 95% or below
/// 65% (`indifference = 0.15`), each wrong at most 10% of the time (`confidence = 0.9`). Six passes in a
/// row decide it; two early failures would fail it. Launched in waves of at most the endpoint's
/// `max_in_flight` (4 for `local`), never more than could reach a decision.
#[prompt_test(
    target_prompt = "Translate to French: {phrase}",
    target_prompt_vars(phrase = "Good morning"),
    max_tokens = 60,
    pass_rate = 0.8,
    indifference = 0.15,
    confidence = 0.9,
    max_runs = 20,
    temperature = 0.5,
    seed = 100
)]
fn french_greeting_adaptive(run: PromptRun) {
    assert!(
        run.output.to_lowercase().contains("bonjour"),
        "no bonjour in {:?}",
        run.output
    );
}
