//! [`RunError`]: why a method of a [`PromptRun`](super::PromptRun) gave no answer (a judge question,
//! a follow-up, a similarity: the calls it makes) or found the run wanting (a tool-call check).

use crate::agent::{AgentError, LoopError};
use crate::embedding::CosineProblem;
use crate::engine::CallError;
use crate::trajectory::TrajectoryProblem;

/// Why a judge question ([`ask`](super::PromptRun::ask) and its kin), a
/// [`follow_up`](super::PromptRun::follow_up) or a [`similarity`](super::PromptRun::similarity)
/// gave no answer, or why an expectation on the trajectory
/// ([`expect_tool_call`](super::PromptRun::expect_tool_call) and its kin) failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// No judge (`[judge]`) or no embedding model (`[embeddings]`) is configured.
    #[error("{0}")]
    NotConfigured(String),
    /// A call gave no answer: it failed ([`CallError::kind`] says why), or it could not be made nor
    /// replayed ([`CallError::is_unavailable`]: no recording and no key), and the harness ignores the
    /// trial with its reason.
    #[error("{}", if error.is_unavailable() { error.to_string() } else { format!("{call} call failed: {error}") })]
    Call {
        /// The call, as its failure names it: `judge`, `follow-up` or `embeddings`.
        call: &'static str,
        /// Why it gave no answer.
        error: CallError,
    },
    /// The judge answered, but not with a verdict.
    #[error("judge returned no verdict: {0}")]
    NoVerdict(String),
    /// `ask_all`: the judge gave no verdict for these questions (number from 1, question), even when
    /// asked again for them alone.
    #[error("judge returned no verdict for {}, even when asked again", .0.iter().map(|(n, q)| format!("question {n} {q:?}")).collect::<Vec<_>>().join(", "))]
    MissingVerdicts(Vec<(usize, String)>),
    /// Several parallel judge questions failed.
    #[error("{} judge question(s) failed:\n{}", .0.len(), .0.iter().map(|(q, e)| format!("- {q:?}: {e}")).collect::<Vec<_>>().join("\n"))]
    Several(Vec<(String, RunError)>),
    /// The run's answer did not come from a model call, so there is no conversation to continue.
    #[error(
        "cannot follow up: this run's answer came from {0}, not from a model call; follow-ups continue \
         the conversation of a provider call or an agent loop"
    )]
    NoConversation(&'static str),
    /// The follow-up message is empty (providers reject empty turns).
    #[error("the follow-up message is empty: write the next user turn")]
    EmptyMessage,
    /// The agent loop of the follow-up gave no final answer.
    #[error("follow-up agent loop: {0}")]
    Agent(AgentError),
    /// A text to compare is empty (or only whitespace): it has no meaning to compare.
    #[error("the {0} is empty: there is no meaning to compare")]
    EmptyText(&'static str),
    /// An expectation on the sample's trajectory failed (`expect_tool_call` and its kin): the
    /// message prints the whole trajectory.
    #[error("{0}")]
    Trajectory(TrajectoryProblem),
    /// The two embeddings cannot be compared.
    #[error("{0}")]
    Cosine(CosineProblem),
}

impl RunError {
    /// The follow-up's call or agent loop that gave no answer.
    pub(crate) fn follow_up(e: LoopError<CallError>) -> Self {
        match e {
            LoopError::Call(_, error) => RunError::Call {
                call: "follow-up",
                error,
            },
            LoopError::Agent(e) => RunError::Agent(e),
        }
    }
}
