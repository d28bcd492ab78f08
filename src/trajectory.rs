//! A sample's trajectory: the model calls it made (the harness's own, and its application's through
//! the recording endpoint), each with the tools the model requested and the results sent back,
//! ordered by cause rather than by arrival, so that concurrent runs give the same steps every time.
//! The expectations on it are `run/tools.rs`'s. Its layer (a leaf): `docs/architecture.md`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::completion::{
    CompletionRequest, CompletionResult, ContentBlock, Message, Role, ToolCall,
};

mod change;
pub use change::{StepChange, first_change, shows_steps};

/// One model call of a sample, as its trajectory shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelCall {
    /// The provider it went to.
    pub provider: String,
    /// The model the request named.
    pub model: String,
    /// The tool calls the model requested in its answer (whether the application ran them, the
    /// endpoint cannot see: only what was sent back).
    pub requested: Vec<ToolCall>,
    /// The tool results the request sent back (those after its last model turn).
    pub sent_back: Vec<SentBack>,
    /// The answer's text (empty when the model only requested tools).
    pub answer: String,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Wall time of the call; the recorded latency when replayed.
    pub latency_ms: u64,
    /// Whether the answer was replayed from a cassette.
    pub replayed: bool,
}

/// A tool's result the application sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SentBack {
    /// The id of the requested call it answers (Gemini's wire format has none).
    pub id: Option<String>,
    /// The tool's name, where the request says it.
    pub name: Option<String>,
    /// The result, as text.
    pub content: String,
}

/// A model call as the sample's state keeps it: the call, and its request's conversation (each
/// message as canonical JSON) that orders it.
#[derive(Debug, Clone)]
pub(crate) struct NotedCall {
    pub call: ModelCall,
    pub conversation: Vec<String>,
}

impl NotedCall {
    /// A call the harness made itself (a prompt, an agent loop's turn, a follow-up): `request` to
    /// `provider`, answered `result`.
    pub(crate) fn of_request(
        provider: &str,
        request: &CompletionRequest,
        result: &CompletionResult,
        latency: std::time::Duration,
        replayed: bool,
    ) -> Self {
        let conversation = request
            .system
            .iter()
            .map(|s| format!("system: {s}"))
            .chain(
                request
                    .messages
                    .iter()
                    .map(|m| serde_json::to_string(m).unwrap_or_default()),
            )
            .collect();
        let last_turn = request
            .messages
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .map_or(0, |i| i + 1);
        let sent_back = request.messages[last_turn..]
            .iter()
            .flat_map(|m| &m.content)
            .filter_map(|block| match block {
                ContentBlock::ToolResult {
                    tool_use_id,
                    name,
                    content,
                    ..
                } => Some(SentBack {
                    id: Some(tool_use_id.clone()),
                    name: Some(name.clone()),
                    content: content.clone(),
                }),
                _ => None,
            })
            .collect();
        Self {
            call: ModelCall {
                provider: provider.to_string(),
                model: request.model.clone(),
                requested: result.tool_calls.clone(),
                sent_back,
                answer: result.text.clone(),
                input_tokens: result.input_tokens,
                output_tokens: result.output_tokens,
                latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                replayed,
            },
            conversation,
        }
    }
}

/// How [`expect_tool_sequence`](crate::PromptRun::expect_tool_sequence) compares the tools requested
/// with the expected list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolOrder {
    /// The expected tools appear in this order, others allowed between them.
    InOrder,
    /// The requested tools are exactly these, in this order.
    Exact,
    /// The requested tools are exactly these, in any order (the same multiset).
    Unordered,
    /// Each expected tool is requested (as often as listed), in any order, others allowed.
    Superset,
}

impl ToolOrder {
    /// Whether `requested` (tool names in trajectory order) holds `expected` in this order's sense.
    pub(crate) fn holds(self, expected: &[&str], requested: &[&str]) -> bool {
        let counts = |names: &[&str]| {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for n in names {
                *counts.entry((*n).to_string()).or_default() += 1;
            }
            counts
        };
        match self {
            ToolOrder::Exact => expected == requested,
            ToolOrder::InOrder => {
                let mut rest = requested.iter();
                expected.iter().all(|e| rest.any(|r| r == e))
            }
            ToolOrder::Unordered => counts(expected) == counts(requested),
            ToolOrder::Superset => {
                let have = counts(requested);
                counts(expected)
                    .iter()
                    .all(|(name, n)| have.get(name).is_some_and(|h| h >= n))
            }
        }
    }

    /// How a failure names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ToolOrder::InOrder => "in this order (others allowed between)",
            ToolOrder::Exact => "exactly, in this order",
            ToolOrder::Unordered => "exactly, in any order",
            ToolOrder::Superset => "each, in any order (others allowed)",
        }
    }
}

/// A sample's model calls in causal order: a call whose request continues another's conversation (its
/// messages start with the other's) or sends back a result of a tool the other requested follows it;
/// separate conversations (sub-agents) are separate branches, each whole, in an order set by their
/// content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    calls: Vec<ModelCall>,
}

impl Trajectory {
    /// The calls `noted` (in any order) ordered by cause.
    pub(crate) fn of(noted: &[NotedCall]) -> Self {
        let n = noted.len();
        // Which call each follows: the longest earlier conversation it continues.
        let parent: Vec<Option<usize>> = (0..n)
            .map(|i| {
                (0..n)
                    .filter(|&j| j != i && continues(&noted[i], &noted[j]))
                    .max_by(|&a, &b| {
                        let (a, b) = (&noted[a], &noted[b]);
                        a.conversation
                            .len()
                            .cmp(&b.conversation.len())
                            .then_with(|| content(b).cmp(&content(a)))
                    })
            })
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        let by_content = |list: &mut Vec<usize>| {
            list.sort_by(|&a, &b| content(&noted[a]).cmp(&content(&noted[b])));
        };
        by_content(&mut roots);
        children.iter_mut().for_each(by_content);
        let mut calls = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        // Calls in a circle of id links (ids reused) reach no root: they go last, in content order.
        let mut rest: Vec<usize> = (0..n).collect();
        by_content(&mut rest);
        for start in roots.into_iter().chain(rest) {
            let mut stack = vec![start];
            while let Some(i) = stack.pop() {
                if std::mem::replace(&mut seen[i], true) {
                    continue;
                }
                calls.push(noted[i].call.clone());
                stack.extend(children[i].iter().rev());
            }
        }
        Self { calls }
    }

    /// The model calls, in causal order.
    pub fn calls(&self) -> &[ModelCall] {
        &self.calls
    }

    /// The tool calls the model requested, in causal order.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.calls
            .iter()
            .flat_map(|c| c.requested.iter().cloned())
            .collect()
    }

    /// One line per model call, as the reports and failures show it.
    pub fn steps(&self) -> Vec<String> {
        self.calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {}", i + 1, step(c)))
            .collect()
    }

    /// The conversation the calls show, for a sample's `transcript`: `task` as the user's message, then
    /// per call the results sent back to it (a user message of tool results) and what the model said
    /// (its text, the tools it requested).
    pub(crate) fn transcript(&self, task: Option<String>) -> Vec<Message> {
        let mut messages: Vec<Message> = task.into_iter().map(Message::user).collect();
        for call in &self.calls {
            if !call.sent_back.is_empty() {
                let results = call.sent_back.iter().map(|r| ContentBlock::ToolResult {
                    tool_use_id: r.id.clone().unwrap_or_default(),
                    name: r.name.clone().unwrap_or_default(),
                    content: r.content.clone(),
                    is_error: false,
                });
                messages.push(Message {
                    role: Role::User,
                    content: results.collect(),
                });
            }
            messages.push(Message::said(&call.answer, &call.requested));
        }
        messages
    }
}

/// Why an expectation on a trajectory failed, with the whole trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryProblem {
    /// What was expected and not found.
    pub what: String,
    /// The trajectory's steps, one per line.
    pub steps: Vec<String>,
}

impl fmt::Display for TrajectoryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\nthe sample's trajectory:", self.what)?;
        if self.steps.is_empty() {
            return write!(f, "\n  (no model call)");
        }
        for step in &self.steps {
            write!(f, "\n  {step}")?;
        }
        Ok(())
    }
}

/// Whether `later` follows `earlier`: its conversation is longer and starts with `earlier`'s, or it
/// sends back a result of a tool `earlier` requested (a client that chains by id resends no history).
fn continues(later: &NotedCall, earlier: &NotedCall) -> bool {
    let extends = earlier.conversation.len() < later.conversation.len()
        && later.conversation.starts_with(&earlier.conversation);
    extends
        || later.call.sent_back.iter().any(|s| {
            s.id.as_ref()
                .is_some_and(|id| earlier.call.requested.iter().any(|r| &r.id == id))
        })
}

/// What orders calls that no cause orders: their conversation, then their answer.
fn content(noted: &NotedCall) -> (&[String], &str, String) {
    let requested = noted
        .call
        .requested
        .iter()
        .map(|r| format!("{}{}", r.name, r.arguments))
        .collect();
    (&noted.conversation, &noted.call.answer, requested)
}

/// Texts longer than this are cut in a step's line.
const SHOWN_CHARS: usize = 80;

fn cut(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{:?}", format!("{}…", &one_line[..at])),
        None => format!("{one_line:?}"),
    }
}

/// One call's line: the model, what went back to it, and what it requested or answered.
fn step(call: &ModelCall) -> String {
    let mut line = format!("{}/{}", call.provider, call.model);
    if !call.sent_back.is_empty() {
        line.push_str(&format!(" ({})", sent_back(call)));
    }
    if call.requested.is_empty() {
        line.push_str(&format!(" answered {}", did(call)));
    } else {
        line.push_str(&format!(" requested {}", did(call)));
    }
    line
}

/// What a call sent back, as its step's line says it.
fn sent_back(call: &ModelCall) -> String {
    let back: Vec<String> = call
        .sent_back
        .iter()
        .map(|s| {
            format!(
                "{} = {}",
                s.name.as_deref().or(s.id.as_deref()).unwrap_or("tool"),
                cut(&s.content)
            )
        })
        .collect();
    format!("sent back: {}", back.join(", "))
}

/// What the model did in a call: the tools it requested with their arguments (and what it said
/// beside them), else its answer.
fn did(call: &ModelCall) -> String {
    if call.requested.is_empty() {
        return cut(&call.answer);
    }
    let asked: Vec<String> = call
        .requested
        .iter()
        .map(|r| format!("{}({})", r.name, r.arguments))
        .collect();
    let mut text = asked.join(", ");
    if !call.answer.trim().is_empty() {
        text.push_str(&format!(", saying {}", cut(&call.answer)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(id: &str, name: &str, city: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: json!({ "city": city }),
            thought_signature: None,
        }
    }

    fn noted(
        conversation: &[&str],
        requested: Vec<ToolCall>,
        back: &[&str],
        answer: &str,
    ) -> NotedCall {
        NotedCall {
            call: ModelCall {
                provider: "openai".into(),
                model: "m".into(),
                requested,
                sent_back: back
                    .iter()
                    .map(|id| SentBack {
                        id: Some((*id).into()),
                        name: None,
                        content: "ok".into(),
                    })
                    .collect(),
                answer: answer.into(),
                input_tokens: 1,
                output_tokens: 1,
                latency_ms: 0,
                replayed: false,
            },
            conversation: conversation.iter().map(|s| (*s).to_string()).collect(),
        }
    }

    fn answers(t: &Trajectory) -> Vec<&str> {
        t.calls().iter().map(|c| c.answer.as_str()).collect()
    }

    #[test]
    fn a_continued_conversation_follows_its_start_whatever_the_arrival_order() {
        let first = noted(&["u"], vec![tool("1", "weather", "Paris")], &[], "a1");
        let second = noted(&["u", "a", "r"], vec![], &["1"], "a2");
        let third = noted(&["u", "a", "r", "a2", "u2"], vec![], &[], "a3");
        for order in [
            vec![first.clone(), second.clone(), third.clone()],
            vec![third.clone(), first.clone(), second.clone()],
            vec![second.clone(), third.clone(), first.clone()],
        ] {
            assert_eq!(answers(&Trajectory::of(&order)), ["a1", "a2", "a3"]);
        }
    }

    #[test]
    fn the_transcript_is_the_task_then_each_call_with_what_went_back_to_it() {
        let first = noted(&["u"], vec![tool("1", "weather", "Paris")], &[], "");
        let second = noted(&["u", "a", "r"], vec![], &["1"], "Sunny.");
        let transcript = Trajectory::of(&[second, first]).transcript(Some("Weather?".into()));
        let roles: Vec<Role> = transcript.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
        assert_eq!(transcript[0], Message::user("Weather?"));
        assert!(matches!(
            &transcript[1].content[..],
            [ContentBlock::ToolUse { name, .. }] if name == "weather"
        ));
        assert!(matches!(
            &transcript[2].content[..],
            [ContentBlock::ToolResult { tool_use_id, content, .. }] if tool_use_id == "1" && content == "ok"
        ));
        assert!(matches!(
            &transcript[3].content[..],
            [ContentBlock::Text { text }] if text == "Sunny."
        ));
        assert!(Trajectory::of(&[]).transcript(None).is_empty());
    }

    #[test]
    fn separate_conversations_are_whole_branches_in_one_order() {
        let main1 = noted(&["main"], vec![tool("1", "research", "x")], &[], "m1");
        let main2 = noted(&["main", "a", "r"], vec![], &["1"], "m2");
        let sub1 = noted(&["sub"], vec![tool("2", "search", "y")], &[], "s1");
        let sub2 = noted(&["sub", "a", "r"], vec![], &["2"], "s2");
        let a = Trajectory::of(&[sub2.clone(), main1.clone(), sub1.clone(), main2.clone()]);
        let b = Trajectory::of(&[main2, sub1, main1, sub2]);
        assert_eq!(answers(&a), ["m1", "m2", "s1", "s2"]);
        assert_eq!(a, b);
    }

    #[test]
    fn a_result_sent_back_links_calls_whose_history_was_not_resent() {
        // The second request carries only the result (as a Responses API client chaining by id).
        let first = noted(&["z-first"], vec![tool("call_9", "lookup", "x")], &[], "a1");
        let second = noted(&["a-result"], vec![], &["call_9"], "a2");
        let t = Trajectory::of(&[second, first]);
        assert_eq!(answers(&t), ["a1", "a2"]);
    }

    #[test]
    fn tool_orders() {
        let requested = ["search", "lookup", "search", "reply"];
        let holds = |order: ToolOrder, expected: &[&str]| order.holds(expected, &requested);
        assert!(holds(ToolOrder::InOrder, &["search", "reply"]));
        assert!(!holds(ToolOrder::InOrder, &["reply", "search"]));
        assert!(holds(ToolOrder::Exact, &requested));
        assert!(!holds(ToolOrder::Exact, &["search", "lookup", "reply"]));
        assert!(holds(
            ToolOrder::Unordered,
            &["reply", "search", "search", "lookup"]
        ));
        assert!(!holds(ToolOrder::Unordered, &["reply", "search", "lookup"]));
        assert!(holds(ToolOrder::Superset, &["reply", "search", "search"]));
        assert!(!holds(ToolOrder::Superset, &["lookup", "lookup"]));
    }

    #[test]
    fn steps_name_the_tools_their_arguments_and_what_went_back() {
        let first = noted(&["u"], vec![tool("1", "weather", "Paris")], &[], "");
        let mut second = noted(&["u", "a", "r"], vec![], &["1"], "Sunny in Paris.");
        second.call.sent_back[0].name = Some("weather".into());
        let t = Trajectory::of(&[first, second]);
        assert_eq!(
            t.steps(),
            [
                r#"1. openai/m requested weather({"city":"Paris"})"#,
                r#"2. openai/m (sent back: weather = "ok") answered "Sunny in Paris.""#,
            ]
        );
    }
}
