//! What an assertion checks, and where it is written.

#[cfg(feature = "json-schema")]
use std::sync::Arc;

use regex::Regex;

use super::registry::CustomAssertion;

/// What one assertion checks.
#[derive(Clone)]
pub enum Check {
    /// Every string appears in the output.
    Contains(Vec<String>),
    /// No string appears in the output.
    NotContains(Vec<String>),
    /// Every string appears, ignoring case.
    IContains(Vec<String>),
    /// Every pattern matches (multi-line mode: `^` and `$` match at line ends).
    Regex(Vec<Regex>),
    /// The stripped output equals the text.
    Equals(String),
    /// The stripped output starts with the text.
    StartsWith(String),
    /// The stripped output ends with the text.
    EndsWith(String),
    /// The stripped output is (`true`) or is not (`false`) JSON.
    IsJson(bool),
    /// The stripped output is JSON valid under the schema.
    #[cfg(feature = "json-schema")]
    JsonSchema(Arc<jsonschema::Validator>),
    /// Latency in seconds at most.
    MaxLatency(f64),
    /// Cost in USD at most (passes when the price is unknown).
    MaxCost(f64),
    /// Completion tokens at most.
    MaxTokens(u64),
    /// Words (whitespace-separated) at most.
    MaxWords(u64),
    /// The model requested the tool, with arguments containing these (any arguments when `None`),
    /// from `min` to `max` times over the sample's trajectory.
    ToolCalled {
        /// The tool's name.
        name: String,
        /// A JSON subset the arguments of a counted call must contain.
        arguments: Option<serde_json::Value>,
        /// The fewest matching calls that pass (1 unless written).
        min: usize,
        /// The most matching calls that pass (no limit unless written).
        max: Option<usize>,
    },
    /// The model requested none of these tools.
    NotToolCalled(Vec<String>),
    /// The tools the model requested hold these in the order's sense.
    ToolSequence {
        /// The tools' names, in order.
        tools: Vec<String>,
        /// How the requested tools are compared with them.
        order: crate::trajectory::ToolOrder,
    },
    /// The sample made at most this many model calls (steps).
    MaxModelCalls(usize),
    /// The model requested the same tool with the same arguments at most this many times in a row.
    MaxRepeats(usize),
    /// The judge answers yes to the requirement.
    Judge(String),
    /// The judge, also sent the media the model was sent (`judge_inputs = true`), answers yes.
    JudgeWithInputs(String),
    /// The judge, reading the sample's trajectory, answers yes to the requirement.
    JudgeTrajectory(String),
    /// The cosine similarity of the embeddings of the output and the reference is at least the
    /// threshold.
    Similar {
        /// The reference text.
        reference: String,
        /// The least similarity that passes.
        threshold: f64,
    },
    /// A registered custom assertion with its value.
    Custom(&'static CustomAssertion, toml::Value),
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl Check {
    /// The key that names this kind in a suite.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Contains(_) => "contains",
            Check::NotContains(_) => "not_contains",
            Check::IContains(_) => "icontains",
            Check::Regex(_) => "regex",
            Check::Equals(_) => "equals",
            Check::StartsWith(_) => "starts_with",
            Check::EndsWith(_) => "ends_with",
            Check::IsJson(_) => "is_json",
            #[cfg(feature = "json-schema")]
            Check::JsonSchema(_) => "json_schema",
            Check::MaxLatency(_) => "max_latency",
            Check::MaxCost(_) => "max_cost",
            Check::MaxTokens(_) => "max_tokens",
            Check::MaxWords(_) => "max_words",
            Check::ToolCalled { .. } => "tool_called",
            Check::NotToolCalled(_) => "not_tool_called",
            Check::ToolSequence { .. } => "tool_sequence",
            Check::MaxModelCalls(_) => "max_model_calls",
            Check::MaxRepeats(_) => "max_repeats",
            Check::Judge(_) | Check::JudgeWithInputs(_) => "judge",
            Check::JudgeTrajectory(_) => "judge_trajectory",
            Check::Similar { .. } => "similar",
            Check::Custom(c, _) => c.name,
        }
    }

    /// The call besides the subject's that checking it makes: the judge's, or an embeddings call.
    pub fn call(&self) -> Option<crate::role::CallRole> {
        use crate::role::CallRole;
        match self {
            Check::Judge(_) | Check::JudgeWithInputs(_) | Check::JudgeTrajectory(_) => {
                Some(CallRole::Judge)
            }
            Check::Similar { .. } => Some(CallRole::Embedding),
            _ => None,
        }
    }
}

impl Check {
    /// Whether it reads the sample's whole trajectory (every turn's calls) rather than one reply.
    pub fn reads_trajectory(&self) -> bool {
        matches!(
            self,
            Check::ToolCalled { .. }
                | Check::NotToolCalled(_)
                | Check::ToolSequence { .. }
                | Check::MaxModelCalls(_)
                | Check::MaxRepeats(_)
                | Check::JudgeTrajectory(_)
        )
    }

    /// Whether it is about the tools the model requested, so its case should declare some.
    pub fn asks_for_tools(&self) -> bool {
        matches!(
            self,
            Check::ToolCalled { .. } | Check::ToolSequence { .. } | Check::MaxRepeats(_)
        )
    }
}

/// One assertion of a case.
#[derive(Debug, Clone)]
pub struct Assertion {
    /// What it checks.
    pub check: Check,
    /// Its weight in the score (1 by default).
    pub weight: f64,
    /// The reply it checks (`turn = N`), when not the last.
    pub turn: Option<TurnAt>,
    /// `file:line` where it is written.
    pub at: String,
}

/// `turn = N` on an assertion: the reply of the N-th of a case's `turns` it checks, and where it is
/// written.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnAt {
    /// The turn, counted from 1.
    pub n: u32,
    /// Its key path (`cases[0].assert[1].turn`).
    pub key: String,
    /// Where its value is in the suite file; `None` when read from a template's own text or a row.
    pub span: Option<std::ops::Range<usize>>,
}
