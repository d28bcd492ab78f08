//! The sampling keys checked together: keys that contradict each other in one attribute, and an
//! adaptive test that can never pass, when the values are literals. The library checks the same at run
//! time, with the same bound and messages (`prompt_tester_keys`), for values given as expressions.

use std::collections::BTreeMap;

use prompt_tester_keys::Key;
use prompt_tester_keys::sampling::{
    Conflict, DEFAULT_CONFIDENCE, DEFAULT_INDIFFERENCE, DEFAULT_MAX_RUNS, TooFewRuns,
    indifference_limit, shown,
};
use prompt_tester_keys::sprt::passes_needed;

use crate::checks::{Value, value_tokens};
use crate::errors::Errors;

/// Checks the sampling keys among the attribute's checked `values`.
pub fn check(values: &BTreeMap<Key, Value>, errors: &mut Errors) {
    let at = |key: Key| values.get(&key).map(value_tokens);
    // Any `early_stop` beside `pass_rate` is reported, `early_stop = false` too: it says nothing there.
    let conflict = Conflict::among(|key| values.contains_key(&key));
    if let Some(conflict) = conflict {
        errors.at(at(conflict.key()), conflict);
    }
    if values.contains_key(&Key::PassRate) && !matches!(conflict, Some(Conflict::Both(_))) {
        check_adaptive(values, errors);
    }
}

/// Literal adaptive values checked together: the indifference leaves both hypotheses inside (0, 1),
/// and `max_runs` allows the passes a passing test needs.
fn check_adaptive(values: &BTreeMap<Key, Value>, errors: &mut Errors) {
    let at = |key: Key| values.get(&key).map(value_tokens);
    // The literal's value; `None` for an expression, known only at run time.
    let literal = |key: Key| match values.get(&key) {
        Some(Value::Lit(tokens)) => syn::parse2::<syn::LitFloat>(tokens.clone())
            .ok()
            .and_then(|l| l.base10_parse::<f64>().ok())
            .or_else(|| {
                syn::parse2::<syn::LitInt>(tokens.clone())
                    .ok()
                    .and_then(|l| l.base10_parse::<f64>().ok())
            }),
        _ => None,
    };
    // A key's literal, its default when unset, or `None` for an expression.
    let or_default = |key: Key, default: f64| match values.get(&key) {
        None => Some(default),
        Some(_) => literal(key),
    };
    let Some(pass_rate) = literal(Key::PassRate) else {
        return;
    };
    let Some(indifference) = or_default(Key::Indifference, DEFAULT_INDIFFERENCE) else {
        return;
    };
    let Some(confidence) = or_default(Key::Confidence, DEFAULT_CONFIDENCE) else {
        return;
    };
    let limit = indifference_limit(pass_rate);
    if indifference >= limit {
        let limit = shown(limit);
        errors.at(
            at(Key::Indifference).or(at(Key::PassRate)),
            format!(
                "`indifference` is {indifference}; with `pass_rate = {pass_rate}` it must be below {limit} \
                 (pass_rate ± indifference must lie strictly between 0 and 1)"
            ),
        );
        return;
    }
    let Some(max_runs) = or_default(Key::MaxRuns, f64::from(DEFAULT_MAX_RUNS)) else {
        return;
    };
    // A checked `max_runs` literal is a u32.
    let max_runs = max_runs as u64;
    let needed = passes_needed(pass_rate, indifference, confidence);
    if max_runs < needed {
        let too_few = TooFewRuns {
            max_runs,
            needed,
            pass_rate,
            indifference,
            confidence,
        };
        errors.at(at(Key::MaxRuns).or(at(Key::PassRate)), too_few);
    }
}
