//! A pending sample against the accepted one: its calls of one role paired in order (the n-th
//! subject call with the n-th, as a sample replays them), what changed in each request, and the
//! tokens, cost and latency on each side.

use std::borrow::Cow;

use prompt_tester::_cargo_prompt_tester_support::{
    CallRole, Entry, Exchange, RawRequest, describe, raw_call, request_diff,
};
use prompt_tester::{CompletionRequest, CompletionResult};

/// One recorded model call (a call through the recording endpoint shown as one: its body as the
/// request's text, see `raw_call`).
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// What was asked.
    pub request: Cow<'a, CompletionRequest>,
    /// What was answered.
    pub response: Cow<'a, CompletionResult>,
    /// How long it took when recorded.
    pub latency_ms: u64,
    /// The request as sent, for a call through the recording endpoint.
    pub raw: Option<&'a RawRequest>,
}

/// A call's cost at today's prices (`Prices::cost` of the crate; what its run would say).
pub type Pricing<'p> = &'p dyn Fn(&Entry, &CompletionResult) -> Option<f64>;

/// The cost a call was recorded with, where no cost is shown.
pub fn as_recorded(_: &Entry, result: &CompletionResult) -> Option<f64> {
    result.cost_usd
}

/// Changes of a call through the recording endpoint a line each, before "and N more".
const CHANGES_SHOWN: usize = 8;

/// An accepted call and the new one in its place; either may be missing (a call no longer made,
/// or one made for the first time).
pub type Pair<'a> = (Option<Call<'a>>, Option<Call<'a>>);

/// The completion calls of `role` in `entries`, in recording order, each priced by `price`.
pub fn calls<'a>(entries: &'a [Entry], role: CallRole, price: Pricing<'_>) -> Vec<Call<'a>> {
    entries
        .iter()
        .filter(|e| e.role == role)
        .filter_map(|e| {
            let mut call = match &e.call {
                Exchange::Completion { request, response } => Call {
                    request: Cow::Borrowed(request),
                    response: Cow::Borrowed(response),
                    latency_ms: e.latency_ms,
                    raw: None,
                },
                raw => {
                    let (request, response) = raw_call(raw)?;
                    Call {
                        request: Cow::Owned(request),
                        response: Cow::Owned(response),
                        latency_ms: e.latency_ms,
                        raw: match raw {
                            Exchange::Raw { request, .. } => Some(request),
                            _ => None,
                        },
                    }
                }
            };
            let cost = price(e, &call.response);
            call.response.to_mut().cost_usd = cost;
            Some(call)
        })
        .collect()
}

/// `old` and `new` paired by position, the longer one's rest against nothing.
pub fn paired<'a>(old: Vec<Call<'a>>, new: Vec<Call<'a>>) -> Vec<Pair<'a>> {
    let n = old.len().max(new.len());
    (0..n)
        .map(|i| (old.get(i).cloned(), new.get(i).cloned()))
        .collect()
}

/// What changed in one pair's request, one line per field (the library's `describe`).
pub fn request_changes(pair: &Pair<'_>) -> Vec<String> {
    match pair {
        (Some(old), Some(new)) => {
            let changes = match (old.raw, new.raw) {
                (Some(a), Some(b)) => request_diff(a, b).lines(CHANGES_SHOWN),
                _ => describe(&old.request, &new.request),
            };
            if changes.is_empty() {
                vec!["the same request, answered again".into()]
            } else {
                changes
            }
        }
        (None, Some(_)) => vec!["a new call (nothing accepted to compare with)".into()],
        (Some(_), None) => vec!["no longer made".into()],
        (None, None) => Vec::new(),
    }
}

/// An answer as text: its text, then a line per tool call.
pub fn answer_text(response: &CompletionResult) -> String {
    let mut text = response.text.clone();
    for call in &response.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[tool call {} {}]", call.name, call.arguments));
    }
    text
}

/// Tokens, cost and latency of a side's calls of one role.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// How many calls.
    pub calls: usize,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// The recorded cost of the priced calls.
    pub cost_usd: f64,
    /// Calls recorded without a price.
    pub unpriced: usize,
    /// The calls' latencies added up.
    pub latency_ms: u64,
}

impl Totals {
    /// The totals of `calls`.
    pub fn of(calls: &[Call<'_>]) -> Self {
        let mut totals = Self::default();
        for call in calls {
            totals.calls += 1;
            totals.input_tokens += call.response.input_tokens;
            totals.output_tokens += call.response.output_tokens;
            match call.response.cost_usd {
                Some(cost) => totals.cost_usd += cost,
                None => totals.unpriced += 1,
            }
            totals.latency_ms += call.latency_ms;
        }
        totals
    }

    /// The cost as shown: dollars, "unpriced", or dollars and how many calls had no price.
    pub fn cost(&self) -> String {
        match (self.calls - self.unpriced, self.unpriced) {
            (_, 0) => format!("${:.6}", self.cost_usd),
            (0, _) => "unpriced".into(),
            (_, n) => format!("${:.6} + {n} unpriced", self.cost_usd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(request: &'a CompletionRequest, response: &'a CompletionResult) -> Call<'a> {
        Call {
            request: Cow::Borrowed(request),
            response: Cow::Borrowed(response),
            latency_ms: 100,
            raw: None,
        }
    }

    #[test]
    fn pairs_by_position_and_says_what_has_no_partner() {
        let (a, b) = (
            CompletionRequest::new("m", "one", 10),
            CompletionRequest::new("m", "two", 10),
        );
        let r = CompletionResult::new("x", 1, 1);
        let pairs = paired(vec![call(&a, &r)], vec![call(&a, &r), call(&b, &r)]);
        assert_eq!(pairs.len(), 2);
        assert_eq!(
            request_changes(&pairs[0]),
            ["the same request, answered again"]
        );
        assert_eq!(
            request_changes(&pairs[1]),
            ["a new call (nothing accepted to compare with)"]
        );
        let pairs = paired(vec![call(&a, &r)], vec![call(&b, &r)]);
        assert_eq!(request_changes(&pairs[0]), [r#"prompt: -"one" +"two""#]);
    }

    #[test]
    fn totals_add_up_and_say_what_is_unpriced() {
        let request = CompletionRequest::new("m", "p", 10);
        let mut priced = CompletionResult::new("x", 10, 5);
        priced.cost_usd = Some(0.25);
        let unpriced = CompletionResult::new("y", 1, 2);
        let totals = Totals::of(&[call(&request, &priced), call(&request, &unpriced)]);
        assert_eq!(
            (
                totals.calls,
                totals.input_tokens,
                totals.output_tokens,
                totals.latency_ms
            ),
            (2, 11, 7, 200)
        );
        assert_eq!(totals.cost(), "$0.250000 + 1 unpriced");
        assert_eq!(Totals::of(&[call(&request, &unpriced)]).cost(), "unpriced");
        assert_eq!(Totals::of(&[call(&request, &priced)]).cost(), "$0.250000");
    }

    #[test]
    fn a_call_through_the_recording_endpoint_shows_its_body_s_diff_its_answer_and_tokens() {
        use prompt_tester::_cargo_prompt_tester_support::{
            RawBody, RawRequest, RawResponse, StreamEvent,
        };
        use serde_json::json;
        let entry = |content: &str, said: &str| Entry {
            key: content.into(),
            test: "t".into(),
            target: None,
            run: 1,
            role: CallRole::Subject,
            provider: "openai".into(),
            model: "gpt-4o-mini".into(),
            call: Exchange::Raw {
                request: RawRequest {
                    method: "POST".into(),
                    path: "/v1/chat/completions".into(),
                    query: Vec::new(),
                    body: json!({"messages": [{"content": content, "role": "user"}], "model": "gpt-4o-mini"}),
                    media: Vec::new(),
                },
                response: RawResponse {
                    status: 200,
                    content_type: "text/event-stream".into(),
                    body: RawBody::Events(vec![
                        StreamEvent {
                            event: None,
                            data: json!({"choices": [{"delta": {"content": said}}]}),
                        },
                        StreamEvent {
                            event: None,
                            data: json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}),
                        },
                    ]),
                },
            },
            latency_ms: 5,
            recorded_at: String::new(),
        };
        let (old, new) = ([entry("Hello", "Hi")], [entry("Hello there", "Hey")]);
        let pairs = paired(
            calls(&old, CallRole::Subject, &|_, _| Some(0.5)),
            calls(&new, CallRole::Subject, &|_, _| Some(0.5)),
        );
        assert_eq!(pairs.len(), 1);
        let changes = request_changes(&pairs[0]);
        assert!(
            changes.len() == 1 && changes[0].contains("Hello there"),
            "{changes:?}"
        );
        let (a, b) = (pairs[0].0.as_ref().unwrap(), pairs[0].1.as_ref().unwrap());
        assert_eq!(
            (answer_text(&a.response), answer_text(&b.response)),
            ("Hi".into(), "Hey".into())
        );
        assert_eq!(a.request.model, "gpt-4o-mini");
        let totals = Totals::of(std::slice::from_ref(a));
        assert_eq!((totals.input_tokens, totals.output_tokens), (9, 2));
    }

    #[test]
    fn an_answer_shows_its_tool_calls() {
        let mut response = CompletionResult::new("Let me look.", 1, 1);
        response
            .tool_calls
            .push(prompt_tester::completion::ToolCall {
                id: "1".into(),
                name: "weather".into(),
                arguments: serde_json::json!({"city": "Paris"}),
                thought_signature: None,
            });
        assert_eq!(
            answer_text(&response),
            "Let me look.\n[tool call weather {\"city\":\"Paris\"}]"
        );
    }
}
