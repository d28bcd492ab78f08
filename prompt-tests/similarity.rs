//! `run.similarity` against the local model: the score of the answer against references, from the
//! embedding model of `[embeddings]` in prompt-tester.toml (SmolLM2-135M, mean-pooled; see
//! meaning.evals.toml for why its thresholds are high).

use prompt_tester::prelude::*;

#[prompt_test(
    target_prompt = "What is the capital of {country}? Answer in one short sentence.",
    target_prompt_vars(country = "France"),
    max_tokens = 40
)]
async fn the_answer_means_paris(run: PromptRun) -> anyhow::Result<()> {
    let paris = run.similarity("Paris is the capital of France.").await?;
    let bananas = run
        .similarity("Bananas are yellow fruit that grow in bunches.")
        .await?;
    // Measured on this model: 0.961 and 0.679. The gap is what separates meanings here, more than
    // either score alone.
    anyhow::ensure!(paris >= 0.9, "similarity to the reference {paris:.3} < 0.9");
    anyhow::ensure!(
        paris - bananas >= 0.2,
        "the reference scored {paris:.3}, unrelated text {bananas:.3}: no clear gap"
    );
    Ok(())
}
