//! Custom assertions registered from Rust, and the names a suite may use.

use crate::run::PromptRun;

/// A custom assertion, registered from Rust with [`register_assertion!`](crate::register_assertion)
/// and used in a suite as `{ <name> = <value> }`.
pub struct CustomAssertion {
    /// The key that names it in a suite.
    pub name: &'static str,
    /// Checks a run against the value written in the suite; `Err` says why it failed.
    pub check: fn(&PromptRun, &toml::Value) -> Result<(), String>,
}

inventory::collect!(CustomAssertion);

/// Registers a custom suite assertion: `register_assertion!("name", check)` where `check` is a
/// `fn(&PromptRun, &toml::Value) -> Result<(), String>` (the value is what the suite wrote after the name).
///
/// ```no_run
/// use prompt_tester::{PromptRun, toml};
///
/// // In a suite: assert = [{ min_sentences = 2 }]
/// fn min_sentences(run: &PromptRun, value: &toml::Value) -> Result<(), String> {
///     let want = value.as_integer().ok_or("min_sentences needs a whole number")? as usize;
///     let seen = run.output.matches(['.', '!', '?']).count();
///     if seen >= want { Ok(()) } else { Err(format!("expected at least {want} sentences, saw {seen}")) }
/// }
/// prompt_tester::register_assertion!("min_sentences", min_sentences);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! register_assertion {
    ($name:expr, $check:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::__private::CustomAssertion { name: $name, check: $check }
        }
    };
}

/// The built-in assertion kinds, in documentation order.
pub const BUILT_IN: [&str; 21] = [
    "contains",
    "not_contains",
    "icontains",
    "regex",
    "equals",
    "starts_with",
    "ends_with",
    "is_json",
    "json_schema",
    "max_latency",
    "max_cost",
    "max_tokens",
    "max_words",
    "tool_called",
    "not_tool_called",
    "tool_sequence",
    "max_model_calls",
    "max_repeats",
    "judge",
    "judge_trajectory",
    "similar",
];

/// The registered custom assertion called `name`. A name used twice, or a built-in name, is reported
/// by [`registry_conflicts`]; lookups take the first.
pub(crate) fn custom(name: &str) -> Option<&'static CustomAssertion> {
    if BUILT_IN.contains(&name) || name == "weight" {
        return None;
    }
    inventory::iter::<CustomAssertion>
        .into_iter()
        .find(|c| c.name == name)
}

/// Names of registered custom assertions, sorted.
pub fn custom_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = inventory::iter::<CustomAssertion>
        .into_iter()
        .map(|c| c.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Custom assertions that cannot be used: a built-in name, `weight`, or registered twice.
pub fn registry_conflicts() -> Vec<String> {
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for c in inventory::iter::<CustomAssertion> {
        *seen.entry(c.name).or_default() += 1;
    }
    seen.into_iter()
        .filter_map(|(name, n)| {
            if BUILT_IN.contains(&name) || name == "weight" {
                Some(format!("custom assertion `{name}` has the name of a built-in key: rename it"))
            } else if n > 1 {
                Some(format!("custom assertion `{name}` is registered {n} times: keep one register_assertion!"))
            } else {
                None
            }
        })
        .collect()
}

/// Every kind a suite may name, for messages: the built-in ones, then the custom ones.
pub(crate) fn valid_kinds() -> String {
    let custom = custom_names();
    let mut list = BUILT_IN.join(", ");
    if !custom.is_empty() {
        list.push_str(&format!("; custom: {}", custom.join(", ")));
    }
    list
}
