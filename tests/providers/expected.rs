//! What each recorded real provider response must parse to (`../shared/fixtures/provider-recordings/`),
//! kept as data in `expected.toml` beside this file.

use serde::Deserialize;
use std::collections::BTreeMap;

/// What a recorded success must parse to. `model` is the id the call was priced under (the
/// request's model, or the URL's for Gemini).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    pub(crate) model: String,
    #[serde(default)]
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) text_is_prefix: bool,
    /// (input, output, cached input, cache creation, thoughts).
    #[serde(default)]
    pub(crate) tokens: (u64, u64, u64, u64, u64),
    pub(crate) stop: Option<String>,
    #[serde(default)]
    pub(crate) safety: bool,
    pub(crate) model_used: Option<String>,
    pub(crate) model_version: Option<String>,
    pub(crate) request_id: Option<String>,
    /// (id, name, JSON arguments).
    #[serde(default)]
    pub(crate) tools: Vec<(String, String, String)>,
    /// `None`: the model is not priced.
    pub(crate) cost: Option<f64>,
}

/// What a recorded error must read as.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectError {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// How the message starts.
    pub(crate) message: String,
    pub(crate) request_id: Option<String>,
}

/// Every recording's expectations, by case (`folder/name`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expected {
    pub(crate) success: BTreeMap<String, Expect>,
    pub(crate) error: BTreeMap<String, ExpectError>,
}

pub(crate) fn expected() -> Expected {
    toml::from_str(include_str!("expected.toml"))
        .unwrap_or_else(|e| panic!("tests/providers/expected.toml: {e}"))
}
