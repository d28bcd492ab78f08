//! List prices (USD per million tokens) and the cost of a call.

use serde::{Deserialize, Serialize};

use crate::completion::CompletionResult;

/// The price of one model, USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Uncached input.
    pub input_mtok: f64,
    /// Output (thinking included).
    pub output_mtok: f64,
    /// Cache reads (defaults to the input price).
    #[serde(default)]
    pub cache_read_mtok: Option<f64>,
    /// Cache writes (defaults to the input price).
    #[serde(default)]
    pub cache_write_mtok: Option<f64>,
    /// When the price was checked.
    #[serde(default)]
    pub checked: Option<String>,
}

/// The cost of `result` at `price`.
pub fn cost(result: &CompletionResult, price: &Price) -> f64 {
    let cached = result.cached_input_tokens as f64;
    let written = result.cache_creation_tokens as f64;
    let uncached = (result.input_tokens as f64 - cached - written).max(0.0);
    (uncached * price.input_mtok
        + cached * price.cache_read_mtok.unwrap_or(price.input_mtok)
        + written * price.cache_write_mtok.unwrap_or(price.input_mtok)
        + result.output_tokens as f64 * price.output_mtok)
        / 1_000_000.0
}

/// The list price of `model` (dated ids map to their family), overrides first.
pub fn price_for(model: &str, overrides: &std::collections::BTreeMap<String, Price>) -> Option<Price> {
    overrides.get(model).cloned()
}
