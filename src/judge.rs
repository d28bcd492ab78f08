//! The LLM judge: yes/no verdicts with reasoning and a verbatim snippet. (Filled in by the judge work.)

use serde::{Deserialize, Serialize};

use crate::run::PromptRun;

/// The judge's answer to one question about a run's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    /// The question asked.
    pub question: String,
    /// `"yes"` or `"no"`.
    pub answer: String,
    /// Whether the requirement holds (for avoidance questions, "yes" means the forbidden content is absent).
    pub passed: bool,
    /// A verbatim excerpt of the output that supports the verdict, if any.
    pub snippet: Option<String>,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
    /// The judge model.
    pub judge_model: String,
    /// The judge provider.
    pub judge_provider: String,
    /// Input tokens of the judge call (shared by every verdict of an `ask_all`).
    pub judge_input_tokens: u64,
    /// Output tokens of the judge call.
    pub judge_output_tokens: u64,
    /// Cost of the judge call in USD; `None` when the judge model's price is unknown.
    pub judge_cost_usd: Option<f64>,
}

/// Why the judge gave no verdict.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JudgeError {
    /// No judge is configured.
    #[error("{0}")]
    NotConfigured(String),
    /// The judge call failed.
    #[error("judge call failed: {0}")]
    Call(String),
    /// The judge answered, but not with a verdict.
    #[error("judge returned no verdict: {0}")]
    NoVerdict(String),
    /// Several parallel questions failed.
    #[error("{} judge question(s) failed:\n{}", .0.len(), .0.iter().map(|(q, e)| format!("- {q:?}: {e}")).collect::<Vec<_>>().join("\n"))]
    Several(Vec<(String, JudgeError)>),
}

impl PromptRun {
    /// Asks the judge one yes/no question about this run's output.
    pub async fn ask(&self, question: &str) -> Result<JudgeVerdict, JudgeError> {
        let _ = question;
        todo!("judge work")
    }

    /// Asks every question in one judge call; verdicts come back in question order.
    pub async fn ask_all(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, JudgeError> {
        let _ = questions;
        todo!("judge work")
    }

    /// Asks each question in its own judge call, concurrently.
    pub async fn ask_parallel(&self, questions: &[&str]) -> Result<Vec<JudgeVerdict>, JudgeError> {
        let _ = questions;
        todo!("judge work")
    }
}
