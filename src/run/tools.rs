//! What a sample's model asked of its tools: [`PromptRun::called`] and the rest read the run's own
//! tool calls; the expectations ([`PromptRun::expect_tool_call`], [`PromptRun::expect_tool_sequence`],
//! ...) read the sample's whole trajectory (`crate::trajectory`), the same for an application test's.

use std::ops::{Bound, RangeBounds};

use serde_json::Value;

use super::{PromptRun, RunError};
use crate::completion::ToolCall;
use crate::tools::{json_mismatch, json_subset};
use crate::trajectory::{ToolOrder, Trajectory, TrajectoryProblem};

impl PromptRun {
    /// Whether the model called tool `name` (in any turn of this run).
    pub fn called(&self, name: &str) -> bool {
        self.tool_calls.iter().any(|c| c.name == name)
    }

    /// The first call of tool `name` in this run.
    pub fn tool_call(&self, name: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|c| c.name == name)
    }

    /// Every call of tool `name` in this run, in order.
    pub fn tool_calls_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a ToolCall> + 'a {
        self.tool_calls.iter().filter(move |c| c.name == name)
    }

    /// The sample's model calls so far, in causal order: this run's, its follow-ups', and the calls
    /// the body made through [`PromptRun::base_url`].
    pub fn trajectory(&self) -> Trajectory {
        self.scope.state().trajectory()
    }

    /// The first requested call of `name` whose arguments contain `arguments` (see
    /// [`crate::json_subset`]); the error prints the trajectory.
    /// `run.expect_tool_call("get_weather", json!({"city": "Paris"}))?`
    pub fn expect_tool_call(&self, name: &str, arguments: Value) -> Result<ToolCall, RunError> {
        Expect(&self.trajectory()).tool_call(name, &arguments)
    }

    /// Fails when the model requested `name`, printing the trajectory.
    pub fn expect_no_tool_call(&self, name: &str) -> Result<(), RunError> {
        Expect(&self.trajectory())
            .tool_calls(name, None, 0..=0)
            .map(drop)
    }

    /// How many times the model requested `name`, failing unless it is within `times`
    /// (`1..=2`, `2..`, `..=3`).
    pub fn expect_tool_calls(
        &self,
        name: &str,
        times: impl RangeBounds<usize>,
    ) -> Result<usize, RunError> {
        Expect(&self.trajectory()).tool_calls(name, None, times)
    }

    /// Fails unless the tools requested hold `tools` as `order` says ([`ToolOrder`]).
    pub fn expect_tool_sequence(&self, tools: &[&str], order: ToolOrder) -> Result<(), RunError> {
        Expect(&self.trajectory()).tool_sequence(tools, order)
    }

    /// How many model calls (steps) the sample made, failing unless it is within `times` (`..=5`).
    pub fn expect_model_calls(&self, times: impl RangeBounds<usize>) -> Result<usize, RunError> {
        Expect(&self.trajectory()).model_calls(times)
    }

    /// Fails when the model requested the same tool with the same arguments more than `k` times in a
    /// row (an agent stuck in a loop).
    pub fn expect_no_loop(&self, k: usize) -> Result<(), RunError> {
        Expect(&self.trajectory()).no_loop(k)
    }
}

/// The expectations on a trajectory, for [`PromptRun`] and application tests alike; each
/// failure prints the whole trajectory.
pub(crate) struct Expect<'a>(pub &'a Trajectory);

impl Expect<'_> {
    fn fail(&self, what: String) -> RunError {
        RunError::Trajectory(TrajectoryProblem {
            what,
            steps: self.0.steps(),
        })
    }

    pub(crate) fn tool_call(&self, name: &str, arguments: &Value) -> Result<ToolCall, RunError> {
        let calls = self.0.tool_calls();
        let named: Vec<&ToolCall> = calls.iter().filter(|c| c.name == name).collect();
        if let Some(call) = named.iter().find(|c| json_subset(arguments, &c.arguments)) {
            return Ok((*call).clone());
        }
        if named.is_empty() {
            return Err(self.fail(format!("the model did not request `{name}`")));
        }
        let why: Vec<String> = named
            .iter()
            .map(|c| json_mismatch(arguments, &c.arguments).unwrap_or_default())
            .collect();
        Err(self.fail(format!(
            "the model requested `{name}` but never with arguments containing {arguments}: {}",
            why.join("; ")
        )))
    }

    /// How many times the model requested `name` with arguments containing `arguments` (any, when
    /// `None`), failing unless it is within `times`.
    pub(crate) fn tool_calls(
        &self,
        name: &str,
        arguments: Option<&Value>,
        times: impl RangeBounds<usize>,
    ) -> Result<usize, RunError> {
        let calls = self.0.tool_calls();
        let named: Vec<&ToolCall> = calls.iter().filter(|c| c.name == name).collect();
        let n = named
            .iter()
            .filter(|c| arguments.is_none_or(|a| json_subset(a, &c.arguments)))
            .count();
        if times.contains(&n) {
            return Ok(n);
        }
        let with = arguments
            .map(|a| format!(" with arguments containing {a}"))
            .unwrap_or_default();
        // Too few matching calls: say why each call of the tool did not match.
        let why: Vec<String> = arguments
            .filter(|_| n < bounds(&times).0)
            .map(|a| {
                named
                    .iter()
                    .filter_map(|c| json_mismatch(a, &c.arguments))
                    .collect()
            })
            .unwrap_or_default();
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join("; "))
        };
        Err(self.fail(format!(
            "the model requested `{name}`{with} {n} time(s), expected {}{why}",
            times_text(&times)
        )))
    }

    pub(crate) fn tool_sequence(&self, tools: &[&str], order: ToolOrder) -> Result<(), RunError> {
        let calls = self.0.tool_calls();
        let requested: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        if order.holds(tools, &requested) {
            return Ok(());
        }
        Err(self.fail(format!(
            "expected the tools [{}] {}; the model requested [{}]",
            tools.join(", "),
            order.describe(),
            requested.join(", ")
        )))
    }

    pub(crate) fn model_calls(&self, times: impl RangeBounds<usize>) -> Result<usize, RunError> {
        let n = self.0.calls().len();
        if times.contains(&n) {
            return Ok(n);
        }
        Err(self.fail(format!(
            "the sample made {n} model call(s), expected {}",
            times_text(&times)
        )))
    }

    pub(crate) fn no_loop(&self, k: usize) -> Result<(), RunError> {
        let calls = self.0.tool_calls();
        let mut run = 0;
        for (i, call) in calls.iter().enumerate() {
            let same =
                i > 0 && calls[i - 1].name == call.name && calls[i - 1].arguments == call.arguments;
            run = if same { run + 1 } else { 1 };
            if run > k {
                let longest = calls[i..]
                    .iter()
                    .take_while(|c| c.name == call.name && c.arguments == call.arguments)
                    .count()
                    + run
                    - 1;
                return Err(self.fail(format!(
                    "the model requested {}({}) {longest} times in a row, at most {k} allowed: \
                     a loop",
                    call.name, call.arguments
                )));
            }
        }
        Ok(())
    }
}

/// A count's range as its least and its most (none: no most).
fn bounds(times: &impl RangeBounds<usize>) -> (usize, Option<usize>) {
    let low = match times.start_bound() {
        Bound::Included(n) => *n,
        Bound::Excluded(n) => n + 1,
        Bound::Unbounded => 0,
    };
    let high = match times.end_bound() {
        Bound::Included(n) => Some(*n),
        Bound::Excluded(n) => Some(n.saturating_sub(1)),
        Bound::Unbounded => None,
    };
    (low, high)
}

/// A count's range as a failure says it: `never`, `exactly 2`, `at most 3`, `from 1 to 2`, `at least 1`.
fn times_text(times: &impl RangeBounds<usize>) -> String {
    match bounds(times) {
        (0, Some(0)) => "never".to_string(),
        (low, Some(high)) if low == high => format!("exactly {low}"),
        (0, Some(high)) => format!("at most {high}"),
        (low, Some(high)) => format!("from {low} to {high}"),
        (low, None) => format!("at least {low}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{ModelCall, NotedCall};
    use serde_json::json;

    fn trajectory(requested: &[(&str, Value)]) -> Trajectory {
        let noted: Vec<NotedCall> = requested
            .iter()
            .enumerate()
            .map(|(i, (name, arguments))| NotedCall {
                call: ModelCall {
                    provider: "p".into(),
                    model: "m".into(),
                    requested: vec![ToolCall {
                        id: format!("c{i}"),
                        name: (*name).into(),
                        arguments: arguments.clone(),
                        thought_signature: None,
                    }],
                    sent_back: Vec::new(),
                    answer: String::new(),
                    input_tokens: 0,
                    output_tokens: 0,
                    latency_ms: 0,
                    replayed: false,
                },
                conversation: (0..=i).map(|n| n.to_string()).collect(),
            })
            .collect();
        Trajectory::of(&noted)
    }

    #[test]
    fn each_expectation_passes_and_fails_printing_the_trajectory() {
        let t = trajectory(&[
            ("search", json!({"q": "a"})),
            ("search", json!({"q": "a"})),
            ("lookup", json!({"id": 42, "full": true})),
        ]);
        let e = Expect(&t);
        assert_eq!(e.tool_call("lookup", &json!({"id": 42})).unwrap().id, "c2");
        let missing = e
            .tool_call("lookup", &json!({"id": 7}))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("never with arguments containing {\"id\":7}"),
            "{missing}"
        );
        assert!(
            missing.contains("3. p/m requested lookup({\"full\":true,\"id\":42})")
                || missing.contains("3. p/m requested lookup({\"id\":42,\"full\":true})"),
            "{missing}"
        );
        assert_eq!(e.tool_calls("search", None, 1..=2).unwrap(), 2);
        let too_many = e.tool_calls("search", None, ..=1).unwrap_err().to_string();
        assert!(
            too_many.starts_with("the model requested `search` 2 time(s), expected at most 1"),
            "{too_many}"
        );
        assert!(e.tool_calls("reply", None, 0..=0).is_ok());
        // With arguments, only the calls whose arguments contain them count.
        let a = json!({"q": "a"});
        assert_eq!(e.tool_calls("search", Some(&a), 2..=2).unwrap(), 2);
        let b = json!({"q": "b"});
        let none = e
            .tool_calls("search", Some(&b), 1..)
            .unwrap_err()
            .to_string();
        assert!(
            none.starts_with(
                "the model requested `search` with arguments containing {\"q\":\"b\"} 0 time(s), \
                 expected at least 1 ($.q is \"a\", expected \"b\"; $.q is \"a\", expected \"b\")"
            ),
            "{none}"
        );
        assert!(
            e.tool_sequence(&["search", "lookup"], ToolOrder::InOrder)
                .is_ok()
        );
        let exact = e
            .tool_sequence(&["search", "lookup"], ToolOrder::Exact)
            .unwrap_err()
            .to_string();
        assert!(
            exact.contains("the model requested [search, search, lookup]"),
            "{exact}"
        );
        assert_eq!(e.model_calls(..=3).unwrap(), 3);
        assert!(
            e.model_calls(..=2)
                .unwrap_err()
                .to_string()
                .contains("expected at most 2")
        );
        assert!(e.no_loop(2).is_ok());
        let looped = e.no_loop(1).unwrap_err().to_string();
        assert!(
            looped.contains("search({\"q\":\"a\"}) 2 times in a row, at most 1 allowed"),
            "{looped}"
        );
    }

    #[test]
    fn counts_read_as_words() {
        assert_eq!(times_text(&(2..=2)), "exactly 2");
        assert_eq!(times_text(&(0..=0)), "never");
        assert_eq!(times_text(&(..=3)), "at most 3");
        assert_eq!(times_text(&(1..3)), "from 1 to 2");
        assert_eq!(times_text(&(1..)), "at least 1");
    }
}
