//! Answers for requests the scripted queue does not cover: a closure or the default echo.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{CapturedRequest, Reply, Usage, Wire};

/// Decides the reply to a request the scripted queue did not answer.
pub type Responder = Arc<dyn Fn(&CapturedRequest) -> Reply + Send + Sync>;

/// The default responder: answers every request well-formed in its own wire format.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    /// The answer's text; `None` echoes the last user message as `echo: <text>`.
    pub text: Option<String>,
    /// A fixed latency before each answer.
    pub latency: Duration,
    /// Fixed token counts; `None` estimates them from the sizes of the request and the answer.
    pub usage: Option<Usage>,
    /// When set, a request that offers tools and does not end with a tool's result is answered by a
    /// call of its first tool with these arguments, and one that ends with a tool's result by
    /// `echo: <result>`: one round trip of an agent loop.
    pub tool_arguments: Option<Value>,
}

impl Echo {
    /// The reply this echo gives to `request`. A request for structured output gets the JSON object
    /// `{"echo": <text>}` (a forced tool call for Anthropic); an embeddings call gets
    /// [`Reply::embedding_of`].
    pub fn reply(&self, request: &CapturedRequest) -> Reply {
        if request.is_embedding() {
            return Reply::embedding_of(request).delayed(self.latency);
        }
        let tool_result = self
            .tool_arguments
            .as_ref()
            .and_then(|_| request.last_tool_result());
        if let (Some(arguments), None, Some(wire)) =
            (&self.tool_arguments, &tool_result, request.wire())
            && let Some(tool) = request.offered_tools().first()
        {
            let model = request.model().unwrap_or_else(|| "fake-model".to_string());
            let usage = self
                .usage
                .unwrap_or_else(|| crate::reply::estimate_usage(request, &arguments.to_string()));
            return Reply::tool_call(wire, &model, tool, arguments, usage).delayed(self.latency);
        }
        let text = match (&self.text, tool_result) {
            (_, Some(result)) => format!("echo: {result}"),
            (Some(text), None) => text.clone(),
            (None, None) => format!("echo: {}", request.last_user_text().unwrap_or_default()),
        };
        let mut reply = if request.wants_structured() {
            Reply::structured(request, &json!({ "echo": text }))
        } else {
            Reply::answer(request, &text)
        };
        if let (Some(usage), Some(wire)) = (self.usage, request.wire()) {
            let model = request.model().unwrap_or_else(|| "fake-model".to_string());
            reply = if request.wants_structured() {
                match wire {
                    Wire::Anthropic => Reply::tool_call(
                        wire,
                        &model,
                        &request.forced_tool().unwrap_or_else(|| "result".into()),
                        &json!({ "echo": text }),
                        usage,
                    ),
                    _ => Reply::text(wire, &model, &json!({ "echo": text }).to_string(), usage),
                }
            } else {
                Reply::text(wire, &model, &text, usage)
            };
        }
        reply.delayed(self.latency)
    }

    /// This echo as a [`Responder`].
    pub fn responder(self) -> Responder {
        Arc::new(move |request| self.reply(request))
    }
}

/// A judge that disagrees with itself, deterministically: its judge calls, counted over the fake's life
/// from 0, are answered in turn with `answers` (`"yes"` or `"no"`, cycling), each a structured verdict
/// (one, or a list of one for a call of several questions) in the request's wire format. Asked three
/// times with `["yes", "no", "yes"]`, it says yes twice and no once, whatever order the calls arrive in.
pub fn judge_cycling(answers: &'static [&'static str]) -> Responder {
    let next = std::sync::atomic::AtomicUsize::new(0);
    Arc::new(move |request| {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answer = answers[n % answers.len()];
        let mut verdict = json!({
            "question_type": "factual_presence",
            "reasoning": format!("Answer {} of the cycle.", n + 1),
            "snippet": null,
            "answer": answer,
        });
        let several = request
            .last_user_text()
            .is_some_and(|t| t.contains("QUESTIONS ("));
        let value = if several {
            verdict["index"] = json!(1);
            json!({ "verdicts": [verdict] })
        } else {
            verdict
        };
        Reply::structured(request, &value)
    })
}
