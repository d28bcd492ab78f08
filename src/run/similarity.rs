//! [`PromptRun::similarity`]: two embeddings calls through the run's engine, then their cosine.

use super::PromptRun;
use super::RunError;
use crate::embedding::{EmbeddingRequest, cosine};
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole};

impl PromptRun {
    /// The cosine similarity of the embeddings of this run's output and `reference`, from the
    /// configured embedding model (`[embeddings]`). Both calls are recorded in and replayed from the
    /// test's cassette; their tokens and cost count as `usage.embedding`.
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// let score = run.similarity("Paris is the capital of France.").await?;
    /// anyhow::ensure!(score >= 0.8, "similarity {score:.3} is below 0.8");
    /// # Ok(()) }
    /// ```
    pub async fn similarity(&self, reference: &str) -> Result<f64, RunError> {
        let config = self
            .scope
            .engine()
            .config
            .embeddings
            .clone()
            .ok_or_else(|| {
                let message = crate::config::embeddings_not_configured();
                // A similarity no model can compute: the sample errors, as for a call that failed.
                self.scope.state().note_call(
                    CallRole::Embedding,
                    CallEnding::Failed(CallError::new(CallErrorKind::Config, message.clone())),
                );
                RunError::NotConfigured(message)
            })?;
        for (what, text) in [("output", self.output.as_str()), ("reference", reference)] {
            if text.trim().is_empty() {
                return Err(RunError::EmptyText(what));
            }
        }
        let embed = |text: &str| {
            let request = EmbeddingRequest::new(config.model.clone(), text);
            self.scope
                .engine()
                .embed(&self.scope, &config.provider, request)
        };
        let (output, reference) =
            futures::future::join(embed(&self.output), embed(reference)).await;
        let (output, reference) = (
            output.map_err(embeddings_failed)?,
            reference.map_err(embeddings_failed)?,
        );
        cosine(&output.vector, &reference.vector).map_err(RunError::Cosine)
    }
}

fn embeddings_failed(error: CallError) -> RunError {
    RunError::Call {
        call: "embeddings",
        error,
    }
}
