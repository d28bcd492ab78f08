//! [`PromptRun::follow_up`]: the next user turn of a run's conversation, sent through the run's engine
//! like the first call (recorded, replayed, priced and counted in the sample's usage), and the turns of
//! a conversation ([`PromptRun::turns`], [`PromptRun::turn`]). A suite case's `turns` are sent this way.

use std::sync::Arc;

use super::{PromptRun, RunRequest};
use crate::agent::{self, AgentError, LoopError};
use crate::completion::{CompletionRequest, Message};
use crate::engine::{CallEnding, CallError, CallErrorKind, CallRole, Completed};
use crate::tools::Toolbox;

/// How a run's conversation goes on after its answer.
#[derive(Debug, Clone)]
pub(crate) enum Continue {
    /// Through the engine, as the answer was obtained: the request it answered (system, sampling,
    /// tools; its messages are the conversation before the answer) and, for an agent loop, the toolbox.
    Model {
        /// The request the answer replied to.
        request: Arc<CompletionRequest>,
        /// The agent loop's toolbox, when the answer came from one.
        agent: Option<Toolbox>,
    },
    /// The answer did not come from a model call: what gave it instead (`run_fn`, a given answer).
    Not(&'static str),
}

/// Why a follow-up gave no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FollowUpError {
    /// The run's answer did not come from a model call, so there is no conversation to continue.
    #[error(
        "cannot follow up: this run's answer came from {0}, not from a model call; follow-ups continue \
         the conversation of a provider call or an agent loop"
    )]
    NoConversation(&'static str),
    /// The message is empty (providers reject empty turns).
    #[error("the follow-up message is empty: write the next user turn")]
    Empty,
    /// The call gave no answer: it failed ([`CallError::kind`] says why), or it could not be made nor
    /// replayed ([`CallError::is_unavailable`]: no recording and no key), and the harness ignores the
    /// trial with its reason.
    #[error("{}", if .0.is_unavailable() { .0.to_string() } else { format!("follow-up call failed: {}", .0) })]
    Call(CallError),
    /// The agent loop of the follow-up gave no final answer.
    #[error("follow-up agent loop: {0}")]
    Agent(AgentError),
}

impl From<CallError> for FollowUpError {
    fn from(e: CallError) -> Self {
        FollowUpError::Call(e)
    }
}

impl From<LoopError<CallError>> for FollowUpError {
    fn from(e: LoopError<CallError>) -> Self {
        match e {
            LoopError::Call(_, e) => e.into(),
            LoopError::Agent(e) => FollowUpError::Agent(e),
        }
    }
}

impl PromptRun {
    /// Sends `message` as the next user turn of this run's conversation and returns the run of the
    /// reply: its prompt is `message`, its transcript the whole conversation. The call goes through the
    /// test's engine like the first one (same provider, model, system prompt, sampling and tools; an
    /// agent loop again for an agent test): recorded in the test's cassette under its own key and
    /// replayed from it, priced, counted in the sample's usage, and judged like any run (`ask`,
    /// `ask_all`, `similarity` on the returned run).
    ///
    /// ```no_run
    /// # async fn body(run: prompt_tester::PromptRun) -> anyhow::Result<()> {
    /// let french = run.follow_up("Now say it in French.").await?;
    /// anyhow::ensure!(french.output.contains("Bonjour"), "{}", french.output);
    /// # Ok(()) }
    /// ```
    pub async fn follow_up(&self, message: &str) -> Result<PromptRun, FollowUpError> {
        let (request, agent) = match &self.continues {
            Continue::Model { request, agent } => (request, agent),
            Continue::Not(what) => return Err(self.not_sent(FollowUpError::NoConversation(what))),
        };
        if message.trim().is_empty() {
            return Err(self.not_sent(FollowUpError::Empty));
        }
        // The conversation so far (whatever the first request held before its prompt, the turns and the
        // replies), then the new turn; the rest of the request as the first call sent it.
        let mut next = CompletionRequest::clone(request);
        next.messages = self.transcript.clone();
        next.messages.push(Message::user(message));
        let scope = &self.scope;
        let (completed, transcript) = match agent {
            None => {
                let completed: Completed = scope
                    .engine
                    .complete(scope, CallRole::Subject, &self.provider, next.clone())
                    .await?;
                let mut transcript = next.messages.clone();
                transcript.push(agent::assistant_message(&completed.result));
                (completed, transcript)
            }
            Some(toolbox) => agent::run_in_scope(scope, &self.provider, toolbox, next.clone())
                .await?
                .into_completed(),
        };
        scope.note_conversation(&transcript);
        let asked = RunRequest {
            prompt: message.to_string(),
            vars: self.target_prompt_vars.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            continues: Continue::Model {
                request: Arc::new(next),
                agent: agent.clone(),
            },
            previous: Some(Arc::new(self.clone())),
        };
        Ok(PromptRun::from_result(
            scope.clone(),
            asked,
            completed,
            transcript,
        ))
    }

    /// `e`, noted as a failed call: a follow-up that cannot be sent says nothing of the output, so the
    /// sample errors whatever the body does with it.
    fn not_sent(&self, e: FollowUpError) -> FollowUpError {
        let call = CallError::new(CallErrorKind::Config, e.to_string());
        self.scope
            .note_call(CallRole::Subject, CallEnding::Failed(call));
        e
    }

    /// The runs of this conversation, turn by turn: the first call's, then each follow-up's, ending
    /// with this one (one run without follow-ups).
    pub fn turns(&self) -> Vec<&PromptRun> {
        let mut turns = vec![self];
        while let Some(previous) = turns[turns.len() - 1].previous.as_deref() {
            turns.push(previous);
        }
        turns.reverse();
        turns
    }

    /// The run of turn `n` of this conversation, counted from 1 (`turn(1)` is the first call's), if
    /// the conversation has reached it.
    pub fn turn(&self, n: usize) -> Option<&PromptRun> {
        let turns = self.turns();
        n.checked_sub(1).and_then(|i| turns.get(i).copied())
    }
}
