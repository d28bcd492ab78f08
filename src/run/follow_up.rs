//! [`PromptRun::follow_up`]: the next user turn of a run's conversation, sent through the run's engine
//! like the first call (recorded, replayed, priced and counted in the sample's usage), and the turns of
//! a conversation ([`PromptRun::turns`], [`PromptRun::turn`]). A suite case's `turns` are sent this way.

use std::sync::Arc;

use super::RunError;
use super::{PromptRun, RunRequest};
use crate::agent;
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
    pub async fn follow_up(&self, message: &str) -> Result<PromptRun, RunError> {
        let (request, agent) = match &self.continues {
            Continue::Model { request, agent } => (request, agent),
            Continue::Not(what) => return Err(self.not_sent(RunError::NoConversation(what))),
        };
        if message.trim().is_empty() {
            return Err(self.not_sent(RunError::EmptyMessage));
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
                    .engine()
                    .complete(scope, CallRole::Subject, &self.provider, next.clone())
                    .await
                    .map_err(|error| RunError::Call {
                        call: "follow-up",
                        error,
                    })?;
                let mut transcript = next.messages.clone();
                transcript.push(agent::assistant_message(&completed.result));
                (completed, transcript)
            }
            Some(toolbox) => agent::run_in_scope(scope, &self.provider, toolbox, next.clone())
                .await
                .map_err(RunError::follow_up)?
                .into_completed(),
        };
        scope.state().note_conversation(&transcript);
        let asked = RunRequest {
            prompt: message.to_string(),
            vars: self.target_prompt_vars.clone(),
            media: self.target_prompt_media.clone(),
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
    fn not_sent(&self, e: RunError) -> RunError {
        let call = CallError::new(CallErrorKind::Config, e.to_string());
        self.scope
            .state()
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
