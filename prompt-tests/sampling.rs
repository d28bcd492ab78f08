//! Fewer calls for the same decision: early stop and adaptive sampling, with seeded samples at a
//! sampling temperature (sample k sends seed + k − 1, so the samples differ and replay the same). Both
//! ask the question of `local::capital_of_france` and check the answer as it does ([`names_paris`]).

use prompt_tester::prelude::*;

use crate::local::names_paris;

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
    names_paris(&run)
}

/// Adaptive sampling: instead of a fixed number of runs, samples are taken until Wald's sequential test
/// (SPRT) shows the true pass rate is above 60% (pass) or below it (fail), within ±10 points
/// (`indifference`), wrong at most 5% of the time (`confidence = 0.95`), and at most `max_runs`
/// samples. A prompt that always passes stops after 9 samples; one that passes half the time needs
/// many more. Each wave sends the fewest samples that could reach a decision. Here 12 of the 14
/// recorded samples name Paris (two answer without it), so it passes after 14.
#[prompt_test(
    target_prompt = "What is the capital of {country}? Answer in one word.",
    target_prompt_vars(country = "France"),
    max_tokens = 30,
    pass_rate = 0.6,
    indifference = 0.1,
    confidence = 0.95,
    max_runs = 30,
    temperature = 0.5,
    seed = 100
)]
async fn capital_adaptive(run: PromptRun) -> anyhow::Result<()> {
    names_paris(&run)
}
