//! [`PromptRun::similarity`]: two embeddings calls through the run's engine, then their cosine.

use super::PromptRun;
use crate::embedding::{CosineError, EmbeddingRequest, cosine};
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole};

/// Why a similarity was not computed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SimilarityError {
    /// No embedding model is configured (`[embeddings]`).
    #[error("{0}")]
    NotConfigured(String),
    /// A text to compare is empty (or only whitespace): it has no meaning to compare.
    #[error("the {0} is empty: there is no meaning to compare")]
    Empty(&'static str),
    /// The embeddings call gave no answer: it failed ([`CallError::kind`] says why), or it could not be
    /// made nor replayed ([`CallError::is_unavailable`]: no recording and no key), and the harness
    /// ignores the trial with its reason.
    #[error("{}", if .0.is_unavailable() { .0.to_string() } else { format!("embeddings call failed: {}", .0) })]
    Call(CallError),
    /// The two embeddings cannot be compared.
    #[error("{0}")]
    Cosine(#[from] CosineError),
}

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
    pub async fn similarity(&self, reference: &str) -> Result<f64, SimilarityError> {
        let config = self.scope.engine.config.embeddings.clone().ok_or_else(|| {
            let message = crate::config::embeddings_not_configured();
            // A similarity no model can compute: the sample errors, as for a call that failed.
            self.scope.note_call(
                CallRole::Embedding,
                CallEnding::Failed(CallError::new(CallErrorKind::Config, message.clone())),
            );
            SimilarityError::NotConfigured(message)
        })?;
        for (what, text) in [("output", self.output.as_str()), ("reference", reference)] {
            if text.trim().is_empty() {
                return Err(SimilarityError::Empty(what));
            }
        }
        let embed = |text: &str| {
            let request = EmbeddingRequest::new(config.model.clone(), text);
            self.scope
                .engine
                .embed(&self.scope, &config.provider, request)
        };
        let (output, reference) =
            futures::future::join(embed(&self.output), embed(reference)).await;
        let (output, reference) = (
            output.map_err(SimilarityError::Call)?,
            reference.map_err(SimilarityError::Call)?,
        );
        Ok(cosine(&output.vector, &reference.vector)?)
    }
}
