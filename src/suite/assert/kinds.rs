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
    /// The model called the tool, with arguments containing these (any arguments when `None`).
    ToolCalled {
        /// The tool's name.
        name: String,
        /// A JSON subset the arguments of one call must contain.
        arguments: Option<serde_json::Value>,
    },
    /// The model called none of these tools.
    NotToolCalled(Vec<String>),
    /// The judge answers yes to the requirement.
    Judge(String),
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
            Check::Judge(_) => "judge",
            Check::Similar { .. } => "similar",
            Check::Custom(c, _) => c.name,
        }
    }

    /// The call besides the subject's that checking it makes: the judge's, or an embeddings call.
    pub fn call(&self) -> Option<crate::role::CallRole> {
        use crate::role::CallRole;
        match self {
            Check::Judge(_) => Some(CallRole::Judge),
            Check::Similar { .. } => Some(CallRole::Embedding),
            _ => None,
        }
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
