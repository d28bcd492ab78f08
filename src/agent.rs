//! The agent loop: call the model with the toolbox's tools, run the tools it calls, send the results
//! back, until it answers without calling a tool or the turn limit is reached.
//!
//! The loop is written once, over a function that makes one model call, so that the harness (which
//! calls through the engine: cassettes, accounting) and [`Toolbox::run`] (a bare provider client) share it.
//! Every model call is a full request, so a cassette records and replays each turn under its own key.
//! Its layer and the path of a sample through it: `docs/architecture.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use crate::completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, Role, ToolCall, ToolSpec,
};
use crate::engine::{CallError, CallRole, Completed, RunScope};
use crate::mcp::{self, McpSession};
use crate::provider::{ProviderClient, ProviderError};
use crate::tools::{Tool, Toolbox};
use crate::usage::{Cost, Tokens};

/// The answer of an agent loop, over all its turns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AgentOutcome {
    /// The final answer: `text`, stop reason and model of the last turn; token counts and cost summed
    /// over all turns (`cost_usd` is `None` when any turn is unpriced); `tool_calls` of every turn.
    pub result: CompletionResult,
    /// The whole conversation: the request's messages, each assistant turn (text and tool calls), the
    /// tool results, and the final answer.
    pub transcript: Vec<Message>,
    /// Model calls made.
    pub turns: u32,
    /// Wall time of the model calls, summed (tool time excluded; the recorded times when replayed).
    pub latency: Duration,
    /// Whether every turn was replayed from a cassette.
    pub replayed: bool,
}

/// Why an agent loop gave no final answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    /// The model was still calling tools on its last allowed turn.
    #[error("agent loop reached max_turns = {max_turns} without a final answer; last tool calls: {}", list(.last_calls))]
    MaxTurns {
        /// The limit.
        max_turns: u32,
        /// The calls of the last turn (not run).
        last_calls: Vec<ToolCall>,
    },
    /// An MCP server could not be used (never without the `mcp` feature).
    #[error(transparent)]
    Mcp(#[from] crate::mcp::McpError),
    /// A model call failed.
    #[error("turn {turn}: {source}")]
    Provider {
        /// The turn, from 1.
        turn: u32,
        /// The provider's error.
        source: ProviderError,
    },
}

/// `name(arguments), ...` of `calls`.
pub(crate) fn list(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|c| format!("{}({})", c.name, c.arguments))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One model call's answer.
pub(crate) struct ModelReply {
    pub(crate) result: CompletionResult,
    pub(crate) latency: Duration,
    pub(crate) replayed: bool,
}

/// A failure of the loop: the model call's own error, or the loop's.
pub(crate) enum LoopError<E> {
    /// The model call of turn `turn` failed.
    Call(u32, E),
    /// The loop failed.
    Agent(AgentError),
}

impl Toolbox {
    /// Runs the agent loop with `client` outside the harness (no cassette, no accounting): the request
    /// gets the toolbox's tools added, and MCP servers are connected for this run only.
    pub async fn run(
        &self,
        client: &ProviderClient,
        request: CompletionRequest,
    ) -> Result<AgentOutcome, AgentError> {
        let outcome = run_loop(self, request, |request| async move {
            let (result, latency) = client.complete_timed(&request).await?;
            Ok::<_, ProviderError>(ModelReply {
                result,
                latency,
                replayed: false,
            })
        })
        .await;
        outcome.map_err(|e| match e {
            LoopError::Call(turn, source) => AgentError::Provider { turn, source },
            LoopError::Agent(e) => e,
        })
    }
}

/// Where a tool call goes.
enum Target<'a> {
    Rust(&'a Tool),
    Mcp(&'a McpSession),
}

/// Runs the loop, calling the model with `complete`.
pub(crate) async fn run_loop<E, F, Fut>(
    toolbox: &Toolbox,
    mut request: CompletionRequest,
    mut complete: F,
) -> Result<AgentOutcome, LoopError<E>>
where
    F: FnMut(CompletionRequest) -> Fut,
    Fut: Future<Output = Result<ModelReply, E>>,
{
    let sessions = mcp::connect_all(&toolbox.servers, toolbox.tool_timeout)
        .await
        .map_err(|e| LoopError::Agent(e.into()))?;
    let outcome = converse(toolbox, &sessions, &mut request, &mut complete).await;
    mcp::close_all(sessions).await;
    outcome
}

async fn converse<E, F, Fut>(
    toolbox: &Toolbox,
    sessions: &[McpSession],
    request: &mut CompletionRequest,
    complete: &mut F,
) -> Result<AgentOutcome, LoopError<E>>
where
    F: FnMut(CompletionRequest) -> Fut,
    Fut: Future<Output = Result<ModelReply, E>>,
{
    let mut names: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
    names.extend(toolbox.tools.iter().map(|t| t.name().to_string()));
    let routes = mcp::route(&names, sessions).map_err(|e| LoopError::Agent(e.into()))?;
    let mut targets: BTreeMap<&str, Target<'_>> = BTreeMap::new();
    for (name, &i) in &routes {
        targets.insert(name.as_str(), Target::Mcp(&sessions[i]));
    }
    for tool in &toolbox.tools {
        targets.insert(tool.name(), Target::Rust(tool));
    }
    request
        .tools
        .extend(toolbox.tools.iter().map(|t| t.spec().clone()));
    request
        .tools
        .extend(sessions.iter().flat_map(|s| s.tools.iter().cloned()));
    let offered = offered_names(&request.tools);
    let declared: BTreeSet<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();

    let mut tokens = Tokens::default();
    let mut cost = Cost::default();
    let mut tool_calls = Vec::new();
    let mut latency = Duration::ZERO;
    let mut replayed = true;
    let mut transcript = request.messages.clone();
    for turn in 1..=toolbox.max_turns {
        let ModelReply {
            result,
            latency: took,
            replayed: from_cassette,
        } = complete(request.clone())
            .await
            .map_err(|e| LoopError::Call(turn, e))?;
        latency += took;
        replayed &= from_cassette;
        tokens += Tokens::of(&result);
        cost += Cost::of_call(result.cost_usd);
        tool_calls.extend(result.tool_calls.iter().cloned());
        if result.tool_calls.is_empty() {
            transcript.push(Message::assistant(result.text.clone()));
            let mut answer = CompletionResult {
                tool_calls,
                ..result
            };
            tokens.write_to(&mut answer);
            answer.cost_usd = cost.known();
            return Ok(AgentOutcome {
                result: answer,
                transcript,
                turns: turn,
                latency,
                replayed,
            });
        }
        if turn == toolbox.max_turns {
            return Err(LoopError::Agent(AgentError::MaxTurns {
                max_turns: toolbox.max_turns,
                last_calls: result.tool_calls,
            }));
        }
        let assistant = assistant_message(&result);
        let results = run_calls(
            &result.tool_calls,
            &targets,
            &declared,
            &offered,
            toolbox.tool_timeout,
        )
        .await;
        let user = Message {
            role: Role::User,
            content: results,
        };
        request.messages.push(assistant.clone());
        request.messages.push(user.clone());
        transcript.push(assistant);
        transcript.push(user);
    }
    unreachable!("max_turns is at least 1 and the last turn returns")
}

fn offered_names(tools: &[ToolSpec]) -> String {
    tools
        .iter()
        .map(|t| format!("`{}`", t.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The model's turn as it goes back into the conversation: its text (providers reject empty text
/// blocks, so none when it is empty and tools were called) and its tool calls, signatures kept.
pub(crate) fn assistant_message(result: &CompletionResult) -> Message {
    Message::said(&result.text, &result.tool_calls)
}

/// Runs the calls of one turn concurrently; each gives a result block, failures as `is_error` results.
async fn run_calls(
    calls: &[ToolCall],
    targets: &BTreeMap<&str, Target<'_>>,
    declared: &BTreeSet<&str>,
    offered: &str,
    timeout: Duration,
) -> Vec<ContentBlock> {
    let runs = calls.iter().map(|call| async move {
        let outcome = match targets.get(call.name.as_str()) {
            None if declared.contains(call.name.as_str()) => Err(format!(
                "tool `{}` is declared but has no handler",
                call.name
            )),
            None => Err(format!(
                "unknown tool `{}`; the tools are: {offered}",
                call.name
            )),
            Some(target) => {
                let arguments = call.arguments.clone();
                let run = async {
                    match target {
                        Target::Rust(tool) => tool
                            .call(arguments)
                            .await
                            .map(|o| o.into_text())
                            .map_err(|e| e.0),
                        Target::Mcp(session) => session.call(&call.name, arguments).await,
                    }
                };
                match tokio::time::timeout(timeout, run).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!("tool `{}` timed out after {timeout:?}", call.name)),
                }
            }
        };
        let (content, is_error) = match outcome {
            Ok(text) => (text, false),
            Err(text) => (text, true),
        };
        ContentBlock::ToolResult {
            tool_use_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
        }
    });
    futures::future::join_all(runs).await
}

impl AgentOutcome {
    /// The outcome as one call's answer, and the transcript.
    pub(crate) fn into_completed(self) -> (Completed, Vec<Message>) {
        let completed = Completed {
            result: self.result,
            latency: self.latency,
            replayed: self.replayed,
        };
        (completed, self.transcript)
    }
}

/// Runs the loop for one sample of the harness: every turn goes through the engine (cassettes and
/// the run's accounting).
pub(crate) async fn run_in_scope(
    scope: &RunScope,
    provider: &str,
    toolbox: &Toolbox,
    request: CompletionRequest,
) -> Result<AgentOutcome, LoopError<CallError>> {
    let ran = run_loop(toolbox, request, |request| async move {
        let Completed {
            result,
            latency,
            replayed,
        } = scope
            .engine()
            .complete(scope, CallRole::Subject, provider, request)
            .await?;
        Ok::<_, CallError>(ModelReply {
            result,
            latency,
            replayed,
        })
    })
    .await;
    // A tool source that failed says nothing of the output: noted as a failed call (the engine noted
    // the model calls; running out of turns is the model's doing).
    if let Err(LoopError::Agent(e)) = &ran
        && !matches!(e, AgentError::MaxTurns { .. })
    {
        let failed = CallError::new(crate::engine::CallErrorKind::Tools, e.to_string());
        scope
            .state()
            .note_call(CallRole::Subject, crate::engine::CallEnding::Failed(failed));
    }
    ran
}
