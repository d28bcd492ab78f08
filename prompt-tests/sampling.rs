//! Fewer calls for the same decision: early stop, with seeded samples at a sampling temperature (run k
//! sends seed + k − 1, so the samples differ and replay the same).

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
